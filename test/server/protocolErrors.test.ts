/**
 * Requests the HTTP layer refuses before any route (api/server/protocolErrors.ts), sent as raw bytes to the
 * API process as operators run it (api/server/main.ts): each gets the JSON envelope with CORS, a request id
 * and `connection: close`, the server closes the connection after it, and /api/metrics counts it by reason.
 * Before this, Node answered most of them with a bare status line, and CONNECT with nothing at all.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, startApiChild } from "../support/apiProcess";
import { rawExchange } from "../support/rawHttp";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

let d: ReadsDevnet;
let dir: string;
let base: string;
let stop: () => void;

beforeAll(async () => {
  d = await startReadsDevnet();
  dir = mkdtempSync(path.join(tmpdir(), "protocol-"));
  const api = await startApiChild(childEnv(d, dir));
  base = api.base;
  stop = () => api.child.kill("SIGTERM");
}, 120_000);
afterAll(async () => {
  stop?.();
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const head = (answer: string) => answer.slice(0, answer.indexOf("\r\n\r\n")).toLowerCase();
const envelopeOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));

async function protocolErrors(): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/api/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const [, reason, n] of text.matchAll(/^api_http_protocol_errors_total\{reason="([a-z_]+)"\} (\d+)$/gm))
    counts[reason!] = Number(n);
  return counts;
}

const REFUSED = [
  ["HTTP/1.1 without Host", "GET /health HTTP/1.1\r\n\r\n", 400, "BAD_REQUEST", "missing_host"],
  ["a Host with a space", "GET /health HTTP/1.1\r\nhost: a b\r\n\r\n", 400, "BAD_REQUEST", "bad_host"],
  ["a Host with a path", "GET /health HTTP/1.1\r\nhost: exa/mple\r\n\r\n", 400, "BAD_REQUEST", "bad_host"],
  ["two Hosts", "GET /health HTTP/1.1\r\nhost: x\r\nHost: y\r\n\r\n", 400, "BAD_REQUEST", "duplicate_host"],
  ["OPTIONS *", "OPTIONS * HTTP/1.1\r\nhost: x\r\n\r\n", 400, "BAD_REQUEST", "asterisk_target"],
  ["a bad absolute URL", "GET http://a:99999/ HTTP/1.1\r\nhost: x\r\n\r\n", 400, "BAD_REQUEST", "bad_target"],
  ["Expect: foo", "GET /health HTTP/1.1\r\nhost: x\r\nexpect: foo\r\n\r\n", 417, "EXPECTATION_FAILED", "expectation"],
  [
    "CONNECT",
    "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n",
    405,
    "METHOD_NOT_ALLOWED",
    "connect",
  ],
  ["a bad request line", "GARBAGE\r\n\r\n", 400, "BAD_REQUEST", "malformed"],
  ["an authority target on GET", "GET example.com:443 HTTP/1.1\r\nhost: x\r\n\r\n", 400, "BAD_REQUEST", "malformed"],
  ["an unknown method", "FROB / HTTP/1.1\r\nhost: x\r\n\r\n", 400, "BAD_REQUEST", "malformed"],
  [
    "headers over 16 KiB",
    `GET /health HTTP/1.1\r\nhost: x\r\n${"x-pad: aaaaaaaaaaaaaaaaaaaa\r\n".repeat(800)}\r\n`,
    431,
    "HEADERS_TOO_LARGE",
    "header_overflow",
  ],
] as const;

describe("requests refused before any route", () => {
  it.each(REFUSED)(
    "%s: the envelope with CORS, then the connection closes; counted",
    async (_n, bytes, status, code, reason) => {
      const before = (await protocolErrors())[reason] ?? 0;
      const t0 = performance.now();
      const answer = await rawExchange(base, bytes);
      // rawExchange resolves when the server closes the socket (or after 5 s): it closed it at once.
      expect(performance.now() - t0).toBeLessThan(2_000);
      expect(answer.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
      const h = head(answer);
      expect(h).toContain("content-type: application/json; charset=utf-8");
      expect(h).toContain("access-control-allow-origin: *");
      expect(h).toContain("connection: close");
      expect(h).toMatch(/x-request-id: [0-9a-f-]{36}/);
      if (reason === "connect") expect(h).toContain("allow: get, head, options");
      expect(envelopeOf(answer)).toMatchObject({ ok: false, error: code, message: expect.any(String) });
      expect((await protocolErrors())[reason]).toBe(before + 1);
    },
  );

  it("what HTTP allows is still served: HTTP/1.0 without Host, an absolute URL, Expect: 100-continue", async () => {
    for (const bytes of [
      "GET /health HTTP/1.0\r\n\r\n",
      "GET http://x/health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
      "GET /health HTTP/1.1\r\nhost: 127.0.0.1:1\r\nexpect: 100-continue\r\nconnection: close\r\n\r\n",
    ]) {
      const answer = await rawExchange(base, bytes);
      expect([bytes, answer]).toEqual([
        bytes,
        expect.stringMatching(/HTTP\/1\.1 200 OK[\s\S]*\{"ok":true,"status":"up","version":"[^"]+"\}$/),
      ]);
    }
  });
});
