/**
 * One attempt of one delivery: a POST of the payload with the Standard Webhooks headers, over node:http(s) so the
 * connection resolves its host through the target check (api/webhooks/target.ts checkedLookup). Bounded in time
 * (`timeoutMs`, the whole exchange) and in what is read back (the status; 64 KiB of body at most, then dropped).
 * Redirects are not followed: a 3xx is a failure, as any non-2xx.
 */
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { allowedAddress, checkedLookup, type PrivateTargets } from "./target";

export type AttemptResult = { ok: true; status: number } | { ok: false; error: string };

const MAX_RESPONSE_BYTES = 64 * 1024;

export function postWebhook(options: {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allow: PrivateTargets;
}): Promise<AttemptResult> {
  const url = new URL(options.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host) && !allowedAddress(host, options.allow)) {
    return Promise.resolve({ ok: false, error: `target address ${host} is not public` });
  }
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = client.request(
      url,
      {
        method: "POST",
        headers: {
          ...options.headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(options.body),
          "user-agent": "lock-index-webhooks/1",
        },
        lookup: checkedLookup(options.allow) as never,
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const finish = () =>
          done(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, error: `HTTP ${status}` });
        res.on("end", finish);
        res.on("close", finish);
        res.on("error", finish);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, error: `no answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    req.on("error", (error: NodeJS.ErrnoException) => done({ ok: false, error: error.code ?? error.message }));
    req.end(options.body);
  });
}
