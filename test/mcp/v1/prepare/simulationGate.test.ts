/**
 * requireSimulationOk (api/mcp/v1/prepare/pipeline.ts, simulation.ts; "Simulation as a gate" in
 * docs/api.md#preparation-api-v1--prepare), against the served API process (dist/server/main.js) over the seeded
 * devnet, whose VeLockNFT is Furnace-only as the published one is (protocol.md §8): a wallet's own top-up reverts
 * NotAuthorized. With the flag such a batch is refused (409 SIMULATION_REVERTED naming the step and the revert),
 * without it the answer is the 200 it always was; a clean batch is answered with the same bytes either way; a
 * simulation that cannot run refuses the batch (503 SIMULATION_UNAVAILABLE). The same through the prepare tools of
 * a real MCP client.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ACTIONS } from "../../../../api/mcp/v1/prepare";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { childEnv, startApiChild } from "../../../support/apiProcess";
import { preparePath } from "../../../support/execution";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";

const E18 = 10n ** 18n;
const alice = DEVNET_ACCOUNTS.alice.address;
const fresh = DEVNET_ACCOUNTS.fresh.address;
const onlySimulate = (method: string) => method === "eth_simulateV1";

let d: ReadsDevnet;
let dir: string;
let child: ChildProcess;
let base: string;

beforeAll(async () => {
  d = await startReadsDevnet({ rpcTimeoutMs: 1_000 });
  dir = mkdtempSync(path.join(tmpdir(), "simulation-gate-"));
  ({ child, base } = await startApiChild({ ...childEnv(d, dir), RATE_LIMIT_MAX: "1000000", RPC_TIMEOUT_MS: "1000" }));
}, 120_000);
afterAll(async () => {
  child?.kill("SIGTERM");
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  d.proxy.setFault(null);
  d.proxy.reset();
});

/** The answer's status and its exact bytes (and the JSON parsed from them). */
async function get(p: string) {
  const res = await fetch(base + p);
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on the parsed JSON shape themselves
  return { status: res.status, text, body: JSON.parse(text) as any, headers: res.headers };
}

// Alice's own plain lock, topped up from her wallet: addToLockFor accepts only the Furnace.
const topupQuery = () => ({ user: alice, tokenId: d.seed.tokenIds.alicePlain, amountWei: 10n * E18 });
// A batch that works for a wallet: approve + Furnace.enterWithClaim.
const furnaceQuery = { user: fresh, claimAmountWei: 1000n * E18, durationSeconds: 604_800n };

describe("a batch whose simulation reverts", () => {
  it("without the flag (or with false): the 200 with the batch and simulation.ok false, the same bytes", async () => {
    const without = await get(preparePath("topup", topupQuery()));
    expect(without.status).toBe(200);
    expect(without.body.ok).toBe(true);
    expect(without.body.transactions.map((t: { step: string }) => t.step)).toEqual(["approve", "topup"]);
    expect(without.body.simulation.ok).toBe(false);
    expect(without.body.simulation.steps[1].error).toEqual({
      name: "NotAuthorized",
      args: [],
      selector: "0xea8e4eb5",
    });
    const withFalse = await get(preparePath("topup", { ...topupQuery(), requireSimulationOk: "false" }));
    expect(withFalse.status).toBe(200);
    expect(withFalse.text).toBe(without.text);
  });

  it("with requireSimulationOk=true: 409 SIMULATION_REVERTED naming the failing step (index, label) and the revert", async () => {
    const reference = await get(preparePath("topup", topupQuery()));
    const refused = await get(preparePath("topup", { ...topupQuery(), requireSimulationOk: "true" }));
    expect(refused.status).toBe(409);
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
    expect(refused.headers.get("x-request-id")).toBeTruthy();
    const index = reference.body.simulation.steps.findIndex((s: { ok: boolean }) => !s.ok);
    expect(index).toBe(1);
    expect(refused.body).toEqual({
      ok: false,
      error: "SIMULATION_REVERTED",
      message:
        "Step 1 (topup) of the batch reverts in simulation: NotAuthorized. The batch was not returned " +
        "(requireSimulationOk=true).",
      detail: {
        index: 1,
        step: "topup",
        revert: { name: "NotAuthorized", args: [], selector: "0xea8e4eb5" },
        blockNumber: reference.body.simulation.blockNumber,
        hint: reference.body.simulation.hint,
      },
    });
    // No batch anywhere in the refusal.
    expect(refused.text).not.toContain(reference.body.transactions[1].data);
    expect(refused.body.detail.hint.action).toBe("lock-via-furnace");
  });

  it("the hint's lock-via-furnace call works for the wallet's plain and AutoMax locks (an AutoMax top-up needs 365 days)", async () => {
    for (const tokenId of [d.seed.tokenIds.alicePlain, d.seed.tokenIds.aliceAutoMax]) {
      const topup = await get(preparePath("topup", { user: alice, tokenId, amountWei: 10n * E18 }));
      expect(topup.body.simulation.hint.action, String(tokenId)).toBe("lock-via-furnace");
      const followed = await get(topup.body.simulation.hint.path);
      expect([followed.status, followed.body.error], String(tokenId)).toEqual([200, undefined]);
      expect(followed.body.simulation.ok, String(tokenId)).toBe(true);
    }
  });

  it("a revert in the first step is named at index 0 (unbond-lp of more than the stake: InsufficientStake)", async () => {
    // (withdraw-lp with nothing matured is no revert: the published vault returns without a transfer)
    const refused = await get(
      preparePath("unbond-lp", { user: fresh, amountWei: 10n ** 30n, requireSimulationOk: "true" }),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatchObject({
      index: 0,
      step: "unbond",
      revert: { name: "InsufficientStake", selector: "0xf1bc94d2" },
    });
    expect(refused.body.message).toMatch(/^Step 0 \(unbond\) of the batch reverts in simulation: InsufficientStake\./);
  });
});

describe("a batch whose simulation succeeds", () => {
  it("with requireSimulationOk=true: the same 200, byte for byte, as without the flag", async () => {
    const without = await get(preparePath("lock-via-furnace", furnaceQuery));
    expect(without.status).toBe(200);
    expect(without.body.simulation.ok).toBe(true);
    const gated = await get(preparePath("lock-via-furnace", { ...furnaceQuery, requireSimulationOk: "true" }));
    expect(gated.status).toBe(200);
    expect(gated.text).toBe(without.text);
    expect(gated.headers.get("cache-control")).toBe(without.headers.get("cache-control"));
  });
});

describe("strict parsing, and a gate that has nothing to judge", () => {
  it("only exactly true or false, once, on every action: anything else is 400 naming requireSimulationOk", async () => {
    for (const a of ACTIONS) {
      for (const value of ["TRUE", "1", "yes", "", "true%20", "%20true", "+true"]) {
        const { status, body } = await get(`/api/mcp/v1/prepare/${a.action}?requireSimulationOk=${value}`);
        expect(status, `${a.action} ${value}`).toBe(400);
        expect(body).toMatchObject({ ok: false, error: "BAD_PARAMS", detail: { param: "requireSimulationOk" } });
      }
      const twice = await get(`/api/mcp/v1/prepare/${a.action}?requireSimulationOk=true&requireSimulationOk=true`);
      expect(twice.body.detail.param).toBe("requireSimulationOk");
      const unknown = await get(`/api/mcp/v1/prepare/${a.action}?bogus=1`);
      expect(unknown.body.detail.accepted).toContain("requireSimulationOk");
    }
    expect(d.proxy.count("eth_simulateV1")).toBe(0);
  });

  it("with simulate=false, or without user where it is optional: 400 before any read", async () => {
    // The baseline: a request refused by the strict parse reads only what the gate reads.
    await get(preparePath("lock-via-furnace", { ...furnaceQuery, simulate: "yes" }));
    const gateReads = d.proxy.count();
    d.proxy.reset();
    const noSim = await get(
      preparePath("lock-via-furnace", { ...furnaceQuery, simulate: "false", requireSimulationOk: "true" }),
    );
    expect(noSim.status).toBe(400);
    expect(noSim.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "requireSimulationOk" } });
    const noUser = await get(preparePath("collect-all", { requireSimulationOk: "true" }));
    expect(noUser.status).toBe(400);
    expect(noUser.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "user" } });
    // Neither the allowance nor the quote was read, and nothing was simulated: at most the gate's reads, each time.
    expect(d.proxy.count("eth_simulateV1")).toBe(0);
    expect(d.proxy.count()).toBeLessThanOrEqual(2 * gateReads);
  });
});

describe("the prepare tools of a real MCP client", () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: "gate-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
  });

  it("every prepare_* tool takes requireSimulationOk, exactly true or false, default false", async () => {
    const { tools } = await client.listTools();
    const prepares = tools.filter((t) => t.name.startsWith("prepare_"));
    expect(prepares).toHaveLength(ACTIONS.length);
    for (const tool of prepares) {
      const arg = (tool.inputSchema.properties as Record<string, Record<string, unknown>>).requireSimulationOk;
      expect(arg, tool.name).toMatchObject({ type: "string", enum: ["true", "false"], default: "false" });
      expect(tool.inputSchema.required ?? []).not.toContain("requireSimulationOk");
    }
  });

  it("a reverting batch is an error result holding the 409 envelope; without the flag, the batch", async () => {
    const args = { user: alice, tokenId: String(d.seed.tokenIds.alicePlain), amountWei: String(10n * E18) };
    const rest = await get(preparePath("topup", { ...topupQuery(), requireSimulationOk: "true" }));
    for (const flag of [true, "true"]) {
      const result = await client.callTool({
        name: "prepare_topup",
        arguments: { ...args, requireSimulationOk: flag },
      });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      const text = (result.content as { type: string; text: string }[])[0]!.text;
      expect(JSON.parse(text)).toEqual(rest.body);
    }
    const plain = await client.callTool({ name: "prepare_topup", arguments: args });
    expect(plain.isError).toBe(false);
    expect((plain.structuredContent as { simulation: { ok: unknown } }).simulation.ok).toBe(false);
  });
});

// Last: a node found to lack eth_simulateV1 is remembered for the life of the process.
describe("a simulation that could not run", () => {
  it("the node fails the simulation: 503 SIMULATION_UNAVAILABLE (node-failed) with the flag, the 200 without", async () => {
    d.proxy.setFault({ kind: "rpcError", code: -32000, message: "boom", match: onlySimulate });
    const refused = await get(preparePath("lock-via-furnace", { ...furnaceQuery, requireSimulationOk: "true" }));
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({
      ok: false,
      error: "SIMULATION_UNAVAILABLE",
      detail: { skipped: "node-failed", reason: "rpc" },
    });
    expect(refused.body.message).toMatch(/could not be simulated/);
    const answered = await get(preparePath("lock-via-furnace", furnaceQuery));
    expect(answered.status).toBe(200);
    expect(answered.body.simulation).toMatchObject({ ok: null, skipped: "node-failed" });
  });

  it("the node lacks eth_simulateV1: 503 SIMULATION_UNAVAILABLE (unsupported), then without asking the node again", async () => {
    d.proxy.setFault({ kind: "rpcError", code: -32601, message: "Method not found", match: onlySimulate });
    const first = await get(preparePath("lock-via-furnace", { ...furnaceQuery, requireSimulationOk: "true" }));
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({ error: "SIMULATION_UNAVAILABLE", detail: { skipped: "unsupported" } });
    d.proxy.setFault(null);
    d.proxy.reset();
    const again = await get(preparePath("topup", { ...topupQuery(), requireSimulationOk: "true" }));
    expect(again.status).toBe(503);
    expect(again.body.detail.skipped).toBe("unsupported");
    expect(d.proxy.count("eth_simulateV1")).toBe(0);
  });
});
