/**
 * The indexer's RPC transport (indexer/outageGate.ts) against a real anvil behind the fault proxy: an outage is waited
 * out (requests resolve once the node answers again, and only the probe asks the node meanwhile); answers that are
 * not an outage, and a request the node keeps refusing while it otherwise answers, reach the caller (Ponder).
 */
import { HttpRequestError, RpcRequestError, TimeoutError } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import { isOutage, outageGatedTransport } from "../../indexer/outageGate";
import { type RpcProxy, startRpcProxy } from "../support/rpcProxy";

let anvil: AnvilHandle;
let proxy: RpcProxy;

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startRpcProxy({ upstream: anvil.rpcUrl });
});
afterAll(async () => {
  await proxy?.stop();
  await anvil?.stop();
});
beforeEach(() => {
  proxy.setFault(null);
  proxy.reset();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function client(events: string[] = []) {
  const transport = outageGatedTransport(proxy.url, {
    probeEveryMs: 100,
    attemptTimeoutMs: 1_000,
    probeTimeoutMs: 300,
    onChange: (e) => events.push(e.state),
  });
  // As Ponder builds it (ponder/dist/esm/rpc/index.js): retryCount 0, a 10 s timeout it does not enforce itself.
  return transport({ retryCount: 0, timeout: 10_000 }).request as (args: {
    method: string;
    params?: unknown[];
  }) => Promise<unknown>;
}

describe("isOutage", () => {
  it("no answer, a timeout, 5xx, 408, 429 and a JSON-RPC 429 are outages; other answers are not", () => {
    const body = { method: "eth_blockNumber" };
    expect(isOutage(new HttpRequestError({ url: "http://x", body }))).toBe(true);
    expect(isOutage(new HttpRequestError({ url: "http://x", body, status: 503 }))).toBe(true);
    expect(isOutage(new HttpRequestError({ url: "http://x", body, status: 429 }))).toBe(true);
    expect(isOutage(new HttpRequestError({ url: "http://x", body, status: 408 }))).toBe(true);
    expect(isOutage(new TimeoutError({ url: "http://x", body }))).toBe(true);
    expect(isOutage(new RpcRequestError({ url: "http://x", body, error: { code: 429, message: "slow down" } }))).toBe(
      true,
    );
    expect(isOutage(new HttpRequestError({ url: "http://x", body, status: 401 }))).toBe(false);
    expect(isOutage(new RpcRequestError({ url: "http://x", body, error: { code: -32602, message: "range" } }))).toBe(
      false,
    );
  });
});

describe("outageGatedTransport", () => {
  it("waits out an outage: requests resolve once the node answers again, only the probe asks meanwhile", async () => {
    const events: string[] = [];
    const request = client(events);
    proxy.setFault({ kind: "down" });
    const pending = Promise.all([
      request({ method: "eth_chainId" }),
      request({ method: "eth_blockNumber" }),
      request({ method: "eth_getBlockByNumber", params: ["latest", false] }),
    ]);
    let settled = false;
    void pending.finally(() => {
      settled = true;
    });
    await sleep(1_000);
    expect(settled).toBe(false);
    // The three requests tried once each; after that only the probe (eth_blockNumber, every 100 ms) went out.
    const calls = proxy.calls.map((c) => c.method);
    expect(calls.filter((m) => m === "eth_chainId")).toHaveLength(1);
    expect(calls.filter((m) => m === "eth_getBlockByNumber")).toHaveLength(1);
    expect(calls.filter((m) => m === "eth_blockNumber").length).toBeLessThanOrEqual(1 + 10);

    proxy.setFault(null);
    const restored = performance.now();
    const [chainId, head, block] = await pending;
    expect(performance.now() - restored).toBeLessThan(500);
    expect(chainId).toBe("0x7a69");
    expect(typeof head).toBe("string");
    expect((block as { number?: unknown }).number).toBe(head);
    expect(events).toEqual(["down", "up"]);
  });

  it("beforeFirstRequest runs once, before anything is sent, for every client of the transport; its failure is theirs", async () => {
    let runs = 0;
    let release = () => {};
    const transport = outageGatedTransport(proxy.url, {
      beforeFirstRequest: () => {
        runs++;
        return new Promise<void>((r) => {
          release = r;
        });
      },
    });
    const [a, b] = [1, 2].map(
      () => transport({ retryCount: 0, timeout: 10_000 }).request as (args: { method: string }) => Promise<unknown>,
    );
    const pending = Promise.all([a!({ method: "eth_chainId" }), b!({ method: "eth_chainId" })]);
    await sleep(200);
    expect(proxy.count()).toBe(0);
    release();
    expect(await pending).toEqual(["0x7a69", "0x7a69"]);
    expect(runs).toBe(1);

    const failing = outageGatedTransport(proxy.url, {
      beforeFirstRequest: async () => Promise.reject(new Error("no")),
    });
    const request = failing({ retryCount: 0, timeout: 10_000 }).request as (args: {
      method: string;
    }) => Promise<unknown>;
    await expect(request({ method: "eth_chainId" })).rejects.toThrow("no");
  });

  it("every kind of outage holds the gate: 503, 429, answers past the timeout, JSON-RPC 429", async () => {
    for (const fault of [
      { kind: "http", status: 503 },
      { kind: "http", status: 429 },
      { kind: "delay", ms: 2_000 },
      { kind: "rpcError", code: 429 },
    ] as const) {
      proxy.setFault(fault);
      const answer = client()({ method: "eth_chainId" });
      await sleep(1_200);
      proxy.setFault(null);
      await expect(answer, fault.kind).resolves.toBe("0x7a69");
    }
  });

  it("an answer that is not an outage goes to the caller at once (Ponder's own handling runs)", async () => {
    proxy.setFault({
      kind: "rpcError",
      code: -32602,
      message: "block range too large",
      match: (m) => m === "eth_getLogs",
    });
    const started = performance.now();
    await expect(client()({ method: "eth_getLogs", params: [{ fromBlock: "0x0", toBlock: "0x1" }] })).rejects.toThrow(
      /block range too large/,
    );
    expect(performance.now() - started).toBeLessThan(500);
    expect(proxy.count("eth_getLogs")).toBe(1);
  });

  it("a request refused like an outage while the node otherwise answers reaches the caller after 3 tries", async () => {
    proxy.setFault({ kind: "http", status: 502, match: (m) => m === "eth_getLogs" });
    await expect(
      client()({ method: "eth_getLogs", params: [{ fromBlock: "0x0", toBlock: "0x1" }] }),
    ).rejects.toBeInstanceOf(HttpRequestError);
    expect(proxy.count("eth_getLogs")).toBe(3);
  });
});
