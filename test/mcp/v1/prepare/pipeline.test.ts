import { zeroAddress } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRpcClient } from "../../../../api/chain/rpc";
import type { DeployableName, Manifest } from "../../../../api/manifest";
import { ACTIONS } from "../../../../api/mcp/v1/prepare";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { preparePath } from "../../../support/execution";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";
import { ethCallSelector, type RpcFault } from "../../../support/rpcProxy";

// Processing order (spec §4.3, design.md): (1) gate, (2) manifest, (3) strict parse, (4) reads, (5) encode —
// each proven by making a later stage fail too and showing the earlier stage's answer wins. Reads count at
// the fault proxy, so "no RPC at all" is measured, not assumed.

const E18 = 10n ** 18n;
const user = DEVNET_ACCOUNTS.fresh.address;
const ALLOWANCE = "0xdd62ed3e";
const QUOTE = "0xd0334149";
const PREFLIGHT = "0x75106187";

/** Parameters each action accepts on the seeded devnet (reads succeed, encode runs). */
const VALID: Record<string, Record<string, string | bigint | boolean>> = {
  "collect-all": {},
  "collect-royalties": {},
  "harvest-rewards": {},
  "withdraw-lp": {},
  "lock-via-furnace": { user, claimAmountWei: 2000n * E18, durationSeconds: 604_800n },
  "stake-lp": { user, amountWei: E18 },
  "unbond-lp": { amountWei: 1n },
  lock: { user, amountWei: 1000n * E18, durationSecs: 604_800n },
  topup: { user, tokenId: 1n, amountWei: E18 },
  extend: { user, tokenId: 1n, newEnd: 9_999_999_999n },
};
const WITH_ALLOWANCE = ["lock-via-furnace", "stake-lp", "lock", "topup"];
const BAD = "?bogus=%ZZ&amountWei=-1&amountWei=1";

let d: ReadsDevnet;
beforeAll(async () => {
  d = await startReadsDevnet({ rpcTimeoutMs: 1_000 });
});
afterAll(async () => {
  await d?.stop();
});
beforeEach(() => {
  d.proxy.setFault(null);
  d.proxy.reset();
});

const withoutDeployment = (name: DeployableName, how: "missing" | "zero") => (m: Manifest) => {
  if (name === "LpToken") {
    if (how === "missing") delete m.lpToken;
    else m.lpToken = { address: zeroAddress };
  } else if (how === "missing") delete m.contracts[name];
  else m.contracts[name] = { address: zeroAddress };
  return m;
};

describe("unknown actions", () => {
  it("404 NOT_FOUND listing the ten actions, before the gate", async () => {
    await d.setStatusBitmask(0x7ffn);
    try {
      for (const p of ["/api/mcp/v1/prepare/claim", "/api/mcp/v1/prepare/LOCK", "/api/mcp/v1/prepare/lock%20"]) {
        const { status, body } = await d.get(d.app(), p);
        expect(status).toBe(404);
        expect(body).toMatchObject({ ok: false, error: "NOT_FOUND" });
        expect(body.detail.actions).toEqual(ACTIONS.map((a) => a.action));
      }
      expect(d.proxy.count()).toBe(0);
    } finally {
      await d.setStatusBitmask(0x7fen);
    }
  });
});

describe("(1) the gate comes first", () => {
  it("gate closed: 503 GENESIS_NOT_FINALIZED with the bitmask diagnostic, even with bad params and a broken manifest", async () => {
    await d.setStatusBitmask(0x7ffn);
    try {
      for (const a of ACTIONS) {
        for (const app of [d.app(), d.app({ config: d.configWith(withoutDeployment(a.needs[0]!, "missing")) })]) {
          const { status, body, headers } = await d.get(app, `/api/mcp/v1/prepare/${a.action}${BAD}`);
          expect(status, a.action).toBe(503);
          expect(body).toMatchObject({ ok: false, error: "GENESIS_NOT_FINALIZED" });
          expect(body.detail).toEqual({
            statusBitmask: "2047",
            bitsSet: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            bitsExpected: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
          });
          expect(headers.get("access-control-allow-origin")).toBe("*");
        }
      }
      // Only preflight reads went out: nothing of the action's own (allowance, quote) was read.
      expect(d.proxy.calls.every((c) => ethCallSelector(c.method, c.params) === PREFLIGHT)).toBe(true);
    } finally {
      await d.setStatusBitmask(0x7fen);
    }
  });

  it("an unreadable preflight fails closed: 502 PREFLIGHT_READ_FAILED, never a prepared transaction", async () => {
    d.proxy.setFault({ kind: "down" });
    for (const a of ACTIONS) {
      const { status, body } = await d.get(d.app(), preparePath(a.action, VALID[a.action]));
      expect(status).toBe(502);
      expect(body.error).toBe("PREFLIGHT_READ_FAILED");
    }
  });
});

describe("(2) the manifest comes before parsing", () => {
  for (const a of ACTIONS) {
    it(`${a.action}: each needed deployment missing or zero → 503 CHAIN_UNREADY naming it, even with bad params`, async () => {
      for (const name of a.needs) {
        for (const how of ["missing", "zero"] as const) {
          const app = d.app({ config: d.configWith(withoutDeployment(name, how)) });
          for (const q of [BAD, ""]) {
            const { status, body } = await d.get(app, `/api/mcp/v1/prepare/${a.action}${q}`);
            expect(status, `${a.action} without ${name}`).toBe(503);
            expect(body).toMatchObject({
              ok: false,
              error: "CHAIN_UNREADY",
              detail: { contract: name, chain: "local" },
            });
          }
        }
      }
      // Only the gate's one read: the manifest check itself touches no RPC.
      expect(d.proxy.calls.every((c) => ethCallSelector(c.method, c.params) === PREFLIGHT)).toBe(true);
    });
  }
});

describe("(2) deployments only some requests need (needsWhen) are resolved for those requests only", () => {
  /** The requests that have the service quote their entry (no minVeOutWei); VALID's do not. */
  const QUOTED: Record<string, Record<string, string | bigint | boolean>> = {
    "collect-all": { mode: 1n, durationSeconds: 604_800n, user },
    "collect-royalties": { mode: 1n, durationSeconds: 604_800n, user },
    "harvest-rewards": { compound: true, durationSeconds: 604_800n, user },
  };
  it("the actions with a needsWhen are those that can quote a pending entry", () => {
    expect(ACTIONS.filter((a) => a.needsWhen).map((a) => a.action)).toEqual(Object.keys(QUOTED));
  });
  for (const a of ACTIONS.filter((x) => x.needsWhen)) {
    it(`${a.action}: each one missing or zero → answered without it, and 503 CHAIN_UNREADY for a quoted request`, async () => {
      const only = a.needsWhen!.contracts.filter((name) => !a.needs.includes(name));
      expect(only).toContain("FurnaceQuoter");
      for (const name of only) {
        for (const how of ["missing", "zero"] as const) {
          const app = d.app({ config: d.configWith(withoutDeployment(name, how)) });
          const answered = await d.get(app, preparePath(a.action, VALID[a.action]));
          expect(answered.status, `${a.action} without ${name}: ${JSON.stringify(answered.body)}`).toBe(200);
          const refused = await d.get(app, preparePath(a.action, QUOTED[a.action]));
          expect(refused.status, `${a.action} quoted without ${name}`).toBe(503);
          expect(refused.body).toMatchObject({
            error: "CHAIN_UNREADY",
            detail: { contract: name, chain: "local", param: "minVeOutWei" },
          });
          expect(refused.body.message).toContain(`${a.needsWhen!.when} needs it`);
        }
      }
      // Nothing of the actions' own was read (the pending amounts, a quote): only the gate's preflight.
      expect(d.proxy.calls.every((c) => ethCallSelector(c.method, c.params) === PREFLIGHT)).toBe(true);
    });
  }
});

describe("(3) strict parse: once finalized, BAD_PARAMS costs no RPC at all", () => {
  it("every action, many bad queries, zero calls at the proxy", async () => {
    const app = d.app();
    // The first request reads the preflight once (the counter works), then the gate is cached for good.
    await d.get(app, "/api/mcp/v1/prepare/withdraw-lp?x=1");
    expect(d.proxy.count()).toBe(1);
    d.proxy.reset();
    const bad = [BAD, "?x=1", "?user=0xZZ", "?amountWei=1e18", "?amountWei=01", "?mode=2", "?user=1&user=1", "?%ZZ=1"];
    for (const a of ACTIONS) {
      for (const q of bad) {
        const { status, body } = await d.get(app, `/api/mcp/v1/prepare/${a.action}${q}`);
        expect(status, `${a.action}${q}`).toBe(400);
        expect(body.error).toBe("BAD_PARAMS");
        expect(typeof body.detail.param).toBe("string");
      }
    }
    expect(d.proxy.count()).toBe(0);
    expect(d.proxy.roundTrips()).toBe(0);
  });
});

describe("(4) reads", () => {
  it("round trips per prepare: 0 without reads, 1 with an allowance, quote and/or lock count read (one batch)", async () => {
    const app = d.app();
    await d.get(app, "/api/mcp/v1/preflight"); // warm the shared gate
    const expected: Record<string, number> = {
      "lock-via-furnace": 1,
      "stake-lp": 1,
      lock: 1,
      topup: 1,
    };
    for (const a of ACTIONS) {
      d.proxy.reset();
      const { status, body } = await d.get(app, preparePath(a.action, { ...VALID[a.action], simulate: "false" }));
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.simulation.skipped).toBe("disabled");
      expect(d.proxy.roundTrips(), a.action).toBe(expected[a.action] ?? 0);
      // In that one round trip: lock-via-furnace's quote, allowance and (a new lock) the wallet's lock count; lock's
      // allowance and lock count (lockLimit.ts).
      const calls: Record<string, number> = { "lock-via-furnace": 3, lock: 2 };
      expect(d.proxy.count(), a.action).toBe(calls[a.action] ?? expected[a.action] ?? 0);
      expect(d.proxy.count("eth_simulateV1"), a.action).toBe(0);
    }
  });

  it("simulation adds exactly one round trip (one eth_simulateV1) when there is a user to simulate as", async () => {
    const app = d.app();
    await d.get(app, "/api/mcp/v1/preflight");
    const reads: Record<string, number> = { "lock-via-furnace": 1, "stake-lp": 1, lock: 1, topup: 1 };
    const user = d.seed.accounts.fresh.address;
    for (const a of ACTIONS) {
      d.proxy.reset();
      const { status, body } = await d.get(app, preparePath(a.action, { ...VALID[a.action], user }));
      expect(status, JSON.stringify(body)).toBe(200);
      expect(typeof body.simulation.ok, a.action).toBe("boolean");
      expect(d.proxy.roundTrips(), a.action).toBe((reads[a.action] ?? 0) + 1);
      expect(d.proxy.count("eth_simulateV1"), a.action).toBe(1);
    }
  });

  const faults: [string, RpcFault][] = [
    ["rpc error", { kind: "rpcError", code: -32000, message: "boom" }],
    ["malformed word", { kind: "result", value: "0x" }],
    ["61-hex word", { kind: "result", value: `0x${"0".repeat(61)}` }],
    ["null", { kind: "result", value: null }],
    ["HTTP 500", { kind: "http", status: 500 }],
    ["connection dropped", { kind: "down" }],
  ];
  for (const [label, fault] of faults) {
    it(`allowance read failure (${label}) → 502 STATE_READ_FAILED`, async () => {
      // An app per action, its gate warm: after a failed round trip an app backs the node off (api/chain/backoff.ts).
      const apps = new Map(WITH_ALLOWANCE.map((action) => [action, d.app()]));
      for (const app of apps.values()) await d.get(app, "/api/mcp/v1/preflight");
      d.proxy.setFault({ ...fault, match: (m, p) => ethCallSelector(m, p) === ALLOWANCE });
      for (const action of WITH_ALLOWANCE) {
        const { status, body } = await d.get(apps.get(action)!, preparePath(action, VALID[action]));
        expect(status, action).toBe(502);
        if (action === "lock-via-furnace" && (fault.kind === "http" || fault.kind === "down")) {
          // Quote and allowance share one batched round trip: when the trip itself fails, both reads failed,
          // and the quote (read first) is the one reported.
          expect(body).toMatchObject({ ok: false, error: "QUOTE_FAILED" });
          continue;
        }
        expect(body).toMatchObject({ ok: false, error: "STATE_READ_FAILED", detail: { read: "allowance" } });
        expect(JSON.stringify(body)).not.toContain(d.proxy.url); // no upstream URL leaks
      }
    });
  }

  it("a hung allowance read is bounded by the RPC timeout → 502 STATE_READ_FAILED", async () => {
    const rpc = createRpcClient({ url: d.proxy.url, timeoutMs: 300 });
    const app = d.app({ rpc });
    await d.get(app, "/api/mcp/v1/preflight");
    d.proxy.setFault({ kind: "delay", ms: 3_000, match: (m, p) => ethCallSelector(m, p) === ALLOWANCE });
    const t0 = Date.now();
    const { status, body } = await d.get(app, preparePath("lock", VALID.lock!));
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(status).toBe(502);
    expect(body).toMatchObject({ error: "STATE_READ_FAILED", detail: { upstream: "timeout" } });
  });

  it("lock-via-furnace: a quote failure is QUOTE_FAILED (and wins over an allowance failure)", async () => {
    const app = d.app();
    // A second app for after the HTTP failure, which backs the first one's node off (api/chain/backoff.ts).
    const second = d.app();
    await d.get(app, "/api/mcp/v1/preflight");
    await d.get(second, "/api/mcp/v1/preflight");
    d.proxy.setFault({ kind: "http", status: 503, match: (m, p) => ethCallSelector(m, p) === QUOTE });
    let r = await d.get(app, preparePath("lock-via-furnace", VALID["lock-via-furnace"]!));
    expect(r.status).toBe(502);
    expect(r.body.error).toBe("QUOTE_FAILED");
    d.proxy.setFault([
      { kind: "rpcError", match: (m, p) => ethCallSelector(m, p) === QUOTE },
      { kind: "rpcError", match: (m, p) => ethCallSelector(m, p) === ALLOWANCE },
    ]);
    r = await d.get(second, preparePath("lock-via-furnace", VALID["lock-via-furnace"]!));
    expect(r.body.error).toBe("QUOTE_FAILED");
    // The quoter's own revert reason is passed on (a new lock below the 1000-token minimum).
    d.proxy.setFault(null);
    r = await d.get(second, preparePath("lock-via-furnace", { user, claimAmountWei: 1n, durationSeconds: 604_800n }));
    expect(r.status).toBe(502);
    expect(r.body).toMatchObject({ error: "QUOTE_FAILED", detail: { reason: "MinLockAmountNotMet" } });
  });
});

describe("(5) the envelope", () => {
  it("ok, chain and chainId from the manifest, steps with value 0x0; never cached", async () => {
    const app = d.app();
    for (const a of ACTIONS) {
      const { status, body, headers } = await d.get(app, preparePath(a.action, VALID[a.action]));
      expect(status).toBe(200);
      expect(headers.get("cache-control")).toBe("no-store");
      expect(body.ok).toBe(true);
      expect(body.chain).toBe("local");
      expect(body.chainId).toBe(31337);
      const steps = body.transactions.map((t: { step: string }) => t.step);
      // Each step is one the action documents, in the documented order.
      expect(steps.every((s: string) => a.steps.includes(s as never))).toBe(true);
      expect(steps).toEqual(a.steps.filter((s) => steps.includes(s)));
      for (const t of body.transactions) expect(t).toMatchObject({ value: "0x0", chainId: 31337 });
      const keys = Object.keys(body).sort();
      // lock, topup and extend are the Furnace's on the published contracts: a `warning` unless simulated ok.
      const furnaceOnly = ["lock", "topup", "extend"].includes(a.action) && body.simulation?.ok !== true;
      expect(keys).toEqual(
        a.action === "lock-via-furnace"
          ? ["chain", "chainId", "ok", "quote", "simulation", "transactions"]
          : ["chain", "chainId", "ok", "simulation", "transactions", ...(furnaceOnly ? ["warning"] : [])],
      );
    }
  });
});
