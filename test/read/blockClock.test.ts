/**
 * A past block's timestamp read from the node (api/read/blockClock.ts fromNode): its failure says how the call
 * failed, as the state and quote routes' do (`detail.upstream`: timeout, http, …), against real local HTTP servers.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { createRpcClient } from "../../api/chain/rpc";
import { StateReadFailedError } from "../../api/http/errors";
import { BlockClock } from "../../api/read/blockClock";

const servers: Server[] = [];
/** A node that answers every request with `answer`, or never answers when it is null. */
async function node(answer: ((res: import("node:http").ServerResponse) => void) | null): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    if (answer) req.on("end", () => answer(res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

const head = { block: 200n, time: 2_000n, finalized: 150n };

async function failure(url: string): Promise<StateReadFailedError> {
  const rpc = createRpcClient({ url, timeoutMs: 300 });
  const error = await new BlockClock().fromNode(120n, head, rpc).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StateReadFailedError);
  return error as StateReadFailedError;
}

describe("BlockClock.fromNode: a failed read names how it failed", () => {
  it("a node that never answers is a timeout, not an RPC error", async () => {
    const error = await failure(await node(null));
    expect(error.detail).toEqual({ upstream: "timeout" });
  });

  it("a node answering HTTP 503 is http; a JSON-RPC error is rpc", async () => {
    const http = await failure(
      await node((res) => {
        res.writeHead(503).end();
      }),
    );
    expect(http.detail).toEqual({ upstream: "http" });
    const rpc = await failure(
      await node((res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32000, message: "header not found" } }));
      }),
    );
    expect(rpc.detail).toEqual({ upstream: "rpc" });
  });

  it("a block the node does not have is invalid", async () => {
    const error = await failure(
      await node((res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: null }));
      }),
    );
    expect(error.detail).toEqual({ upstream: "invalid" });
  });
});

describe("BlockClock.onBuildChanged: the index now holds another build's rows", () => {
  it("is told when a head names another build than the last, not for the same build nor a head naming none", () => {
    const clock = new BlockClock();
    let told = 0;
    clock.onBuildChanged = () => told++;
    clock.sawHead({ block: 10n, time: 100n, finalized: 5n, build: "aaaaaaaa" });
    clock.sawHead({ block: 11n, time: 102n, finalized: 5n, build: "aaaaaaaa" });
    clock.sawHead({ block: 12n, time: 104n, finalized: 6n });
    expect(told).toBe(0);
    clock.sawHead({ block: 12n, time: 104n, finalized: 6n, build: "bbbbbbbb" });
    expect(told).toBe(1);
    // Block times are the chain's: kept across the switch.
    expect(clock.cached(11n)).toBe(102n);
  });
});

describe("BlockClock across a reorg that does not lower the head", () => {
  const at = (block: bigint, time: bigint) => ({ block, time, finalized: 100n });

  it("forgetFrom forgets the heads' times from the reorg's first block up, and keeps those below", () => {
    const clock = new BlockClock();
    for (const [block, time] of [
      [187n, 550n],
      [188n, 556n],
      [189n, 558n],
    ] as const) {
      clock.sawHead(at(block, time));
    }
    expect(clock.forgetFrom(188n)).toBe(2);
    expect(clock.cached(187n)).toBe(550n);
    expect(clock.cached(188n)).toBeNull();
    expect(clock.cached(189n)).toBeNull();
    // The new branch's heads, at the same heights, are kept with their own times.
    clock.sawHead(at(188n, 554n));
    clock.sawHead(at(189n, 554n));
    expect(clock.cached(188n)).toBe(554n);
    expect(clock.known(188n, at(190n, 556n), null)).toBe(554n);
  });

  it("a head reported again with another time replaces the time kept (a reorg nothing told)", () => {
    const clock = new BlockClock();
    clock.sawHead(at(188n, 556n));
    clock.sawHead(at(189n, 558n));
    clock.sawHead(at(189n, 554n));
    expect(clock.cached(189n)).toBe(554n);
  });

  it("a read begun before a reorg was heard keeps nothing of the head it found", () => {
    const clock = new BlockClock();
    clock.sawHead(at(188n, 554n));
    const generation = clock.generation;
    clock.forgetFrom(188n);
    // The replaced branch's head, found by a statement sent before the reorg was heard.
    clock.sawHead(at(189n, 558n), generation);
    expect(clock.cached(189n)).toBeNull();
    expect(clock.known(189n, at(189n, 558n), null, generation)).toBe(558n);
    expect(clock.cached(189n)).toBeNull();
    // One begun after it keeps its head.
    clock.sawHead(at(189n, 554n), clock.generation);
    expect(clock.cached(189n)).toBe(554n);
  });

  it("the index's head going back still forgets every head kept", () => {
    const clock = new BlockClock();
    clock.sawHead(at(150n, 500n));
    clock.sawHead(at(189n, 558n));
    const generation = clock.generation;
    clock.sawHead(at(170n, 540n));
    expect(clock.cached(150n)).toBeNull();
    expect(clock.generation).not.toBe(generation);
  });
});
