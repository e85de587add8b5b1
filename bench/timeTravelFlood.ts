/**
 * A time-travel flood, as a process of its own: ADDRESSES clients (127.0.1.1, 127.0.1.2, … from the ADDRESS_FROM-th,
 * default the first — loopback addresses are all local on Linux, and the API sees each as a client of its own), each
 * on one keep-alive connection, asking back to back for PATHS in turn (a JSON array of paths whose `{block}` is
 * replaced; default the board `/api/index/v1/leaderboards/ve?block={block}&limit=10` and the stats
 * `/api/index/v1/stats?block={block}`) at blocks drawn from BLOCKS_FILE (a JSON array of block numbers with events,
 * so their times are in the index), for DURATION_MS. Raw sockets; an answer is read to its end and only its status line and a few headers are looked at.
 * Prints `{"requests":N,"byStatus":{…},"byPath":{i:{status:n}},"retryAfter":{status:n},"reasons":{…},"maxMs":…,"errors":n}`: every refusal should carry
 * Retry-After, and none should take longer than a wait deadline (a refusal, not a timeout). Used by
 * bench/abuse-time-travel.ts and test/index/timeTravelFlood.test.ts.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";

const base = new URL(process.env.BASE!);
const addresses = Number(process.env.ADDRESSES ?? 400);
const durationMs = Number(process.env.DURATION_MS ?? 5_000);
const blocks = JSON.parse(readFileSync(process.env.BLOCKS_FILE!, "utf8")) as string[];
const paths = JSON.parse(
  process.env.PATHS ?? '["/api/index/v1/leaderboards/ve?block={block}&limit=10","/api/index/v1/stats?block={block}"]',
) as string[];
const from = Number(process.env.ADDRESS_FROM ?? 0);

const floodAddress = (i: number) => `127.0.${1 + Math.floor((from + i) / 250)}.${1 + ((from + i) % 250)}`;
const pick = () => blocks[Math.floor(Math.random() * blocks.length)]!;
let turn = 0;
/** The next request, and which of PATHS it is. */
const nextRequest = () => {
  const which = turn++ % paths.length;
  const path = paths[which]!.replace("{block}", pick());
  return { which, text: `GET ${path} HTTP/1.1\r\nhost: ${base.host}\r\n\r\n` };
};

const byStatus: Record<string, number> = {};
/** Statuses by the index of the path in PATHS. */
const byPath: Record<string, Record<string, number>> = {};
const retryAfter: Record<string, number> = {};
/** Refusals by status and the envelope's `detail.reason` (else its `error`). */
const reasons: Record<string, number> = {};
let requests = 0;
let errors = 0;
let maxMs = 0;
const until = performance.now() + durationMs;

/** One connection: a request, its whole answer read (Content-Length or chunked), the next. */
function connection(localAddress: string): Promise<void> {
  return new Promise((resolve) => {
    let buffer = Buffer.alloc(0);
    let sentAt = 0;
    let sent = 0;
    const send = () => {
      sentAt = performance.now();
      const next = nextRequest();
      sent = next.which;
      s.write(next.text);
    };
    const s = connect({ host: base.hostname, port: Number(base.port), localAddress }, send);
    s.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString("latin1");
        const length = /\r\ncontent-length: *(\d+)/i.exec(head);
        let total: number;
        if (length) total = end + 4 + Number(length[1]);
        else {
          const last = buffer.indexOf("\r\n0\r\n\r\n", end);
          if (last < 0) return;
          total = last + 7;
        }
        if (buffer.length < total) return;
        const status = head.slice(9, 12);
        if (status[0] !== "2") {
          const reason = /"(?:error|reason)":"([^"]+)"(?![\s\S]*"reason")/.exec(
            buffer.subarray(end, total).toString(),
          )?.[1];
          const key = `${status} ${reason ?? "?"}`;
          reasons[key] = (reasons[key] ?? 0) + 1;
        }
        buffer = buffer.subarray(total);
        byStatus[status] = (byStatus[status] ?? 0) + 1;
        const of = byPath[sent] ?? {};
        of[status] = (of[status] ?? 0) + 1;
        byPath[sent] = of;
        if (/\r\nretry-after: *\d+/i.test(head)) retryAfter[status] = (retryAfter[status] ?? 0) + 1;
        maxMs = Math.max(maxMs, performance.now() - sentAt);
        requests++;
        if (performance.now() < until) send();
        else {
          s.end();
          return;
        }
      }
    });
    s.on("error", () => {
      errors++;
    });
    s.on("close", () => resolve());
  });
}

await Promise.all(Array.from({ length: addresses }, (_, i) => connection(floodAddress(i))));
process.stdout.write(
  `${JSON.stringify({ requests, byStatus, byPath, retryAfter, reasons, maxMs: Math.round(maxMs), errors })}\n`,
);
