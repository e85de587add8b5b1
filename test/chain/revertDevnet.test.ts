/**
 * Every published error a user of this API can meet on the devnet (protocol.md §8), provoked through the path a
 * user takes (a quote, a prepared call sent from the wallet, an owner action, a Furnace entry), and named by the
 * service's own decoder (api/chain/revert.ts) from the raw revert data the node returns.
 */
import { type Address, encodeFunctionData, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLISHED_ERROR_NAMES, PUBLISHED_LOCAL_ERROR_NAMES, PUBLISHED_TOKEN_ERROR_NAMES } from "../../abis/Errors";
import { type DecodedRevert, decodeRevert } from "../../api/chain/revert";
import { DEVNET_ABIS, sendTx } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { preparePath } from "../support/execution";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

const E18 = 10n ** 18n;
const DAY = 86_400n;
const { alice, bob, carol, dave, capped, fresh, market, deployer } = DEVNET_ACCOUNTS;

/**
 * Published names no devnet path reaches (pauses, checkpoint wiring, the market's pricing, genesis, …).
 * TooManyVeNFTs: as on Base, the quoter does not count locks and the Furnace turns the NFT's refusal of a 33rd
 * lock into InvariantViolation, so a user meets it only from VeLockNFT.createLockFor, which is Furnace-only.
 * CadenceNotMet: the published vault's once-a-day rule is its own LockCooldown.
 * InsufficientTokenBalance / InsufficientTokenAllowance: on this API's paths the published contracts pull tokens
 * with SafeERC20 (Furnace entries, LpStakingVault7D.stake), so what a wallet meets is the token's own revert: the
 * OpenZeppelin v5 ERC20InsufficientAllowance / ERC20InsufficientBalance of the token (PUBLISHED_TOKEN_ERROR_NAMES),
 * the OpenZeppelin 4.x reason strings of the LP token (the Aerodrome pool).
 */
const UNREACHABLE_ON_DEVNET = [
  "TooManyVeNFTs",
  "CadenceNotMet",
  "AmountTooLarge",
  "LockingPaused",
  "TradingPaused",
  "TakeoversPaused",
  "CheckpointStale",
  "VeCheckpointStale",
  "WiringMismatch",
  "ShareholderRoyaltiesNotSet",
  "InsufficientTokenBalance",
  "InsufficientTokenAllowance",
  "InsufficientEthBalance",
  "EthTransferFailed",
  "PriceExceeded",
  "DeadlineExpired",
  "ZeroAddress",
  "GenesisAlreadyFinalized",
  "GenesisWindowNotEnded",
  "CompoundQuoteFailed",
  "QuoteCallFailed",
];

let d: ReadsDevnet;
let A: ReadsDevnet["deployment"]["addresses"];

/** The raw revert data of an eth_call from `from` at the latest block (the node's `error.data`). */
async function revertData(from: Address, to: Address, data: Hex): Promise<Hex> {
  const res = await fetch(d.anvil.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_call", params: [{ from, to, data }, "latest"] }),
  });
  const body = (await res.json()) as { result?: Hex; error?: { data?: Hex } };
  if (!body.error?.data) throw new Error(`no revert from ${to} (${JSON.stringify(body)})`);
  return body.error.data;
}
const call = (abi: readonly unknown[], functionName: string, args: readonly unknown[] = []) =>
  // biome-ignore lint/suspicious/noExplicitAny: names and args are checked by viem at runtime against the ABI
  encodeFunctionData({ abi, functionName, args } as any);
const named = async (from: Address, to: Address, data: Hex) => decodeRevert(await revertData(from, to, data))?.name;
const decoded = async (from: Address, to: Address, data: Hex) => decodeRevert(await revertData(from, to, data));

/** A prepared batch's step, as the route answers it. */
async function preparedStep(action: string, params: Record<string, string | bigint | boolean>, step: string) {
  const { status, body } = await d.get(d.app(), preparePath(action, { ...params, simulate: false }));
  expect(status, JSON.stringify(body)).toBe(200);
  const tx = (body.transactions as { step: string; to: Address; data: Hex }[]).find((t) => t.step === step);
  if (!tx) throw new Error(`no ${step} step in ${action}`);
  return tx;
}
/** The quote route's decoded reason (502 QUOTE_FAILED detail.reason). */
async function quoteReason(params: Record<string, string | bigint | boolean>) {
  const q = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const { status, body } = await d.get(d.app(), `/api/mcp/v1/quote/lock-via-furnace?${q}`);
  expect(status, JSON.stringify(body)).toBe(502);
  return body.detail?.reason as string;
}

beforeAll(async () => {
  d = await startReadsDevnet();
  A = d.deployment.addresses;
});
afterAll(async () => {
  await d?.stop();
});

describe("published errors provoked on the devnet, named by api/chain/revert.ts", () => {
  const seen = new Set<string>();
  const expectNamed = (actual: string | undefined, expected: string) => {
    expect(actual).toBe(expected);
    seen.add(expected);
  };
  const expectDecoded = (actual: DecodedRevert | null, name: string, args: readonly string[]) => {
    expect(actual).toEqual({ name, args });
    seen.add(name);
  };
  const nft = (fn: string, args: readonly unknown[]) => call(DEVNET_ABIS.VeLockNFT, fn, args);
  const furnace = (args: readonly unknown[]) => call(DEVNET_ABIS.Furnace, "enterWithClaim", args);
  const vault = (fn: string, args: readonly unknown[] = []) => call(DEVNET_ABIS.LpStakingVault7D, fn, args);

  it("lock flows: NotAuthorized, InvalidDuration, InvalidToken, LockExpired, LockListedOrFrozen, InvariantViolation", async () => {
    const t = d.seed.tokenIds;
    // prepare/lock, sent from the wallet: Furnace-only on Base
    const lock = await preparedStep(
      "lock",
      { user: fresh.address, amountWei: 1000n * E18, durationSecs: 30n * DAY },
      "lock",
    );
    expectNamed(await named(fresh.address, lock.to, lock.data), "NotAuthorized");
    // unlock of an AutoMax lock (and of a lock not yet expired)
    expectNamed(await named(alice.address, A.VeLockNFT, nft("unlock", [t.aliceAutoMax])), "InvalidDuration");
    expectNamed(await named(alice.address, A.VeLockNFT, nft("unlock", [t.alicePlain])), "InvalidDuration");
    expectNamed(
      await quoteReason({ user: carol.address, claimAmountWei: E18, targetTokenId: t.carolExpired }),
      "LockExpired",
    );
    // AutoMax with a (clamped) duration other than 365 days; a top-up of an AutoMax lock likewise
    expectNamed(
      await quoteReason({
        user: fresh.address,
        claimAmountWei: 2000n * E18,
        durationSeconds: 90n * DAY,
        createAutoMax: true,
      }),
      "InvalidDuration",
    );
    expect(await quoteReason({ user: alice.address, claimAmountWei: E18, targetTokenId: t.aliceAutoMax })).toBe(
      "InvalidDuration",
    );
    // a burned or never-minted target
    expectNamed(
      await quoteReason({ user: alice.address, claimAmountWei: E18, targetTokenId: d.seed.burnedTokenIds[0]! }),
      "InvalidToken",
    );
    // a 33rd lock: the quote does not count locks; the Furnace entry reverts InvariantViolation (published
    // Furnace._createNewLock wraps the NFT's TooManyVeNFTs)
    expectNamed(
      await named(capped.address, A.Furnace, furnace([1000n * E18, 0n, 30n * DAY, false, 1n])),
      "InvariantViolation",
    );
    // listed on the market: frozen
    await sendTx(d.chain, market.privateKey, {
      address: A.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "setListed",
      args: [t.alicePlain, true],
    });
    expectNamed(
      await quoteReason({ user: alice.address, claimAmountWei: E18, targetTokenId: t.alicePlain }),
      "LockListedOrFrozen",
    );
    expectNamed(await named(alice.address, A.VeLockNFT, nft("setAutoMax", [t.alicePlain, true])), "LockListedOrFrozen");
    await sendTx(d.chain, market.privateKey, {
      address: A.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "setListed",
      args: [t.alicePlain, false],
    });
  });

  it("transfers: OnlyMineMarket, MarketMustTransferToFurnace, TransfersRestricted", async () => {
    const id = d.seed.tokenIds.alicePlain;
    expectNamed(
      await named(alice.address, A.VeLockNFT, nft("transferFrom", [alice.address, A.Furnace, id])),
      "OnlyMineMarket",
    );
    expectNamed(
      await named(market.address, A.VeLockNFT, nft("transferFrom", [alice.address, bob.address, id])),
      "MarketMustTransferToFurnace",
    );
    expectNamed(await named(alice.address, A.VeLockNFT, nft("approve", [bob.address, id])), "TransfersRestricted");
  });

  it("Furnace entries: AmountZero, MinLockAmountNotMet, MinVeOutRequired, MinVeOutNotMet; the token's own balance and allowance errors", async () => {
    expectNamed(
      await quoteReason({ user: fresh.address, claimAmountWei: 0n, durationSeconds: 30n * DAY }),
      "AmountZero",
    );
    expectNamed(
      await quoteReason({ user: fresh.address, claimAmountWei: 900n * E18, durationSeconds: 7n * DAY }),
      "MinLockAmountNotMet",
    );
    expectNamed(
      await named(alice.address, A.Furnace, furnace([1000n * E18, 0n, 30n * DAY, false, 0n])),
      "MinVeOutRequired",
    );
    expectNamed(
      await named(alice.address, A.Furnace, furnace([1000n * E18, 0n, 30n * DAY, false, 10n ** 30n])),
      "MinVeOutNotMet",
    );
    // prepare/lock-via-furnace's lock step sent without its approve step: the token's OpenZeppelin v5 error
    const step = await preparedStep(
      "lock-via-furnace",
      { user: fresh.address, claimAmountWei: 1000n * E18, durationSeconds: 30n * DAY },
      "lock",
    );
    expectDecoded(await decoded(fresh.address, step.to, step.data), "ERC20InsufficientAllowance", [
      A.Furnace,
      "0",
      String(1000n * E18),
    ]);
    // alice approved the Furnace without limit in the seed, but holds far less than this
    const aliceBalance = await d.chain.publicClient.readContract({
      address: A.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "balanceOf",
      args: [alice.address],
    });
    expectDecoded(
      await decoded(alice.address, A.Furnace, furnace([10n ** 9n * E18, 0n, 30n * DAY, false, 1n])),
      "ERC20InsufficientBalance",
      [alice.address, String(aliceBalance), String(10n ** 9n * E18)],
    );
  });

  it("enterWithClaim pulls the token before MinVeOutRequired and the destination checks (published order)", async () => {
    // published Furnace.enterWithClaim: AmountZero → registry/router config → pull → MinVeOutRequired → destination
    const t = d.seed.tokenIds;
    const noAllowance = ["ERC20InsufficientAllowance", [A.Furnace, "0", String(1000n * E18)]] as const;
    // fresh holds tokens but approved nothing: minVeOut 0, an AutoMax of 30 days, a target that does not exist,
    // a lock it does not own: all the allowance error
    for (const args of [
      [1000n * E18, 0n, 30n * DAY, false, 0n],
      [1000n * E18, 0n, 30n * DAY, true, 1n],
      [1000n * E18, 999n, 30n * DAY, false, 1n],
      [1000n * E18, t.alicePlain, 30n * DAY, false, 0n],
    ]) {
      expectDecoded(await decoded(fresh.address, A.Furnace, furnace(args)), ...noAllowance);
    }
    // AmountZero still comes first
    expectNamed(await named(fresh.address, A.Furnace, furnace([0n, 0n, 30n * DAY, false, 0n])), "AmountZero");
    // with the tokens pulled, MinVeOutRequired and the destination rules as before (alice approved in the seed)
    expectNamed(
      await named(alice.address, A.Furnace, furnace([1000n * E18, 999n, 30n * DAY, false, 0n])),
      "MinVeOutRequired",
    );
    expectNamed(
      await named(alice.address, A.Furnace, furnace([1000n * E18, 999n, 30n * DAY, false, 1n])),
      "InvalidToken",
    );
  });

  it("collect and LP: InvalidMode, AmountTooSmall, InsufficientStake, TooManyUnbonds, AutoMaxMismatch, LockCooldown", async () => {
    expectNamed(
      await named(
        alice.address,
        A.ClaimAllHelper,
        call(DEVNET_ABIS.ClaimAllHelper, "claimAll", [2, 0n, 0n, false, 0n]),
      ),
      "InvalidMode",
    );
    // (prepare/stake-lp refuses this amount as BAD_PARAMS before any read; the vault names it too)
    expectNamed(await named(dave.address, A.LpStakingVault7D, vault("stake", [10n ** 15n - 1n])), "AmountTooSmall");
    // the LP token reverts OpenZeppelin 4.x reason strings, as the Aerodrome pool does on Base: allowance first
    // (fresh holds LP but approved nothing), then the balance (dave approved the vault in the seed)
    expect(await decoded(fresh.address, A.LpStakingVault7D, vault("stake", [10n ** 30n]))).toEqual({
      name: "Error",
      args: ["ERC20: insufficient allowance"],
    });
    expect(await decoded(dave.address, A.LpStakingVault7D, vault("stake", [10n ** 30n]))).toEqual({
      name: "Error",
      args: ["ERC20: transfer amount exceeds balance"],
    });
    const unbond = await preparedStep("unbond-lp", { amountWei: 10n ** 24n }, "unbond");
    expectNamed(await named(dave.address, unbond.to, unbond.data), "InsufficientStake");
    // withdraw-lp with nothing matured does not revert (the published vault returns without a transfer)
    const withdraw = await preparedStep("withdraw-lp", {}, "withdraw");
    await expect(revertData(fresh.address, withdraw.to, withdraw.data)).rejects.toThrow(/no revert/);
    // 25 open unbonds is the most: dave opens the rest of them, then one more
    const open = await d.chain.publicClient.readContract({
      address: A.LpStakingVault7D,
      abi: DEVNET_ABIS.LpStakingVault7D,
      functionName: "getUnbondCount",
      args: [dave.address],
    });
    for (let i = open; i < 25n; i++) {
      await sendTx(d.chain, dave.privateKey, {
        address: A.LpStakingVault7D,
        abi: DEVNET_ABIS.LpStakingVault7D,
        functionName: "beginUnbond",
        args: [E18],
      });
    }
    expectNamed(await named(dave.address, A.LpStakingVault7D, vault("beginUnbond", [E18])), "TooManyUnbonds");
    // one compound per day: dave compounded in the seed, within the day
    await sendTx(d.chain, deployer.privateKey, {
      address: A.LpStakingVault7D,
      abi: DEVNET_ABIS.LpStakingVault7D,
      functionName: "accrueRewards",
      args: [dave.address, 10n * E18],
    });
    // AutoMax only for a new lock (checked before the cooldown)
    expectNamed(
      await named(
        dave.address,
        A.LpStakingVault7D,
        vault("claimRewardsAndLock", [d.seed.tokenIds.daveCompound, 365n * DAY, true, 1n]),
      ),
      "AutoMaxMismatch",
    );
    // the duration is checked for a top-up too (harvest-rewards refuses a compound top-up without one: BAD_PARAMS)
    expect(
      await named(
        dave.address,
        A.LpStakingVault7D,
        vault("claimRewardsAndLock", [d.seed.tokenIds.daveCompound, 0n, false, 1n]),
      ),
    ).toBe("InvalidDuration");
    // the vault's own LockCooldown (not the Errors library's CadenceNotMet), decoded all the same
    const compound = await preparedStep(
      "harvest-rewards",
      { compound: true, targetTokenId: d.seed.tokenIds.daveCompound, durationSeconds: 365n * DAY, minVeOutWei: 1n },
      "harvest",
    );
    expectNamed(await named(dave.address, compound.to, compound.data), "LockCooldown");
  });

  it("covers every published name but the ones no devnet path reaches", () => {
    expect([...seen].sort()).toEqual(
      [
        ...PUBLISHED_ERROR_NAMES.filter((n) => !UNREACHABLE_ON_DEVNET.includes(n)),
        ...PUBLISHED_LOCAL_ERROR_NAMES,
        ...PUBLISHED_TOKEN_ERROR_NAMES,
      ].sort(),
    );
  });
});
