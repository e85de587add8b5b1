/**
 * RpcClient cancellation (api/chain/rpc.ts): a caller's AbortSignal closes the HTTP request to the
 * node and fails the call with kind "aborted", distinct from the client's own timeout. The node here
 * is a real HTTP server on loopback that holds every request until told, and records which ones its
 * client closed first.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRpcClient, RpcError, type RpcOutcome } from "../../api/chain/rpc";
import { coalesceRequests } from "../../api/mcp/v1/prepare/coalesce";

type Held = { body: string; res: ServerResponse; closedEarly: boolean };
let held: Held[] = [];
let url: string;
let server: ReturnType<typeof createServer>;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      const h: Held = { body, res, closedEarly: false };
      res.on("close", () => {
        if (!res.writableFinished) h.closedEarly = true;
      });
      held.push(h);
    });
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});
beforeEach(() => {
  for (const h of held) if (!h.res.writableFinished) h.res.destroy();
  held = [];
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean, ms = 2_000) {
  const end = performance.now() + ms;
  while (!check() && performance.now() < end) await sleep(5);
  return check();
}

/** Answers every held request with a result of `0x1` for each member. */
function answerAll() {
  for (const h of held.splice(0)) {
    if (h.closedEarly) continue;
    const parsed = JSON.parse(h.body) as { id: number } | { id: number }[];
    const one = (m: { id: number }) => ({ jsonrpc: "2.0", id: m.id, result: "0x1" });
    h.res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify(Array.isArray(parsed) ? parsed.map(one) : one(parsed)));
  }
}

function client() {
  const outcomes: [string, RpcOutcome][] = [];
  const rpc = createRpcClient({ url, timeoutMs: 10_000, onCall: (m, o) => outcomes.push([m, o]) });
  return { rpc, outcomes };
}

const blockNumber = { method: "eth_blockNumber", params: [] } as const;

describe("RpcClient cancellation", () => {
  it("an abort mid-call closes the node's connection and fails the call as aborted, at once", async () => {
    const { rpc, outcomes } = client();
    const controller = new AbortController();
    const call = rpc.request(blockNumber, { signal: controller.signal });
    expect(await until(() => held.length === 1)).toBe(true);
    const aborted = performance.now();
    controller.abort();
    const error = await call.catch((e: unknown) => e);
    expect(performance.now() - aborted).toBeLessThan(500);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).kind).toBe("aborted");
    expect(await until(() => held[0]!.closedEarly)).toBe(true);
    expect(outcomes).toEqual([["eth_blockNumber", "aborted"]]);
  });

  it("a batch is cancelled the same way; every member reports aborted", async () => {
    const { rpc, outcomes } = client();
    const controller = new AbortController();
    const call = rpc.batch([blockNumber, { method: "eth_chainId", params: [] }], { signal: controller.signal });
    expect(await until(() => held.length === 1)).toBe(true);
    controller.abort();
    expect(((await call.catch((e: unknown) => e)) as RpcError).kind).toBe("aborted");
    expect(await until(() => held[0]!.closedEarly)).toBe(true);
    expect(outcomes).toEqual([
      ["eth_blockNumber", "aborted"],
      ["eth_chainId", "aborted"],
    ]);
  });

  it("an already-aborted signal sends nothing", async () => {
    const { rpc } = client();
    const error = await rpc.request(blockNumber, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect((error as RpcError).kind).toBe("aborted");
    await sleep(100);
    expect(held).toEqual([]);
  });

  it("a signal that never fires changes nothing; the client's own timeout is still a timeout", async () => {
    const { rpc } = client();
    const call = rpc.request(blockNumber, { signal: new AbortController().signal });
    expect(await until(() => held.length === 1)).toBe(true);
    answerAll();
    expect(await call).toBe("0x1");

    const short = createRpcClient({ url, timeoutMs: 150 });
    const error = await short.request(blockNumber, { signal: new AbortController().signal }).catch((e: unknown) => e);
    expect((error as RpcError).kind).toBe("timeout");
    expect(await until(() => held[0]?.closedEarly === true)).toBe(true);
  });

  it("the prepare coalescer sends a call with its own signal alone, and keeps it cancellable", async () => {
    const { rpc } = client();
    const view = coalesceRequests(rpc);
    const controller = new AbortController();
    const plain = [view.request(blockNumber), view.request({ method: "eth_chainId", params: [] })];
    const own = view.request(blockNumber, { signal: controller.signal });
    // Two round trips: the two plain calls as one batch, the signalled call alone.
    expect(await until(() => held.length === 2)).toBe(true);
    const shapes = held.map((h) => (Array.isArray(JSON.parse(h.body)) ? "batch" : "single")).sort();
    expect(shapes).toEqual(["batch", "single"]);
    controller.abort();
    expect(((await own.catch((e: unknown) => e)) as RpcError).kind).toBe("aborted");
    answerAll();
    expect(await Promise.all(plain)).toEqual(["0x1", "0x1"]);
  });
});

describe("RpcClient keep-alive", () => {
  // A node (or the load balancer in front of it) that drops a pooled connection the moment it is reused: every
  // connection answers its first request and is destroyed when a second one arrives on it, unanswered.
  let dropping: ReturnType<typeof createServer>;
  let dropUrl: string;
  let connections = 0;
  beforeAll(async () => {
    dropping = createServer((req, res) => {
      const socket = req.socket as typeof req.socket & { served?: boolean };
      if (socket.served) {
        socket.destroy();
        return;
      }
      socket.served = true;
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString("utf8");
      });
      req.on("end", () => {
        const { id } = JSON.parse(body) as { id: number };
        res
          .writeHead(200, { "content-type": "application/json", connection: "keep-alive" })
          .end(JSON.stringify({ jsonrpc: "2.0", id, result: "0x2a" }));
      });
    });
    dropping.on("connection", () => connections++);
    await new Promise<void>((ready) => dropping.listen(0, "127.0.0.1", ready));
    dropUrl = `http://127.0.0.1:${(dropping.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    dropping.closeAllConnections();
    await new Promise((done) => dropping.close(done));
  });

  it("a reused connection the node dropped is retried once on a new one: the read succeeds", async () => {
    const outcomes: RpcOutcome[] = [];
    const rpc = createRpcClient({ url: dropUrl, timeoutMs: 5_000, onCall: (_m, o) => outcomes.push(o) });
    for (let i = 0; i < 5; i++) expect(await rpc.request(blockNumber)).toBe("0x2a");
    expect(outcomes).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    // Every call after the first met a dropped pooled connection, then got a fresh one.
    expect(connections).toBe(5);
  });
});
