/**
 * A distributed MCP flood, as a process of its own: ADDRESSES clients (127.0.1.1, 127.0.1.2, … — loopback
 * addresses are all local on Linux), each on one keep-alive connection of its own, sending MCP batches
 * (10 × tools/list) back to back and reading every answer, for DURATION_MS (bench/socketFlood.ts). Raw sockets, and
 * an answer is only counted, not parsed, so the flood spends its CPU on sending, not on reading. Prints
 * `{"requests":N,"byStatus":{…}}`. Used by bench/abuse-memory.ts. MCP_ERA=2026-07-28 sends that revision's
 * stateless `tools/list` instead (issue 34).
 */
import { socketFlood } from "./socketFlood";

const base = new URL(process.env.BASE!);
const addresses = Number(process.env.ADDRESSES ?? 400);
const durationMs = Number(process.env.DURATION_MS ?? 5_000);

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
const result = await socketFlood({ base, addresses, durationMs, request: () => request });
process.stdout.write(`${JSON.stringify(result)}\n`);
