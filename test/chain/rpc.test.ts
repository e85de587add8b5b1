/**
 * RpcClient cancellation (api/chain/rpc.ts): a caller's AbortSignal closes the HTTP request to the
 * node and fails the call with kind "aborted", distinct from the client's own timeout. The node here
 * is a real HTTP server on loopback that holds every request until told, and records which ones its
 * client closed first. And how each call is counted (RpcOutcome): a revert apart from a node failure, an
 * answer its caller's decoder rejects as invalid.
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

describe("RpcClient outcomes: a revert is not a node failure, an answer the caller cannot decode is not ok", () => {
  // A node that answers each member by its params[0]: "ok" → 0x01, "revert" → code 3 with data, "geth-revert" →
  // -32000 "execution reverted", "error" → -32000 "header not found", "bad" → a result no decoder accepts, "twice" → two answers under its id.
  let node: ReturnType<typeof createServer>;
  let nodeUrl: string;
  const answer = (m: { id: number; params: [string] }): object => {
    const kind = m.params[0];
    if (kind === "revert")
      return { jsonrpc: "2.0", id: m.id, error: { code: 3, message: "execution reverted", data: "0x08c379a0" } };
    if (kind === "geth-revert")
      return { jsonrpc: "2.0", id: m.id, error: { code: -32000, message: "execution reverted" } };
    if (kind === "error") return { jsonrpc: "2.0", id: m.id, error: { code: -32000, message: "header not found" } };
    // Another request's answer (a desynchronised keep-alive connection, a caching proxy mixing answers up).
    if (kind === "foreign-id") return { jsonrpc: "2.0", id: m.id + 1000, result: "0x01" };
    if (kind === "foreign-id-revert")
      return { jsonrpc: "2.0", id: m.id + 1000, error: { code: 3, message: "execution reverted", data: "0x" } };
    if (kind === "string-id") return { jsonrpc: "2.0", id: String(m.id), result: "0x01" };
    if (kind === "no-id") return { jsonrpc: "2.0", result: "0x01" };
    // A batch member answered twice under its id, the second answer another value (a proxy merging answers).
    if (kind === "twice")
      return [
        { jsonrpc: "2.0", id: m.id, result: "0x01" },
        { jsonrpc: "2.0", id: m.id, result: "0x02" },
      ];
    // Its own answer, and one more under an id the client did not send (another request's, mixed in by a proxy).
    if (kind === "extra")
      return [
        { jsonrpc: "2.0", id: m.id, result: "0x01" },
        { jsonrpc: "2.0", id: m.id + 1000, result: "0x01" },
      ];
    if (kind === "twice-same")
      return [
        { jsonrpc: "2.0", id: m.id, result: "0x01" },
        { jsonrpc: "2.0", id: m.id, result: "0x01" },
      ];
    return { jsonrpc: "2.0", id: m.id, result: kind === "bad" ? "0xzz" : "0x01" };
  };
  beforeAll(async () => {
    node = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString("utf8");
      });
      req.on("end", () => {
        const parsed = JSON.parse(body);
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(Array.isArray(parsed) ? parsed.flatMap(answer) : answer(parsed)));
      });
    });
    await new Promise<void>((ready) => node.listen(0, "127.0.0.1", ready));
    nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    node.closeAllConnections();
    await new Promise((done) => node.close(done));
  });

  const call = (kind: string) => ({ method: "eth_call", params: [kind] });
  /** Accepts exactly 0x01, as a view's decoder accepts only its canonical encoding. */
  const one = (result: unknown) => {
    if (result !== "0x01") throw new Error("not the encoding of 1");
    return 1n;
  };
  function counted() {
    const outcomes: RpcOutcome[] = [];
    const rpc = createRpcClient({ url: nodeUrl, timeoutMs: 5_000, onCall: (_m, o) => outcomes.push(o) });
    return { rpc, outcomes };
  }

  it("a revert (code 3, or the node's 'execution reverted') is its own outcome, kind rpc with `reverted` set", async () => {
    const { rpc, outcomes } = counted();
    for (const kind of ["revert", "geth-revert", "error"]) {
      const error = (await rpc.request(call(kind)).catch((e: unknown) => e)) as RpcError;
      expect([error.kind, error.info.reverted]).toEqual(["rpc", kind !== "error"]);
    }
    expect(outcomes).toEqual(["revert", "revert", "rpc"]);
  });

  it("the caller's decoder runs inside the call: its value is the answer, its error the call's, counted invalid", async () => {
    const { rpc, outcomes } = counted();
    expect(await rpc.request(call("ok"), { decode: one })).toBe(1n);
    const error = await rpc.request(call("bad"), { decode: one }).catch((e: unknown) => e);
    expect((error as Error).message).toBe("not the encoding of 1");
    // Without a decoder the client takes any result as it came.
    expect(await rpc.request(call("bad"))).toBe("0xzz");
    expect(outcomes).toEqual(["ok", "invalid", "ok"]);
  });

  it("a single call's answer under another id is no answer: invalid, whatever it says, for every caller", async () => {
    const { rpc, outcomes } = counted();
    for (const kind of ["foreign-id", "foreign-id-revert", "string-id", "no-id"]) {
      const error = (await rpc.request(call(kind)).catch((e: unknown) => e)) as RpcError;
      expect([kind, error instanceof RpcError, error.kind, error.info.reverted]).toEqual([
        kind,
        true,
        "invalid",
        undefined,
      ]);
    }
    // The same through a caller's decoder and through the prepare coalescer's lone call.
    expect(((await rpc.request(call("foreign-id"), { decode: one }).catch((e: unknown) => e)) as RpcError).kind).toBe(
      "invalid",
    );
    const view = coalesceRequests(rpc);
    expect(((await view.request(call("foreign-id")).catch((e: unknown) => e)) as RpcError).kind).toBe("invalid");
    expect(outcomes).toEqual(["invalid", "invalid", "invalid", "invalid", "invalid", "invalid"]);
    // Its own id: the answer.
    expect(await rpc.request(call("ok"), { decode: one })).toBe(1n);
  });

  it("a batch counts each member by its own outcome and fails with the first failure", async () => {
    const { rpc, outcomes } = counted();
    const reqs = ["ok", "revert", "bad", "ok"].map(call);
    const error = await rpc.batch(reqs, { decode: [one, one, one, one] }).catch((e: unknown) => e);
    expect((error as RpcError).info.reverted).toBe(true);
    expect(outcomes).toEqual(["ok", "revert", "invalid", "ok"]);
    expect(await rpc.batch([call("ok"), call("bad")], { decode: [one] })).toEqual([1n, "0xzz"]);
  });

  it("a settled member's own failure is its result and fails no batch; a settled member answered twice still fails it", async () => {
    const { rpc, outcomes } = counted();
    const settle = [false, true, true, false];
    const results = await rpc.batch(["ok", "revert", "bad", "ok"].map(call), { decode: [one, one, one, one], settle });
    expect(results.map((r) => (r instanceof Error ? ((r as RpcError).kind ?? r.name) : r))).toEqual([
      1n,
      "rpc",
      "Error",
      1n,
    ]);
    expect(outcomes).toEqual(["ok", "revert", "invalid", "ok"]);
    const twice = (await rpc
      .batch([call("ok"), call("twice")], { decode: [one, one], settle: [false, true] })
      .catch((e: unknown) => e)) as RpcError;
    expect([twice instanceof RpcError, twice.message]).toEqual([
      true,
      "RPC eth_call: answered twice in the batch response",
    ]);
  });

  it("a batch member answered twice under its id is no answer: invalid, whichever answer came last", async () => {
    const { rpc, outcomes } = counted();
    for (const kind of ["twice", "twice-same"]) {
      const error = (await rpc
        .batch([call("ok"), call(kind)], { decode: [one, one] })
        .catch((e: unknown) => e)) as RpcError;
      expect([kind, error instanceof RpcError, error.kind, error.message]).toEqual([
        kind,
        true,
        "invalid",
        "RPC eth_call: answered twice in the batch response",
      ]);
    }
    expect(outcomes).toEqual(["ok", "invalid", "ok", "invalid"]);
  });

  it("a batch answer carrying a member under an id the batch did not send is no answer: invalid, for every member", async () => {
    const { rpc, outcomes } = counted();
    const error = (await rpc
      .batch([call("ok"), call("extra")], { decode: [one, one] })
      .catch((e: unknown) => e)) as RpcError;
    expect([error instanceof RpcError, error.kind, error.message]).toEqual([
      true,
      "invalid",
      "RPC batch: an answer under an id the batch did not send",
    ]);
    expect(outcomes).toEqual(["invalid", "invalid"]);
  });

  it("the prepare coalescer keeps each read's decoder: a malformed member fails only its own read", async () => {
    const { rpc, outcomes } = counted();
    const view = coalesceRequests(rpc);
    const [good, bad] = await Promise.allSettled([
      view.request(call("ok"), { decode: one }),
      view.request(call("bad"), { decode: one }),
    ]);
    expect(good).toEqual({ status: "fulfilled", value: 1n });
    expect(bad).toMatchObject({ status: "rejected", reason: { message: "not the encoding of 1" } });
    // The batch (ok, invalid), then each read alone.
    expect(outcomes.sort()).toEqual(["invalid", "invalid", "ok", "ok"]);
  });
});
