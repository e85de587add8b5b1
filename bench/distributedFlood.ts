/**
 * A distributed MCP flood, as a process of its own: ADDRESSES clients (127.0.1.1, 127.0.1.2, … — loopback
 * addresses are all local on Linux), each on one keep-alive connection of its own, sending MCP batches
 * (10 × tools/list) back to back and reading every answer, for DURATION_MS. Raw sockets, and an answer is
 * only counted, not parsed, so the flood spends its CPU on sending, not on reading. Prints
 * `{"requests":N,"byStatus":{…}}`. Used by bench/abuse-memory.ts. MCP_ERA=2026-07-28 sends that revision's
 * stateless `tools/list` instead (issue 34).
 */
import { connect } from "node:net";

const base = new URL(process.env.BASE!);
const addresses = Number(process.env.ADDRESSES ?? 400);
const durationMs = Number(process.env.DURATION_MS ?? 5_000);

const floodAddress = (i: number) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

/** MCP_ERA=2026-07-28: the stateless revision's tools/list (one per POST: that revision has no batches). */
const modern = process.env.MCP_ERA === "2026-07-28";
const body = modern
  ? JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    })
  : JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/list" })));
const eraHeaders = modern ? "mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\n" : "";
const request = Buffer.from(
  `POST /api/mcp HTTP/1.1\r\nhost: ${base.host}\r\ncontent-type: application/json\r\n${eraHeaders}` +
    `accept: application/json, text/event-stream\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
);
const byStatus: Record<string, number> = {};
let requests = 0;
const until = performance.now() + durationMs;

/** One connection: a request, its whole answer read (status and Content-Length from the head), the next. */
function connection(localAddress: string): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ host: base.hostname, port: Number(base.port), localAddress }, () => s.write(request));
    let head = "";
    let remaining = -1;
    let status = "";
    const answered = () => {
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      requests++;
      head = "";
      remaining = -1;
      if (performance.now() < until) s.write(request);
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

/** One client: a new connection whenever the server closes one, until the time is up. */
async function client(localAddress: string): Promise<void> {
  while (performance.now() < until) await connection(localAddress);
}

await Promise.all(Array.from({ length: addresses }, (_, i) => client(floodAddress(i))));
process.stdout.write(`${JSON.stringify({ requests, byStatus })}\n`);
