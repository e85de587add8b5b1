import fc from "fast-check";
import { type Address, createWalletClient, type Hex, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { revertError, type SimulatedError } from "../../../../api/chain/simulate";
import type { PrepareEnvelope } from "../../../../api/mcp/v1/prepare";
import type { SimulationJson } from "../../../../api/mcp/v1/prepare/simulation";
import { DEVNET_ABIS, sendTx } from "../../../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { preparePath } from "../../../support/execution";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";

// Simulation tells the truth: for every action, generated inputs over the seeded devnet's varied wallets
// (locks plain/AutoMax/expired, 32 locks, LP stakers, an empty wallet) are prepared, and the batch is then
// sent exactly as given — from the user's own (impersonated) address, with the `gas` the answer gives.
// For every step, simulation.ok must equal the receipt's status and the simulated error the one the
// transaction actually reverted with (read back with debug_traceTransaction). Nothing here knows which
// contract version runs on the devnet or which error names it uses: the comparison is generic, so it
// holds on the devnet before and after its functions are restricted to the Furnace.
// Each run starts from the same snapshot of the chain, so runs are independent and the chain stays small.

const E18 = 10n ** 18n;
const DAY = 86_400n;
const RUNS = 8; // per action: ≤ 8 batches of ≤ 2 transactions each, so the chain work stays bounded

const ROLES = ["alice", "bob", "carol", "dave", "capped", "idle", "fresh"] as const;
const userArb = fc.constantFrom(...ROLES).map((r) => DEVNET_ACCOUNTS[r].address);

let d: ReadsDevnet;
let app: ReturnType<ReadsDevnet["app"]>;
let lockIds: bigint[];
const seen = { ok: 0, failed: 0, errors: new Set<string>() };

beforeAll(async () => {
  d = await startReadsDevnet();
  app = d.app();
  const t = d.seed.tokenIds;
  // Live locks of several owners and kinds, an expired one, a burned one, one that never existed.
  lockIds = [t.alicePlain, t.aliceAutoMax, t.carolExpired, t.carolFurnace, t.bobMergedFrom, t.capped[0]!, 9_999n];
});
afterAll(async () => {
  // Not vacuous: the generated cases met both outcomes, and reverts of more than one kind.
  expect(seen.ok).toBeGreaterThan(0);
  expect(seen.failed).toBeGreaterThan(0);
  expect(seen.errors.size).toBeGreaterThan(1);
  await d?.stop();
});

type Rpc = { request(args: { method: string; params?: unknown }): Promise<unknown> };
const rpc = () => d.chain.publicClient as unknown as Rpc;

async function now(): Promise<bigint> {
  return (await d.chain.publicClient.getBlock()).timestamp;
}

/** The revert data of a mined, reverted transaction, from the node's call tracer. */
async function revertDataOf(hash: Hex): Promise<Hex> {
  const trace = (await rpc().request({
    method: "debug_traceTransaction",
    params: [hash, { tracer: "callTracer" }],
  })) as { output?: Hex };
  return trace.output ?? "0x";
}

/** Sends the batch from the user's address (impersonated), each transaction with the gas the answer gave. */
async function sendAsWallet(user: Address, env: PrepareEnvelope) {
  await rpc().request({ method: "anvil_impersonateAccount", params: [user] });
  await rpc().request({ method: "anvil_setBalance", params: [user, "0x56BC75E2D63100000"] });
  const wallet = createWalletClient({ account: user, chain: d.chain.chain, transport: http(d.anvil.rpcUrl) });
  const out: { ok: boolean; gasUsed: bigint; error?: SimulatedError }[] = [];
  for (const tx of env.transactions) {
    const hash = await wallet.sendTransaction({
      to: tx.to,
      data: tx.data,
      value: BigInt(tx.value),
      gas: BigInt(tx.gas!),
      chain: d.chain.chain,
    });
    const receipt = await d.chain.publicClient.waitForTransactionReceipt({ hash });
    const ok = receipt.status === "success";
    out.push({ ok, gasUsed: receipt.gasUsed, ...(ok ? {} : { error: revertError(await revertDataOf(hash)) }) });
  }
  await rpc().request({ method: "anvil_stopImpersonatingAccount", params: [user] });
  return out;
}

/** Prepare → simulate → execute from a fresh snapshot; asserts the simulation matched the chain. */
async function prepareAndCompare(action: string, params: Record<string, string | bigint | boolean>) {
  const user = params.user as Address;
  const { status, body } = await d.get(app, preparePath(action, params));
  // A quote that fails is 502 before there is a batch; invalid generated combinations are 400, a new lock for the
  // wallet with 32 locks 409 LOCK_LIMIT_REACHED: nothing to send.
  if (status !== 200) {
    expect([400, 409, 502], JSON.stringify(body)).toContain(status);
    if (status === 409) expect(body.error).toBe("LOCK_LIMIT_REACHED");
    return;
  }
  const env = body as PrepareEnvelope;
  const sim = env.simulation as Extract<SimulationJson, { blockNumber: string }>;
  expect(typeof sim.ok, JSON.stringify(sim)).toBe("boolean");
  const snapshot = await rpc().request({ method: "evm_snapshot" });
  try {
    const chain = await sendAsWallet(user, env);
    const label = `${action} ${JSON.stringify(params, (_, v) => (typeof v === "bigint" ? String(v) : v))}`;
    expect(chain.length).toBe(sim.steps.length);
    for (const [i, step] of sim.steps.entries()) {
      const onChain = chain[i]!;
      expect(step.ok, `${label} step ${step.step}: ${JSON.stringify(step.error ?? onChain.error)}`).toBe(onChain.ok);
      expect(step.error, `${label} step ${step.step}`).toEqual(onChain.error);
      expect(onChain.gasUsed).toBeLessThanOrEqual(BigInt(env.transactions[i]!.gas!));
      if (step.error) seen.errors.add(step.error.name ?? step.error.selector ?? "(no data)");
    }
    expect(sim.ok).toBe(chain.every((s) => s.ok));
    if (sim.ok) seen.ok++;
    else seen.failed++;
  } finally {
    await rpc().request({ method: "evm_revert", params: [snapshot] });
  }
}

/** `body` with alice's plain lock listed by the market role (frozen: LockListedOrFrozen), then reverted. */
async function whileListed(body: () => Promise<void>) {
  const snapshot = await rpc().request({ method: "evm_snapshot" });
  try {
    await sendTx(d.chain, DEVNET_ACCOUNTS.market.privateKey, {
      address: d.deployment.addresses.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "setListed",
      args: [d.seed.tokenIds.alicePlain, true],
    });
    await body();
  } finally {
    await rpc().request({ method: "evm_revert", params: [snapshot] });
  }
}

const lockIdArb = () => fc.constantFrom(...lockIds);
const run = (arb: fc.Arbitrary<Record<string, string | bigint | boolean>>, action: string) =>
  fc.assert(
    fc.asyncProperty(arb, (p) => prepareAndCompare(action, p)),
    { numRuns: RUNS },
  );

describe("simulation equals execution (impersonated wallet, the answer's own gas)", () => {
  it("lock: amounts within and beyond the balance, durations, AutoMax, a wallet at 32 locks", async () => {
    await prepareAndCompare("lock", {
      user: DEVNET_ACCOUNTS.capped.address,
      amountWei: 1000n * E18,
      durationSecs: 7n * DAY,
    });
    await run(
      fc.record({
        user: userArb,
        amountWei: fc.constantFrom(1000n * E18, 3000n * E18, 10n ** 30n),
        durationSecs: fc.constantFrom(7n * DAY, 90n * DAY, 365n * DAY),
      }),
      "lock",
    );
  });

  it("topup: owned, foreign, expired, burned and unknown locks", async () => {
    await prepareAndCompare("topup", {
      user: DEVNET_ACCOUNTS.carol.address,
      tokenId: d.seed.tokenIds.carolExpired,
      amountWei: E18,
    });
    const alice = DEVNET_ACCOUNTS.alice.address;
    await whileListed(async () => {
      await prepareAndCompare("topup", { user: alice, tokenId: d.seed.tokenIds.alicePlain, amountWei: E18 });
      const t = await now();
      await prepareAndCompare("extend", { user: alice, tokenId: d.seed.tokenIds.alicePlain, newEnd: t + 300n * DAY });
    });
    await run(
      fc.record({ user: userArb, tokenId: lockIdArb(), amountWei: fc.constantFrom(E18, 100n * E18, 10n ** 30n) }),
      "topup",
    );
  });

  it("extend: later, too far, earlier ends, on any lock", async () => {
    const t = await now();
    await run(
      fc.record({
        user: userArb,
        tokenId: lockIdArb(),
        newEnd: fc.constantFrom(t + 30n * DAY, t + 200n * DAY, t + 364n * DAY, t + 400n * DAY, t - DAY),
      }),
      "extend",
    );
  });

  it("lock-via-furnace: new locks and top-ups through the Furnace", async () => {
    await run(
      fc.record({
        user: userArb,
        claimAmountWei: fc.constantFrom(1000n * E18, 5000n * E18, 10n ** 30n),
        targetTokenId: fc.constantFrom(0n, 0n, ...lockIds),
        durationSeconds: fc.constantFrom(7n * DAY, 365n * DAY),
      }),
      "lock-via-furnace",
    );
  });

  it("stake-lp, unbond-lp, withdraw-lp (nothing matured for most wallets)", async () => {
    await prepareAndCompare("withdraw-lp", { user: DEVNET_ACCOUNTS.fresh.address });
    await run(fc.record({ user: userArb, amountWei: fc.constantFrom(10n ** 15n, 10n * E18, 10n ** 30n) }), "stake-lp");
    await run(fc.record({ user: userArb, amountWei: fc.constantFrom(1n, E18, 10n ** 30n) }), "unbond-lp");
    await run(fc.record({ user: userArb }), "withdraw-lp");
  });

  it("harvest-rewards, collect-all, collect-royalties (mode 0, and Furnace-locking variants)", async () => {
    await run(
      fc.oneof(
        fc.record({ user: userArb }),
        fc.record({
          user: userArb,
          compound: fc.constant(true),
          durationSeconds: fc.constant(365n * DAY),
          createAutoMax: fc.boolean(),
          minVeOutWei: fc.constantFrom(1n, 10n ** 30n),
        }),
      ),
      "harvest-rewards",
    );
    for (const action of ["collect-all", "collect-royalties"]) {
      await run(
        fc.oneof(
          fc.record({ user: userArb }),
          fc.record({
            user: userArb,
            mode: fc.constant(1n),
            durationSeconds: fc.constant(30n * DAY),
            minVeOutWei: fc.constantFrom(1n, 10n ** 30n),
          }),
        ),
        action,
      );
    }
  });
});
