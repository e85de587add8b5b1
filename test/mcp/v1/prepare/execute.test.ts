import { type Address, decodeFunctionData, getAddress, parseEther, type TransactionReceipt } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AssetTokenAbi, ClaimAllHelperAbi, ShareholderRoyaltiesAbi } from "../../../../abis";
import type { createApp } from "../../../../api/app";
import { DEVNET_ABIS, sendTx } from "../../../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import {
  blockTime,
  execute,
  executeAs,
  lockEvents,
  prepareOk,
  simulatedError,
  walletSees,
} from "../../../support/execution";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";

// Executed on the devnet (issue 6 §5): for every action the returned transactions are sent in order from
// the user's own account, and the on-chain effect is asserted from the chain itself. One user (`fresh`:
// tokens and LP, nothing else) walks through all ten actions; the deployer accrues royalties and rewards.

const E18 = 10n ** 18n;
const DAY = 86_400n;
const user = DEVNET_ACCOUNTS.fresh;
const deployer = DEVNET_ACCOUNTS.deployer;

let d: ReadsDevnet;
let app: ReturnType<typeof createApp>;
let A: ReadsDevnet["deployment"]["addresses"];

beforeAll(async () => {
  d = await startReadsDevnet();
  A = d.deployment.addresses;
  app = d.app();
  // The Furnace pays what VeLockNFT pulls when it sends the prepared lock/topup calldata itself.
  await sendTx(d.chain, deployer.privateKey, {
    address: A.AssetToken,
    abi: DEVNET_ABIS.AssetToken,
    functionName: "mint",
    args: [A.Furnace, 10_000n * E18],
  });
});
afterAll(async () => {
  await d?.stop();
});

const read = <T>(address: Address, abi: readonly unknown[], functionName: string, args: readonly unknown[] = []) =>
  d.chain.publicClient.readContract({ address, abi, functionName, args } as never) as Promise<T>;
const furnaceBalance = () => read<bigint>(A.AssetToken, DEVNET_ABIS.AssetToken, "balanceOf", [A.Furnace]);
const tokenBalance = () => read<bigint>(A.AssetToken, DEVNET_ABIS.AssetToken, "balanceOf", [user.address]);
const lpBalance = () => read<bigint>(A.LpToken, DEVNET_ABIS.LpToken, "balanceOf", [user.address]);
const lockInfo = async (id: bigint) => {
  const [amount, lockEnd, autoMax] = await read<[bigint, bigint, boolean, boolean]>(
    A.VeLockNFT,
    DEVNET_ABIS.VeLockNFT,
    "getLockInfo",
    [id],
  );
  return { amount, lockEnd, autoMax };
};
const ethSpent = (receipts: TransactionReceipt[]) => receipts.reduce((s, r) => s + r.gasUsed * r.effectiveGasPrice, 0n);
const ethBalance = () => d.chain.publicClient.getBalance({ address: user.address });
const accrueRoyalties = (value: bigint) =>
  sendTx(d.chain, deployer.privateKey, {
    address: A.ShareholderRoyalties,
    abi: DEVNET_ABIS.ShareholderRoyalties,
    functionName: "accrue",
    args: [user.address],
    value,
  });
const accrueRewards = (amount: bigint) =>
  sendTx(d.chain, deployer.privateKey, {
    address: A.LpStakingVault7D,
    abi: DEVNET_ABIS.LpStakingVault7D,
    functionName: "accrueRewards",
    args: [user.address, amount],
  });
const approveDirect = (spender: Address, amount: bigint) =>
  sendTx(d.chain, user.privateKey, {
    address: A.AssetToken,
    abi: DEVNET_ABIS.AssetToken,
    functionName: "approve",
    args: [spender, amount],
  });

/** The quote route's answer for the same entry (the value an assistant passes as minVeOutWei). */
async function quote(params: Record<string, string | bigint | boolean>) {
  const q = new URLSearchParams(Object.entries({ user: user.address, ...params }).map(([k, v]) => [k, String(v)]));
  const { status, body } = await d.get(app, `/api/mcp/v1/quote/lock-via-furnace?${q}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body as { principalClaimWei: string; bonusClaimWei: string; veOutWei: string; minVeOutWei: string };
}

function expectApprove(
  tx: { step: string; to: string; data: `0x${string}` },
  token: Address,
  spender: Address,
  amount: bigint,
) {
  expect(tx.step).toBe("approve");
  expect(getAddress(tx.to)).toBe(getAddress(token));
  const { functionName, args } = decodeFunctionData({ abi: AssetTokenAbi, data: tx.data });
  expect(functionName).toBe("approve");
  expect(getAddress(args![0] as Address)).toBe(getAddress(spender));
  expect(args![1]).toBe(amount);
}

let lockA: bigint; // plain 30-day lock: topped up, extended, later the target of collect-all mode 1

// prepare/lock, topup and extend encode VeLockNFT's createLockFor / addToLockFor / extendLockToFor as the spec
// says; on Base (and on this devnet) those accept only the Furnace. So each test shows both sides: the batch as
// the user's wallet sends it (the approve passes, the call reverts NotAuthorized, as the answer's simulation said),
// and the same calldata sent by the Furnace (impersonated), doing exactly what it says.
describe("lock, topup, extend (VeLockNFT, Furnace-only)", () => {
  it("lock: from the wallet NotAuthorized (as simulated); from the Furnace a lock with the right amount and end", async () => {
    const env = await prepareOk(d, app, "lock", {
      user: user.address,
      amountWei: 1500n * E18,
      durationSecs: 30n * DAY,
    });
    expect(env.transactions.map((t) => t.step)).toEqual(["approve", "lock"]);
    expectApprove(env.transactions[0]!, A.AssetToken, A.VeLockNFT, 1500n * E18);
    expect(await walletSees(d, user.privateKey, env)).toEqual({ step: "lock", error: "NotAuthorized" });
    expect(simulatedError(env, "lock")).toBe("NotAuthorized");

    const before = await furnaceBalance();
    const receipt = await executeAs(d, A.Furnace, env.transactions[1]!);
    const created = lockEvents(d, receipt).find((e) => e.eventName === "LockCreated")!;
    const args = created.args as { user: Address; tokenId: bigint; amount: bigint; lockEnd: bigint; autoMax: boolean };
    const t = await blockTime(d, receipt);
    expect(getAddress(args.user)).toBe(user.address);
    expect(args.amount).toBe(1500n * E18);
    expect(args.lockEnd).toBe(t + 30n * DAY);
    expect(args.autoMax).toBe(false);
    lockA = args.tokenId;
    expect(await read<Address>(A.VeLockNFT, DEVNET_ABIS.VeLockNFT, "ownerOf", [lockA])).toBe(user.address);
    expect(await lockInfo(lockA)).toEqual({ amount: 1500n * E18, lockEnd: t + 30n * DAY, autoMax: false });
    expect(await furnaceBalance()).toBe(before - 1500n * E18); // the caller pays: here the Furnace
  });

  it("lock with autoMax and 365 days; no approve step when the allowance already covers the amount", async () => {
    await approveDirect(A.VeLockNFT, 1000n * E18);
    const env = await prepareOk(d, app, "lock", {
      user: user.address,
      amountWei: 1000n * E18,
      durationSecs: 365n * DAY,
      autoMax: true,
    });
    expect(env.transactions.map((t) => t.step)).toEqual(["lock"]);
    expect(await walletSees(d, user.privateKey, env)).toEqual({ step: "lock", error: "NotAuthorized" });
    const receipt = await executeAs(d, A.Furnace, env.transactions[0]!);
    const created = lockEvents(d, receipt).find((e) => e.eventName === "LockCreated")!;
    const args = created.args as { tokenId: bigint; amount: bigint; lockEnd: bigint; autoMax: boolean };
    expect(args.autoMax).toBe(true);
    expect(args.amount).toBe(1000n * E18);
    expect(args.lockEnd).toBe((await blockTime(d, receipt)) + 365n * DAY);
  });

  it("topup: approve exactly when allowance < amount; from the Furnace the lock grows", async () => {
    await approveDirect(A.VeLockNFT, 0n);
    const env = await prepareOk(d, app, "topup", { user: user.address, tokenId: lockA, amountWei: 200n * E18 });
    expect(env.transactions.map((t) => t.step)).toEqual(["approve", "topup"]);
    expectApprove(env.transactions[0]!, A.AssetToken, A.VeLockNFT, 200n * E18);
    expect(await walletSees(d, user.privateKey, env)).toEqual({ step: "topup", error: "NotAuthorized" });
    const receipt = await executeAs(d, A.Furnace, env.transactions[1]!);
    const inc = lockEvents(d, receipt).find((e) => e.eventName === "LockAmountIncreased")!;
    expect(inc.args).toMatchObject({ tokenId: lockA, amountAdded: 200n * E18 });
    expect((await lockInfo(lockA)).amount).toBe(1700n * E18);

    // allowance == amount → no approve; allowance == amount − 1 → approve again
    await approveDirect(A.VeLockNFT, 5n * E18);
    const exact = await prepareOk(d, app, "topup", { user: user.address, tokenId: lockA, amountWei: 5n * E18 });
    expect(exact.transactions.map((t) => t.step)).toEqual(["topup"]);
    await executeAs(d, A.Furnace, exact.transactions[0]!);
    await approveDirect(A.VeLockNFT, 5n * E18 - 1n);
    const short = await prepareOk(d, app, "topup", { user: user.address, tokenId: lockA, amountWei: 5n * E18 });
    expect(short.transactions.map((t) => t.step)).toEqual(["approve", "topup"]);
    await executeAs(d, A.Furnace, short.transactions[1]!);
    expect((await lockInfo(lockA)).amount).toBe(1710n * E18);
  });

  it("extend: from the wallet NotAuthorized; from the Furnace the lock ends at newEnd", async () => {
    const { lockEnd: oldEnd } = await lockInfo(lockA);
    const newEnd = oldEnd + 10n * DAY;
    const env = await prepareOk(d, app, "extend", { user: user.address, tokenId: lockA, newEnd });
    expect(env.transactions.map((t) => t.step)).toEqual(["extend"]);
    expect(await walletSees(d, user.privateKey, env)).toEqual({ step: "extend", error: "NotAuthorized" });
    expect(simulatedError(env, "extend")).toBe("NotAuthorized");
    const receipt = await executeAs(d, A.Furnace, env.transactions[0]!);
    const ext = lockEvents(d, receipt).find((e) => e.eventName === "LockExtended")!;
    expect(ext.args).toMatchObject({ tokenId: lockA, oldEnd, newEnd });
    expect((await lockInfo(lockA)).lockEnd).toBe(newEnd);
  });
});

describe("lock-via-furnace", () => {
  it("new lock: approve to the Furnace, minVeOut = the clamped quote, the lock holds principal + bonus", async () => {
    const params = { user: user.address, claimAmountWei: 2000n * E18, durationSeconds: 90n * DAY };
    const q = await quote(params);
    const env = await prepareOk(d, app, "lock-via-furnace", params);
    expect(env.transactions.map((t) => t.step)).toEqual(["approve", "lock"]);
    expectApprove(env.transactions[0]!, A.AssetToken, A.Furnace, 2000n * E18);
    expect(env.quote).toEqual({ veOutWei: q.veOutWei, minVeOutWei: q.minVeOutWei, slippageBps: 50 });
    expect(BigInt(q.minVeOutWei)).toBe((BigInt(q.veOutWei) * 9950n) / 10_000n);
    const before = await tokenBalance();
    const receipts = await execute(d, user.privateKey, env);
    const created = lockEvents(d, receipts[1]!).find((e) => e.eventName === "LockCreated")!;
    const args = created.args as { user: Address; tokenId: bigint; amount: bigint; lockEnd: bigint };
    expect(getAddress(args.user)).toBe(user.address);
    expect(args.amount).toBe(BigInt(q.principalClaimWei) + BigInt(q.bonusClaimWei));
    expect(args.lockEnd).toBe((await blockTime(d, receipts[1]!)) + 90n * DAY);
    expect(await tokenBalance()).toBe(before - 2000n * E18);
  });

  it("top-up of an existing lock through the Furnace, with a custom slippage", async () => {
    const params = { user: user.address, claimAmountWei: 100n * E18, targetTokenId: lockA, slippageBps: 300n };
    const before = (await lockInfo(lockA)).amount;
    const env = await prepareOk(d, app, "lock-via-furnace", params);
    expect(env.quote).toMatchObject({ slippageBps: 300 });
    const [, lockTx] = await execute(d, user.privateKey, env);
    const q = await quote(params); // same block state: the same quote
    const inc = lockEvents(d, lockTx!).find((e) => e.eventName === "LockAmountIncreased")!;
    expect((inc.args as { tokenId: bigint }).tokenId).toBe(lockA);
    expect((await lockInfo(lockA)).amount - before).toBe(BigInt(q.principalClaimWei) + BigInt(q.bonusClaimWei));
  });
});

describe("LP: stake, unbond, withdraw", () => {
  const staked = () => read<bigint>(A.LpStakingVault7D, DEVNET_ABIS.LpStakingVault7D, "stakedBalance", [user.address]);
  const unbondCount = () =>
    read<bigint>(A.LpStakingVault7D, DEVNET_ABIS.LpStakingVault7D, "getUnbondCount", [user.address]);

  it("stake-lp: LP approve to the vault, then staked", async () => {
    const lpBefore = await lpBalance();
    const env = await prepareOk(d, app, "stake-lp", { user: user.address, amountWei: 10n * E18 });
    expect(env.transactions.map((t) => t.step)).toEqual(["approve", "stake"]);
    expectApprove(env.transactions[0]!, A.LpToken, A.LpStakingVault7D, 10n * E18);
    await execute(d, user.privateKey, env);
    expect(await staked()).toBe(10n * E18);
    expect(await lpBalance()).toBe(lpBefore - 10n * E18);
  });

  it("unbond-lp: an unbond of the amount begins, unlocking in 7 days", async () => {
    const env = await prepareOk(d, app, "unbond-lp", { amountWei: 4n * E18 });
    expect(env.transactions.map((t) => t.step)).toEqual(["unbond"]);
    const [receipt] = await execute(d, user.privateKey, env);
    expect(await staked()).toBe(6n * E18);
    expect(await unbondCount()).toBe(1n);
    const [, amount, unlockTime] = await read<[bigint, bigint, bigint]>(
      A.LpStakingVault7D,
      DEVNET_ABIS.LpStakingVault7D,
      "getUnbondByIndex",
      [user.address, 0n],
    );
    expect(amount).toBe(4n * E18);
    expect(unlockTime).toBe((await blockTime(d, receipt!)) + 7n * DAY);
  });

  it("withdraw-lp: after 7 days the matured unbond comes back", async () => {
    await d.chain.testClient.increaseTime({ seconds: 7 * 86_400 });
    await d.chain.testClient.mine({ blocks: 1 });
    const lpBefore = await lpBalance();
    const env = await prepareOk(d, app, "withdraw-lp");
    expect(env.transactions.map((t) => t.step)).toEqual(["withdraw"]);
    await execute(d, user.privateKey, env);
    expect(await lpBalance()).toBe(lpBefore + 4n * E18);
    expect(await unbondCount()).toBe(0n);
  });
});

describe("collect and harvest", () => {
  const claimable = () =>
    read<bigint>(A.ShareholderRoyalties, DEVNET_ABIS.ShareholderRoyalties, "claimableEth", [user.address]);
  const earned = () => read<bigint>(A.LpStakingVault7D, DEVNET_ABIS.LpStakingVault7D, "earned", [user.address]);

  it("collect-royalties mode 0: the ETH arrives in the wallet", async () => {
    await accrueRoyalties(parseEther("0.5"));
    const before = await ethBalance();
    const env = await prepareOk(d, app, "collect-royalties");
    expect(env.transactions.map((t) => t.step)).toEqual(["collect"]);
    const receipts = await execute(d, user.privateKey, env);
    expect(await ethBalance()).toBe(before + parseEther("0.5") - ethSpent(receipts));
    expect(await claimable()).toBe(0n);
  });

  it("collect-royalties mode 1: the royalties become a new lock", async () => {
    await accrueRoyalties(parseEther("0.2")); // 2000 tokens at the devnet's fixed rate
    const tokens = parseEther("0.2") * 10_000n;
    const q = await quote({ claimAmountWei: tokens, durationSeconds: 60n * DAY });
    const ethBefore = await ethBalance();
    const env = await prepareOk(d, app, "collect-royalties", {
      mode: 1n,
      durationSeconds: 60n * DAY,
      minVeOutWei: q.minVeOutWei,
    });
    const receipts = await execute(d, user.privateKey, env);
    const created = lockEvents(d, receipts[0]!).find((e) => e.eventName === "LockCreated")!;
    const args = created.args as { user: Address; amount: bigint; lockEnd: bigint };
    expect(getAddress(args.user)).toBe(user.address);
    expect(args.amount).toBe(BigInt(q.principalClaimWei) + BigInt(q.bonusClaimWei));
    expect(args.lockEnd).toBe((await blockTime(d, receipts[0]!)) + 60n * DAY);
    expect(await claimable()).toBe(0n);
    expect(await ethBalance()).toBe(ethBefore - ethSpent(receipts)); // no ETH paid out
  });

  it("collect-all mode 0: royalties as ETH and LP rewards as tokens, one transaction", async () => {
    await accrueRoyalties(parseEther("0.3"));
    await accrueRewards(50n * E18);
    const [eth, tok] = [await ethBalance(), await tokenBalance()];
    const env = await prepareOk(d, app, "collect-all", { mode: 0n });
    expect(env.transactions.map((t) => t.step)).toEqual(["collect"]);
    const receipts = await execute(d, user.privateKey, env);
    expect(await ethBalance()).toBe(eth + parseEther("0.3") - ethSpent(receipts));
    expect(await tokenBalance()).toBe(tok + 50n * E18);
    expect(await claimable()).toBe(0n);
    expect(await earned()).toBe(0n);
  });

  it("collect-all mode 1: both locked into an existing lock", async () => {
    await accrueRoyalties(parseEther("0.1")); // 1000 tokens
    await accrueRewards(500n * E18);
    const total = 1500n * E18;
    const q = await quote({ claimAmountWei: total, targetTokenId: lockA });
    const before = (await lockInfo(lockA)).amount;
    const env = await prepareOk(d, app, "collect-all", { mode: 1n, targetTokenId: lockA, minVeOutWei: q.minVeOutWei });
    const receipts = await execute(d, user.privateKey, env);
    const inc = lockEvents(d, receipts[0]!).find((e) => e.eventName === "LockAmountIncreased")!;
    expect((inc.args as { tokenId: bigint }).tokenId).toBe(lockA);
    // The bonus weighs the lock's remaining time at the block that executes: quoted again at that block (as the
    // top-up test does), since a loaded machine may mine it a second after the first quote's, across a whole bps of
    // the weight (seen once: 1506.735 vs 1506.75 tokens).
    const at = await quote({ claimAmountWei: total, targetTokenId: lockA });
    expect((await lockInfo(lockA)).amount - before).toBe(BigInt(at.principalClaimWei) + BigInt(at.bonusClaimWei));
    expect(await claimable()).toBe(0n);
    expect(await earned()).toBe(0n);
  });

  // Mode 1 locks ETH, swapped with no bound but minVeOut (published Furnace.lockEthReward): given user and no
  // minVeOutWei, the service quotes the pending royalties itself (quoteEnterWithEth) and encodes that quote less
  // slippageBps.
  const encodedMinVeOut = (data: `0x${string}`) => {
    const { args } = decodeFunctionData({ abi: [...ClaimAllHelperAbi, ...ShareholderRoyaltiesAbi], data });
    return args![4] as bigint;
  };
  type Quoted = { quote: { ethAmountWei: string; veOutWei: string; minVeOutWei: string; slippageBps: number } };

  it("collect-royalties mode 1 with user, no minVeOutWei: protected by its own ETH quote, which the lock meets", async () => {
    await accrueRoyalties(parseEther("0.15"));
    const terms = { mode: 1n, durationSeconds: 90n * DAY };
    const env = await prepareOk(d, app, "collect-royalties", { ...terms, user: user.address, slippageBps: 30n });
    const { quote: q } = env as unknown as Quoted;
    // The quote route with ethAmountWei answers the same numbers at the same block (nothing mined in between).
    const route = await quote({ ethAmountWei: parseEther("0.15"), durationSeconds: 90n * DAY, slippageBps: 30n });
    expect(q).toEqual({
      ethAmountWei: String(parseEther("0.15")),
      veOutWei: route.veOutWei,
      minVeOutWei: route.minVeOutWei,
      slippageBps: 30,
    });
    expect(encodedMinVeOut(env.transactions[0]!.data)).toBe(BigInt(q.minVeOutWei));
    expect(env.simulation.ok).toBe(true);

    const receipts = await execute(d, user.privateKey, env);
    const created = lockEvents(d, receipts[0]!).find((e) => e.eventName === "LockCreated")!;
    const args = created.args as { amount: bigint; lockEnd: bigint };
    const ve = (args.amount * (args.lockEnd - (await blockTime(d, receipts[0]!)))) / (365n * DAY);
    expect(ve).toBe(BigInt(q.veOutWei)); // the quote is the chain's result
    expect(ve).toBeGreaterThanOrEqual(BigInt(q.minVeOutWei));
    expect(await claimable()).toBe(0n);
  });

  it("collect-all mode 1 with user, no minVeOutWei, into an existing lock: the top-up's ve meets the encoded minimum", async () => {
    await accrueRoyalties(parseEther("0.05")); // no LP rewards pending: the devnet's helper would lock them too
    expect(await earned()).toBe(0n);
    const env = await prepareOk(d, app, "collect-all", { mode: 1n, targetTokenId: lockA, user: user.address });
    const { quote: q } = env as unknown as Quoted;
    expect(q.slippageBps).toBe(50);
    expect(encodedMinVeOut(env.transactions[0]!.data)).toBe(BigInt(q.minVeOutWei));
    const receipts = await execute(d, user.privateKey, env);
    const inc = lockEvents(d, receipts[0]!).find((e) => e.eventName === "LockAmountIncreased")!;
    const added = (inc.args as { amountAdded: bigint }).amountAdded;
    const { lockEnd } = await lockInfo(lockA);
    const ve = (added * (lockEnd - (await blockTime(d, receipts[0]!)))) / (365n * DAY);
    expect(ve).toBeGreaterThanOrEqual(BigInt(q.minVeOutWei));
    expect(ve).toBeLessThanOrEqual(BigInt(q.veOutWei)); // a plain lock's top-up only loses time after the quote
  });

  it("collect mode 1 with user, no minVeOutWei and nothing pending: 502 QUOTE_FAILED AmountZero, no batch", async () => {
    expect(await claimable()).toBe(0n);
    const { status, body } = await d.get(
      app,
      `/api/mcp/v1/prepare/collect-royalties?mode=1&durationSeconds=604800&user=${user.address}`,
    );
    expect(status).toBe(502);
    expect(body).toMatchObject({ ok: false, error: "QUOTE_FAILED", detail: { reason: "AmountZero" } });
  });

  it("harvest-rewards: the rewards arrive as tokens", async () => {
    await accrueRewards(70n * E18);
    const before = await tokenBalance();
    const env = await prepareOk(d, app, "harvest-rewards");
    expect(env.transactions.map((t) => t.step)).toEqual(["harvest"]);
    await execute(d, user.privateKey, env);
    expect(await tokenBalance()).toBe(before + 70n * E18);
    expect(await earned()).toBe(0n);
  });

  it("harvest-rewards compound=true: the rewards become a new AutoMax lock", async () => {
    await accrueRewards(1200n * E18);
    const q = await quote({ claimAmountWei: 1200n * E18, durationSeconds: 365n * DAY, createAutoMax: true });
    const before = await tokenBalance();
    const env = await prepareOk(d, app, "harvest-rewards", {
      compound: true,
      durationSeconds: 365n * DAY,
      createAutoMax: true,
      minVeOutWei: q.minVeOutWei,
    });
    const receipts = await execute(d, user.privateKey, env);
    const created = lockEvents(d, receipts[0]!).find((e) => e.eventName === "LockCreated")!;
    const args = created.args as { user: Address; amount: bigint; autoMax: boolean };
    expect(getAddress(args.user)).toBe(user.address);
    expect(args.autoMax).toBe(true);
    expect(args.amount).toBe(BigInt(q.principalClaimWei) + BigInt(q.bonusClaimWei));
    expect(await earned()).toBe(0n);
    expect(await tokenBalance()).toBe(before); // nothing paid out: all of it locked
  });
});
