/**
 * A hostile client, as a process of its own (so its CPU is not the measured client's): floods the API at
 * BASE with REQUESTS requests (at most DURATION_MS) over CONNECTIONS keep-alive connections per kind, mixing
 * MCP batches (10 × tools/list), state reads, prepares and supply cache-busters. A fixed count, not a fixed
 * time, so the flood is the same size on a busy machine. Prints `{"requests":N,"byStatus":{…}}`.
 */
export {};

const base = process.env.BASE!;
const durationMs = Number(process.env.DURATION_MS ?? 30_000);
const total = Number(process.env.REQUESTS ?? 4_000);
const perKind = Number(process.env.CONNECTIONS ?? 8);
const user = process.env.USER_ADDRESS ?? "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

const batch = JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/list" })));
const kinds: (() => [string, RequestInit?])[] = [
  () => [
    `${base}/api/mcp`,
    {
      method: "POST",
      body: batch,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    },
  ],
  () => [`${base}/api/mcp/v1/state/${user}`],
  () => [`${base}/api/mcp/v1/prepare/withdraw-lp`],
  () => [`${base}/api/supply/total?cb=${Math.random()}`],
];

const byStatus: Record<string, number> = {};
let requests = 0;
const until = performance.now() + durationMs;
await Promise.all(
  kinds.flatMap((kind) =>
    Array.from({ length: perKind }, async () => {
      while (performance.now() < until && requests < total) {
        try {
          const res = await fetch(...kind());
          await res.arrayBuffer();
          byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
        } catch {
          byStatus.error = (byStatus.error ?? 0) + 1;
        }
        requests++;
      }
    }),
  ),
);
process.stdout.write(`${JSON.stringify({ requests, byStatus })}\n`);
