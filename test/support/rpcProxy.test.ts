import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import { ethCallSelector, type RpcProxy, startRpcProxy } from "./rpcProxy";

// The proxy's own test: real anvil behind it, plain fetch in front.
let anvil: AnvilHandle;
let proxy: RpcProxy;

async function rpc(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json };
}

const call = (id: number, method: string, params: unknown[] = []) => ({ jsonrpc: "2.0", id, method, params });

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

describe("rpcProxy", () => {
  it("forwards single and batch calls unchanged and counts them per method and per round trip", async () => {
    const single = await rpc(proxy.url, call(7, "eth_chainId"));
    expect(single.json).toEqual({ jsonrpc: "2.0", id: 7, result: "0x7a69" });
    const batch = await rpc(proxy.url, [call(1, "eth_chainId"), call(2, "eth_blockNumber"), call(3, "eth_chainId")]);
    expect((batch.json as { id: number }[]).map((r) => r.id).sort()).toEqual([1, 2, 3]);
    expect(proxy.count()).toBe(4);
    expect(proxy.count("eth_chainId")).toBe(3);
    expect(proxy.count("eth_blockNumber")).toBe(1);
    expect(proxy.roundTrips()).toBe(2);
    expect(proxy.calls.map((c) => c.batch)).toEqual([false, true, true, true]);
    proxy.reset();
    expect(proxy.count()).toBe(0);
    expect(proxy.roundTrips()).toBe(0);
  });

  it("replaces results with any JSON value, only for matching calls, keeping the rest of a batch", async () => {
    for (const value of [null, "0x", "0x1", `0x${"0".repeat(66)}`, `0x${"z".repeat(64)}`, { a: 1 }]) {
      proxy.setFault({ kind: "result", value, match: (m) => m === "eth_chainId" });
      const batch = await rpc(proxy.url, [call(1, "eth_chainId"), call(2, "eth_blockNumber")]);
      const byId = new Map((batch.json as { id: number; result: unknown }[]).map((r) => [r.id, r]));
      expect(byId.get(1)).toEqual({ jsonrpc: "2.0", id: 1, result: value });
      expect(byId.get(2)?.result).toMatch(/^0x[0-9a-f]+$/);
    }
  });

  it("answers JSON-RPC errors with code, message and data", async () => {
    proxy.setFault({ kind: "rpcError", code: 3, message: "execution reverted", data: "0xdeadbeef" });
    const res = await rpc(proxy.url, call(5, "eth_chainId"));
    expect(res.json).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: 3, message: "execution reverted", data: "0xdeadbeef" },
    });
  });

  it("answers an HTTP status, destroys the connection, or delays", async () => {
    proxy.setFault({ kind: "http", status: 503 });
    expect((await rpc(proxy.url, call(1, "eth_chainId"))).status).toBe(503);

    proxy.setFault({ kind: "down" });
    await expect(rpc(proxy.url, call(1, "eth_chainId"))).rejects.toThrow();

    proxy.setFault({ kind: "delay", ms: 300 });
    const t0 = performance.now();
    const res = await rpc(proxy.url, call(1, "eth_chainId"));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    expect(res.json).toEqual({ jsonrpc: "2.0", id: 1, result: "0x7a69" });
    expect(proxy.count("eth_chainId")).toBe(3);
  });

  it("targets eth_call by selector", async () => {
    const totalSupply = "0x18160ddd";
    proxy.setFault({ kind: "result", value: "0x", match: (m, p) => ethCallSelector(m, p) === totalSupply });
    const hit = await rpc(proxy.url, call(1, "eth_call", [{ to: `0x${"1".repeat(40)}`, data: totalSupply }, "latest"]));
    expect((hit.json as { result: unknown }).result).toBe("0x");
    const miss = await rpc(
      proxy.url,
      call(2, "eth_call", [{ to: `0x${"1".repeat(40)}`, data: "0x12345678" }, "latest"]),
    );
    // anvil answers an empty account's call with "0x": the fault did not touch it, the node did.
    expect(proxy.calls.map((c) => c.fault)).toEqual(["result", null]);
    expect((miss.json as { result: unknown }).result).toBe("0x");
  });
});
