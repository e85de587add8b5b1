import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRpcClient } from "../../../../api/chain/rpc";
import { knownUnsupported } from "../../../../api/chain/simulate";
import { ACTIONS } from "../../../../api/mcp/v1/prepare";
import { lockViaFurnace } from "../../../../api/mcp/v1/prepare/furnace";
import { gasWithHeadroom } from "../../../../api/mcp/v1/prepare/simulation";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { preparePath } from "../../../support/execution";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";
import type { RpcFault } from "../../../support/rpcProxy";

// The `simulation` member on the seeded devnet, with the node's failures injected by the fault proxy:
// whatever the node does, the batch is answered (200), and a node without eth_simulateV1 is probed once.

const E18 = 10n ** 18n;
const fresh = DEVNET_ACCOUNTS.fresh.address;
const onlySimulate = (method: string) => method === "eth_simulateV1";

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

// A batch that works for a wallet on Base: approve + Furnace.enterWithClaim. (prepare/lock's createLockFor is
// Furnace-only there and here: see the NotAuthorized case below.)
const lockPath = (extra: Record<string, string> = {}) =>
  preparePath("lock-via-furnace", { user: fresh, claimAmountWei: 1000n * E18, durationSeconds: 604_800n, ...extra });

describe("simulation on a node that has eth_simulateV1", () => {
  it("a clean batch: ok, one step per transaction, gas = simulated gas with headroom", async () => {
    const { status, body } = await d.get(d.app(), lockPath());
    expect(status).toBe(200);
    const sim = body.simulation;
    expect(sim.ok).toBe(true);
    expect(sim.blockNumber).toMatch(/^[0-9]+$/);
    expect(sim.steps.map((s: { step: string }) => s.step)).toEqual(
      body.transactions.map((t: { step: string }) => t.step),
    );
    for (const [i, step] of sim.steps.entries()) {
      expect(step.ok).toBe(true);
      expect(step.error).toBeUndefined();
      expect(BigInt(body.transactions[i].gas)).toBe(gasWithHeadroom(BigInt(step.gasUsed)));
      expect(BigInt(step.gasUsed)).toBeGreaterThan(21_000n);
    }
  });

  it("state carries from step to step: the lock after a fresh approve succeeds", async () => {
    const { body } = await d.get(d.app(), lockPath());
    expect(body.transactions.map((t: { step: string }) => t.step)).toEqual(["approve", "lock"]);
    expect(body.simulation.steps[1].ok).toBe(true);
  });

  it("a reverting batch is still a 200 with the batch, the revert decoded by name and selector", async () => {
    // The idle account holds no token: pulling 1000 tokens reverts in the token contract.
    const idle = DEVNET_ACCOUNTS.idle.address;
    const { status, body } = await d.get(d.app(), lockPath({ user: idle }));
    expect(status).toBe(200);
    expect(body.transactions.length).toBe(2);
    expect(body.simulation.ok).toBe(false);
    const failed = body.simulation.steps.find((s: { ok: boolean }) => !s.ok);
    expect(failed.step).toBe("lock");
    // As on Base (published ClaimToken: OpenZeppelin v5 ERC20), after the batch's own approve: the token's
    // ERC20InsufficientBalance(sender, balance, needed), decoded with its arguments, and the balance hint.
    expect(failed.error).toEqual({
      name: "ERC20InsufficientBalance",
      args: [idle, "0", String(1000n * E18)],
      selector: "0xe450d38c",
    });
    expect(body.simulation.hint).toEqual({ message: "The wallet does not hold enough of the token for this amount." });
  });

  it("stake-lp from a wallet without LP: the LP token's OpenZeppelin 4.x reason (as the Aerodrome pool on Base), with the hint", async () => {
    const idle = DEVNET_ACCOUNTS.idle.address;
    const { status, body } = await d.get(d.app(), preparePath("stake-lp", { user: idle, amountWei: E18 }));
    expect(status).toBe(200);
    expect(body.simulation.ok).toBe(false);
    expect(body.simulation.steps.map((s: { step: string; ok: boolean }) => [s.step, s.ok])).toEqual([
      ["approve", true],
      ["stake", false],
    ]);
    expect(body.simulation.steps[1].error).toEqual({
      name: "Error",
      args: ["ERC20: transfer amount exceeds balance"],
      selector: "0x08c379a0",
    });
    expect(body.simulation.hint).toEqual({ message: "The wallet does not hold enough of the token for this amount." });
  });

  it("prepare/lock from a wallet reverts NotAuthorized in the simulation (Furnace-only, as on Base), hinting lock-via-furnace", async () => {
    const path = preparePath("lock", { user: fresh, amountWei: 1000n * E18, durationSecs: 604_800n });
    const { status, body } = await d.get(d.app(), path);
    expect(status).toBe(200);
    expect(body.simulation.ok).toBe(false);
    expect(body.simulation.steps.map((s: { step: string; ok: boolean }) => [s.step, s.ok])).toEqual([
      ["approve", true],
      ["lock", false],
    ]);
    expect(body.simulation.steps[1].error).toEqual({ name: "NotAuthorized", args: [], selector: "0xea8e4eb5" });
    expect(body.simulation.hint.message).toMatch(/lock-via-furnace/);
    expect(JSON.stringify(body.simulation.hint)).toContain("/api/mcp/v1/prepare/lock-via-furnace?");
  });

  it("the 33rd lock of a wallet is refused before any batch (LOCK_LIMIT_REACHED: the Furnace would revert InvariantViolation); the hint still names the limit", async () => {
    const capped = DEVNET_ACCOUNTS.capped.address;
    for (const path of [
      lockPath({ user: capped }),
      preparePath("lock", { user: capped, amountWei: 1000n * E18, durationSecs: 604_800n }),
    ]) {
      const { status, body } = await d.get(d.app(), path);
      expect(status, path).toBe(409);
      expect(body).toMatchObject({ ok: false, error: "LOCK_LIMIT_REACHED", detail: { locks: 32, maxLocks: 32 } });
      expect(body.transactions).toBeUndefined();
    }
    // A 32nd lock made between the prepare and the wallet's transaction still reverts: the simulation's hint says what
    // the Furnace's InvariantViolation most likely is (published Furnace._createNewLock replaces TooManyVeNFTs).
    const hint = lockViaFurnace.hint!({ user: capped, targetTokenId: 0n } as never)(
      { name: "InvariantViolation", args: [], selector: "0x302e29cb" },
      "lock",
    );
    expect(hint!.message).toMatch(/maximum of 32 locks\. Top up one of them/);
  });

  it("a top-up whose principal + bonus is under 1 token is refused before the approve (502 QUOTE_FAILED, like a quoter revert)", async () => {
    const carol = DEVNET_ACCOUNTS.carol.address;
    const target = d.seed.tokenIds.carolFurnace; // a plain lock with more than 7 days left
    for (const amount of [5n * 10n ** 17n, 95n * 10n ** 16n]) {
      const { status, body } = await d.get(
        d.app(),
        preparePath("lock-via-furnace", { user: carol, claimAmountWei: amount, targetTokenId: target }),
      );
      expect(status).toBe(502);
      expect(body).toMatchObject({
        ok: false,
        error: "QUOTE_FAILED",
        detail: { reason: "MinTopUpAmountNotMet", minWei: String(E18) },
      });
      expect(body.message).toMatch(/A top-up must add at least 1000000000000000000 wei/);
      expect(body.transactions).toBeUndefined();
    }
    // 1 token is enough: the batch is handed out and simulates clean.
    const ok = await d.get(
      d.app(),
      preparePath("lock-via-furnace", { user: carol, claimAmountWei: E18, targetTokenId: target }),
    );
    expect(ok.status).toBe(200);
  });

  it("withdraw-lp and harvest-rewards with nothing to move simulate ok, and the hint says they would move nothing", async () => {
    const { status, body } = await d.get(d.app(), preparePath("withdraw-lp", { user: fresh }));
    expect(status).toBe(200);
    expect(body.simulation.ok).toBe(true);
    expect(body.simulation.steps[0].ok).toBe(true);
    expect(body.simulation.steps[0].error).toBeUndefined();
    expect(body.simulation.hint.message).toMatch(/^Nothing to withdraw yet: .* would succeed and move nothing\.$/);
    const harvest = await d.get(d.app(), preparePath("harvest-rewards", { user: fresh }));
    expect(harvest.body.simulation.ok).toBe(true);
    expect(harvest.body.simulation.hint.message).toMatch(/^Nothing to harvest: /);
    // A wallet with rewards (dave earns in the seed): the harvest moves tokens, and no such hint.
    const earning = await d.get(d.app(), preparePath("harvest-rewards", { user: DEVNET_ACCOUNTS.dave.address }));
    expect(earning.body.simulation.ok).toBe(true);
    expect(earning.body.simulation.hint).toBeUndefined();
  });

  it("harvest-rewards compound within a day of the last: the vault's own LockCooldown, named and hinted", async () => {
    // dave compounded in the seed and has earned rewards since; his compound lock is AutoMax (365 days needed)
    const { status, body } = await d.get(
      d.app(),
      preparePath("harvest-rewards", {
        user: DEVNET_ACCOUNTS.dave.address,
        compound: true,
        targetTokenId: d.seed.tokenIds.daveCompound,
        durationSeconds: 31_536_000n,
        minVeOutWei: 1n,
      }),
    );
    expect(status).toBe(200);
    expect(body.simulation.ok).toBe(false);
    expect(body.simulation.steps[0].error).toEqual({ name: "LockCooldown", args: [], selector: "0x39be4a63" });
    expect(body.simulation.hint.message).toMatch(/at most once a day/);
  });

  it("actions without user in their spec parameters: skipped no-user without it, simulated with it", async () => {
    for (const action of ["collect-all", "collect-royalties", "harvest-rewards", "withdraw-lp"]) {
      d.proxy.reset();
      const without = await d.get(d.app(), preparePath(action));
      expect(without.status).toBe(200);
      expect(without.body.simulation).toMatchObject({ ok: null, skipped: "no-user" });
      expect(without.body.transactions[0].gas).toBeUndefined();
      expect(d.proxy.count("eth_simulateV1")).toBe(0);
      const withUser = await d.get(d.app(), preparePath(action, { user: DEVNET_ACCOUNTS.dave.address }));
      expect(withUser.status).toBe(200);
      expect(typeof withUser.body.simulation.ok).toBe("boolean");
      expect(withUser.body.transactions[0].gas).toMatch(/^0x[0-9a-f]+$/);
    }
  });

  it("simulate=false: no simulation, no gas, no round trip for it", async () => {
    const { body } = await d.get(d.app(), lockPath({ simulate: "false" }));
    expect(body.simulation).toMatchObject({ ok: null, skipped: "disabled" });
    for (const t of body.transactions) expect(t.gas).toBeUndefined();
    expect(d.proxy.count("eth_simulateV1")).toBe(0);
  });

  it("user and simulate are parsed strictly on every action", async () => {
    const app = d.app();
    for (const a of ACTIONS) {
      for (const [query, param] of [
        ["user=0xabc", "user"],
        ["simulate=yes", "simulate"],
        ["simulate=true&simulate=false", "simulate"],
        [`user=${fresh.toLowerCase().replace("a", "A")}`, "user"],
      ] as const) {
        const { status, body } = await d.get(app, `/api/mcp/v1/prepare/${a.action}?${query}`);
        expect(status, `${a.action} ${query}`).toBe(400);
        expect(body.error).toBe("BAD_PARAMS");
        expect(body.detail.param, `${a.action} ${query}`).toBe(param);
      }
      const unknown = await d.get(app, `/api/mcp/v1/prepare/${a.action}?bogus=1`);
      expect(unknown.body.detail.accepted).toEqual(expect.arrayContaining(["user", "simulate"]));
      expect(Object.keys(a.params)).toEqual(expect.arrayContaining(["user", "simulate"]));
    }
    expect(d.proxy.count()).toBe(1); // only the gate's preflight
  });
});

describe("simulation when the node fails", () => {
  const failures: [string, RpcFault][] = [
    ["rpc error", { kind: "rpcError", code: -32000, message: "boom", match: onlySimulate }],
    ["timeout", { kind: "delay", ms: 1_500, match: onlySimulate }],
    ["HTTP 500", { kind: "http", status: 500, match: onlySimulate }],
    ["connection dropped", { kind: "down", match: onlySimulate }],
    ["malformed answer", { kind: "result", value: [{ number: "0x1", calls: [] }], match: onlySimulate }],
  ];
  for (const [label, fault] of failures) {
    it(`${label}: 200 with the batch, simulation skipped node-failed, and the next request tries again`, async () => {
      const rpc = createRpcClient({ url: d.proxy.url, timeoutMs: 1_000 });
      const app = d.app({ rpc });
      d.proxy.setFault(fault);
      const { status, body } = await d.get(app, lockPath());
      expect(status).toBe(200);
      expect(body.transactions.length).toBe(2);
      expect(body.simulation).toMatchObject({ ok: null, skipped: "node-failed" });
      expect(typeof body.simulation.reason).toBe("string");
      expect(knownUnsupported(rpc)).toBe(false);
      d.proxy.setFault(null);
      const again = await d.get(app, lockPath());
      expect(again.body.simulation.ok).toBe(true);
    });
  }

  it("a node without eth_simulateV1 is detected once: later prepares send no simulation at all", async () => {
    const rpc = createRpcClient({ url: d.proxy.url, timeoutMs: 1_000 });
    const app = d.app({ rpc });
    d.proxy.setFault({ kind: "rpcError", code: -32601, message: "Method not found", match: onlySimulate });
    const first = await d.get(app, lockPath());
    expect(first.status).toBe(200);
    expect(first.body.simulation).toMatchObject({ ok: null, skipped: "unsupported" });
    expect(d.proxy.count("eth_simulateV1")).toBe(1);
    expect(knownUnsupported(rpc)).toBe(true);
    d.proxy.reset();
    for (const a of ["lock", "extend"]) {
      const path =
        a === "lock" ? lockPath() : preparePath("extend", { user: fresh, tokenId: 1n, newEnd: 9_999_999_999n });
      const { status, body } = await d.get(app, path);
      expect(status).toBe(200);
      expect(body.simulation.skipped).toBe("unsupported");
    }
    expect(d.proxy.count("eth_simulateV1")).toBe(0);
    // Another node (another client) is judged on its own.
    expect(knownUnsupported(d.rpc)).toBe(false);
  });
});
