/**
 * A flood of new GraphQL documents, as a process of its own: ADDRESSES clients (127.0.1.1, 127.0.1.2, …), each on
 * one keep-alive connection, posting documents near the limits (30 aliased lists), every one new (its numbers
 * differ), back to back and reading every answer, for DURATION_MS. Prints `{"requests":N,"byStatus":{…}}`. Used by
 * bench/abuse-choices.ts.
 */
import { connect } from "node:net";

const base = new URL(process.env.BASE!);
const addresses = Number(process.env.ADDRESSES ?? 400);
const durationMs = Number(process.env.DURATION_MS ?? 10_000);
const floodAddress = (i: number) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

let n = 0;
const request = () => {
  const at = n++;
  const query = `{ ${Array.from(
    { length: 30 },
    (_, a) => `a${a}: lockEvents(where: { tokenId: "${at * 30 + a}" }, limit: 1) { items { kind tokenId owner } }`,
  ).join(" ")} }`;
  const body = JSON.stringify({ query });
  return (
    `POST /graphql HTTP/1.1\r\nhost: ${base.host}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
};
const byStatus: Record<string, number> = {};
let requests = 0;
const until = performance.now() + durationMs;

function connection(localAddress: string): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ host: base.hostname, port: Number(base.port), localAddress }, () => s.write(request()));
    let head = "";
    let remaining = -1;
    let status = "";
    const answered = () => {
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      requests++;
      head = "";
      remaining = -1;
      if (performance.now() < until) s.write(request());
      else s.end();
    };
    s.on("data", (chunk: Buffer) => {
      let rest = chunk;
      while (rest.length > 0) {
        if (remaining < 0) {
          head += rest.toString("latin1");
          const end = head.indexOf("\r\n\r\n");
          if (end < 0) return;
          status = head.slice(9, 12);
          remaining = Number(/content-length: (\d+)/i.exec(head.slice(0, end))?.[1] ?? 0);
          rest = Buffer.from(head.slice(end + 4), "latin1");
          head = "";
        }
        const take = Math.min(remaining, rest.length);
        remaining -= take;
        rest = rest.subarray(take);
        if (remaining === 0) answered();
      }
    });
    s.on("error", () => {
      byStatus.error = (byStatus.error ?? 0) + 1;
    });
    s.on("close", () => resolve());
  });
}

async function client(localAddress: string): Promise<void> {
  while (performance.now() < until) await connection(localAddress);
}

await Promise.all(Array.from({ length: addresses }, (_, i) => client(floodAddress(i))));
process.stdout.write(`${JSON.stringify({ requests, byStatus })}\n`);
