/**
 * One attempt of one delivery: a POST of the payload with the Standard Webhooks headers, over node:http(s) so the
 * connection resolves its host through the target check (api/webhooks/target.ts checkedLookup). Bounded in time
 * (`timeoutMs`: connect, send, the answer's status). The status ends the attempt, as the docs promise: the answer's
 * body is never read (the connection is closed), so a receiver that sends its 2xx and keeps the body open has still
 * acknowledged. Redirects are not followed: a 3xx is a failure, as any non-2xx.
 */
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { allowedAddress, checkedLookup, type PrivateTargets } from "./target";

export type AttemptResult = { ok: true; status: number } | { ok: false; error: string };

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
        done(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, error: `HTTP ${status}` });
        // Nothing of the body is wanted: closing the connection (never reused: no agent) frees it at once.
        res.destroy();
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
