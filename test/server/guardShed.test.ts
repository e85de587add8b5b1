/**
 * One recount of the answers in flight (api/server/connectionGuard.ts, RECOUNT_MS) that passes the process-wide cap
 * sheds the connection that passed it, and only as many more as still pass it: a shed connection's bytes leave the
 * count at once, not at its socket's 'close' a tick later. (Before, every connection recounted after the first shed
 * in the same pass was measured against bytes already let go and was shed too: a burst written to many streams, as a
 * head writes to every stream at once, closed readers that were within the cap.)
 *
 * Over real sockets on 127.0.0.1, clients that never read; the answers are one shared Buffer written again and again,
 * so the bytes held cost no memory.
 */
import { createServer, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectionGuard, guardConnections, RECOUNT_MS } from "../../api/server/connectionGuard";

const MIB = 1024 * 1024;
const CAP = 100 * MIB;
const CONNECTIONS = 5;
const chunk = Buffer.alloc(MIB, 97);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/octet-stream" });
  answers.push(res);
});
const answers: ServerResponse[] = [];
const clients: Socket[] = [];
const closed = new Set<number>();
let guard: ConnectionGuard;

const write = (i: number, mib: number) => {
  for (let k = 0; k < mib; k++) answers[i]!.write(chunk);
};

beforeAll(async () => {
  guard = guardConnections(server, { pendingBytes: { perConnection: CAP, perIp: CAP, total: CAP } });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  // One at a time, so the guard recounts them in this order.
  for (let i = 0; i < CONNECTIONS; i++) {
    const s = connect({ host: "127.0.0.1", port });
    s.on("error", () => {});
    await new Promise((r) => s.once("connect", r));
    s.pause();
    s.write("GET / HTTP/1.1\r\nhost: x\r\n\r\n");
    clients.push(s);
    for (let t = 0; t < 100 && answers.length <= i; t++) await sleep(10);
    answers[i]!.on("close", () => closed.add(i));
  }
});

afterAll(async () => {
  for (const s of clients) s.destroy();
  await new Promise((r) => server.close(r));
});

describe("a recount past PENDING_RESPONSE_BYTES_MAX", () => {
  it("sheds the connection that passed it, not those recounted after it that fit", async () => {
    expect(answers).toHaveLength(CONNECTIONS);
    // 8 MiB to each: what the kernel has not taken is held (here all of it: the socket writes its queued chunks as
    // one request, counted off when the whole of it is sent), 40 MiB at most, under the cap.
    for (let i = 0; i < CONNECTIONS; i++) write(i, 8);
    await sleep(3 * RECOUNT_MS);
    const held = guard.pendingBytes();
    expect(held).toBeGreaterThan(20 * MIB);
    expect(held).toBeLessThan(41 * MIB);
    expect(closed.size).toBe(0);
    // In one turn, as a head writes to every stream: the middle one grows past the cap (by 80 MiB: whatever share of
    // the 40 the kernel took, the total passes 100), the two after it by 1 MiB.
    write(2, 80);
    write(3, 1);
    write(4, 1);
    for (let t = 0; t < 100 && closed.size === 0; t++) await sleep(RECOUNT_MS / 5);
    await sleep(2 * RECOUNT_MS);
    expect([...closed]).toEqual([2]);
    // What the four left hold, counted: all they were written, less the kernel's share.
    expect(guard.pendingBytes()).toBeGreaterThan(held - 10 * MIB);
    expect(guard.pendingBytes()).toBeLessThanOrEqual(CAP);
  });
});
