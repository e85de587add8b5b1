/**
 * A wallet's state at ONE block B, whatever the lock index's lag (issue 13, docs/api.md#preparation-api-v1--reads).
 *
 * The index only nominates token ids; the chain decides. One Multicall3 eth_call at `latest` reads, at B:
 * the four balances, veBalanceOf(user), the NFT count balanceOf(user), nextTokenId(), and for every
 * candidate id ownerOf(id) + getLockInfo(id). The candidates are the index's ids for the user plus the next
 * few ids after the highest id the index has seen (a lock minted since the indexed block). Then:
 *
 *   proven := { candidates whose ownerOf at B is the user } ⊆ the user's tokens at B, and
 *             |proven| = balanceOf(user) at B  ⇒  proven IS the user's set at B.
 *
 * No trust in the index's values, its owner column or its lag is needed: a stale row fails ownerOf, a missing
 * lock fails the count. Ids are sequential and never reused, so any lock the user gained after the indexed
 * block is a mint above the index's highest id — except a non-mint transfer in, which only the Furnace
 * receives (sell-back; protocol.md §8) and which the count exposes. When the first read does not prove the
 * set and more than the speculated ids were minted since, a second eth_call pinned to B reads every id minted
 * since the indexed block (at most MAX_NEW_MINTS) with the balances again, so the answer still comes from one
 * eth_call. This needs no eth_getLogs at all, so a node that refuses or caps log queries, or an index 10,000
 * blocks behind with few mints in between, cannot make an answer wrong or incomplete.
 *
 * Round trips: one when the index is current or nothing of the user's changed since it; two when locks were
 * minted since (more than SPECULATIVE_IDS of them, by anyone) or the user's ids changed since the hint the
 * route kept for them; never more. SQL statements: none for a repeat read the chain proves complete while the
 * index's watermark is fresh (api/read/watermark.ts); otherwise one.
 */
import { type Address, encodeFunctionData, type Hex } from "viem";
import { AssetTokenAbi, LpStakingVault7DAbi, ShareholderRoyaltiesAbi, VeLockNFTAbi } from "../../../abis";
import { decodeMember, type MulticallResult, type MulticallVia, multicallAtOneBlock } from "../../chain/multicall";
import { ViewReadError } from "../../chain/readView";
import type { RpcClient } from "../../chain/rpc";
import type { IndexedLockIds, IndexMark, LiveLock } from "../../read/contract";

/**
 * Ids after the index's highest that the first read also tries, so a fresh mint is answered in one round trip:
 * the user's own lock and one more mint by anyone. Each costs the read an ownerOf + getLockInfo (~0.04 ms of
 * node time on this machine, bench/reads-latency.ts), paid by every read, so few.
 */
export const SPECULATIVE_IDS = 2n;
/** Most ids minted since the indexed block that a second read will try; beyond it, the answer says "rpc". */
export const MAX_NEW_MINTS = 256n;

export type SnapshotContracts = {
  token: Address;
  vault: Address;
  royalties: Address;
  ve: Address;
};

export type Snapshot = {
  blockNumber: bigint;
  claimBalanceWei: bigint;
  lpStakedWei: bigint;
  pendingRoyaltiesEthWei: bigint;
  pendingLpRewardsWei: bigint;
  veBalanceWei: bigint;
  /** The user's NFT count at B. */
  lockCount: bigint;
  /** Locks proven to be the user's at B (ownerOf), with getLockInfo at B; amount > 0; by token id. */
  locks: LiveLock[];
  /** True when `locks` is every lock of the user at B (the count matches). */
  complete: boolean;
  /** eth_calls sent (1 or 2). */
  roundTrips: number;
};

const sel = (data: Hex) => data.slice(0, 10);
const word = (n: bigint) => n.toString(16).padStart(64, "0");
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
// Selectors taken from the ABIs once; per request the call data is selector + one padded argument.
const SELECTORS = {
  balanceOf: sel(encodeFunctionData({ abi: AssetTokenAbi, functionName: "balanceOf", args: [ZERO_ADDRESS] })),
  stakedBalance: sel(
    encodeFunctionData({ abi: LpStakingVault7DAbi, functionName: "stakedBalance", args: [ZERO_ADDRESS] }),
  ),
  claimableEth: sel(
    encodeFunctionData({ abi: ShareholderRoyaltiesAbi, functionName: "claimableEth", args: [ZERO_ADDRESS] }),
  ),
  earned: sel(encodeFunctionData({ abi: LpStakingVault7DAbi, functionName: "earned", args: [ZERO_ADDRESS] })),
  veBalanceOf: sel(encodeFunctionData({ abi: VeLockNFTAbi, functionName: "veBalanceOf", args: [ZERO_ADDRESS] })),
  nftBalanceOf: sel(encodeFunctionData({ abi: VeLockNFTAbi, functionName: "balanceOf", args: [ZERO_ADDRESS] })),
  nextTokenId: encodeFunctionData({ abi: VeLockNFTAbi, functionName: "nextTokenId" }),
  ownerOf: sel(encodeFunctionData({ abi: VeLockNFTAbi, functionName: "ownerOf", args: [0n] })),
  getLockInfo: sel(encodeFunctionData({ abi: VeLockNFTAbi, functionName: "getLockInfo", args: [0n] })),
};
const BASE_CALLS = 7;

function baseCalls(c: SnapshotContracts, user: Address) {
  const arg = user.slice(2).toLowerCase().padStart(64, "0");
  const call = (target: Address, selector: string) => ({ target, callData: `${selector}${arg}` as Hex });
  return [
    call(c.token, SELECTORS.balanceOf),
    call(c.vault, SELECTORS.stakedBalance),
    call(c.royalties, SELECTORS.claimableEth),
    call(c.vault, SELECTORS.earned),
    call(c.ve, SELECTORS.veBalanceOf),
    call(c.ve, SELECTORS.nftBalanceOf),
    { target: c.ve, callData: SELECTORS.nextTokenId },
  ];
}

function idCalls(ve: Address, ids: readonly bigint[]) {
  return ids.flatMap((id) => [
    { target: ve, callData: `${SELECTORS.ownerOf}${word(id)}` as Hex },
    { target: ve, callData: `${SELECTORS.getLockInfo}${word(id)}` as Hex },
  ]);
}

/** The views a snapshot reads, by ABI: each member's answer is decoded by its own view (decodeMember). */
function views(c: SnapshotContracts) {
  return {
    base: [
      { address: c.token, abi: AssetTokenAbi, functionName: "balanceOf" },
      { address: c.vault, abi: LpStakingVault7DAbi, functionName: "stakedBalance" },
      { address: c.royalties, abi: ShareholderRoyaltiesAbi, functionName: "claimableEth" },
      { address: c.vault, abi: LpStakingVault7DAbi, functionName: "earned" },
      { address: c.ve, abi: VeLockNFTAbi, functionName: "veBalanceOf" },
      { address: c.ve, abi: VeLockNFTAbi, functionName: "balanceOf" },
      { address: c.ve, abi: VeLockNFTAbi, functionName: "nextTokenId" },
    ] as const,
    ownerOf: { address: c.ve, abi: VeLockNFTAbi, functionName: "ownerOf" } as const,
    getLockInfo: { address: c.ve, abi: VeLockNFTAbi, functionName: "getLockInfo" } as const,
  };
}

/** The answer of one multicall: balances, and which candidates the user owns at its block, with their info. */
function interpret(read: MulticallResult, c: SnapshotContracts, user: Address, ids: readonly bigint[]) {
  const r = read.results;
  const v = views(c);
  const [b0, b1, b2, b3, b4, b5, b6] = v.base;
  const claim = decodeMember(b0, r[0], 0);
  const staked = decodeMember(b1, r[1], 1);
  const royalties = decodeMember(b2, r[2], 2);
  const rewards = decodeMember(b3, r[3], 3);
  const ve = decodeMember(b4, r[4], 4);
  const count = decodeMember(b5, r[5], 5);
  const next = decodeMember(b6, r[6], 6);
  const owned: LiveLock[] = [];
  const me = user.toLowerCase();
  ids.forEach((tokenId, i) => {
    const at = BASE_CALLS + 2 * i;
    // A burned or never-minted id reverts ownerOf: not the user's, and nothing to prove.
    if (!r[at]?.success) return;
    if (decodeMember(v.ownerOf, r[at], at).toLowerCase() !== me) return;
    const [amount, lockEnd, autoMax] = decodeMember(v.getLockInfo, r[at + 1], at + 1);
    owned.push({ tokenId, amount, lockEnd, autoMax });
  });
  return { claim, staked, royalties, rewards, ve, count, next, owned };
}

const range = (from: bigint, toExclusive: bigint) => {
  const out: bigint[] = [];
  for (let id = from; id < toExclusive; id++) out.push(id);
  return out;
};

const ascending = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The ids a first read tries for an index answer: the user's ids and the next few after the highest — and
 * after `alsoAfter` too (the watermark's highest id), only when it is newer than the answer's: ids at or below the
 * answer's highest that it does not name were not the user's when it was made, and only the Furnace receives a lock
 * by transfer, so trying them cost every read two calls (a hint newer than a lagging index) for nothing.
 */
export function candidatesOf(index: IndexedLockIds, alsoAfter: bigint = index.maxTokenId): bigint[] {
  const after = (max: bigint) => range(max + 1n, max + 1n + SPECULATIVE_IDS);
  const newer = alsoAfter > index.maxTokenId ? after(alsoAfter) : [];
  return [...new Set([...index.tokenIds, ...after(index.maxTokenId), ...newer])].sort(ascending);
}

type IndexAnswer = IndexedLockIds | null;

/**
 * Reads the user's snapshot. `index` is the index's answer for the user — a value, a promise, or a lookup
 * called at most once — null without an index (down, too slow): then nothing but the hint's ids can be proven.
 * `hint` is what was known of this user's ids after their last read (the state route keeps it per user): the set
 * the chain proved then, with the highest id minted then, or the index's answer when nothing was proven:
 * - with a hint and a fresh `watermark` (api/read/watermark.ts), the eth_call goes out alone and the index
 *   is only asked when the chain disproves the hint (the count does not match): a repeat read of a user whose
 *   locks did not change costs no SQL at all, and the answer's index is the proven set at the watermark;
 * - with a hint only, the eth_call goes out at once, alongside the SQL query, instead of after it;
 * - without a hint, the SQL answer comes first.
 * The proof does not depend on where the candidates came from; if the index names an id the first read did
 * not try, the second read (pinned to B) takes it in.
 */
export async function readSnapshot(opts: {
  rpc: RpcClient;
  via: MulticallVia;
  contracts: SnapshotContracts;
  user: Address;
  index: IndexAnswer | Promise<IndexAnswer> | (() => Promise<IndexAnswer>);
  hint?: IndexedLockIds;
  /** The index's mark from a recent poll; used only with a hint. */
  watermark?: IndexMark;
  /** Default MAX_NEW_MINTS. */
  maxNewMints?: bigint;
}): Promise<Snapshot & { index: IndexedLockIds | null; hint: IndexedLockIds | undefined }> {
  const { rpc, via, contracts, user, hint, watermark, maxNewMints = MAX_NEW_MINTS } = opts;
  const base = baseCalls(contracts, user);
  const firstRead = (ids: bigint[]) => multicallAtOneBlock(rpc, [...base, ...idCalls(contracts.ve, ids)], { via });
  const lookup = async () => (typeof opts.index === "function" ? opts.index() : opts.index);
  let index: IndexAnswer;
  let candidates: bigint[];
  let first: MulticallResult;
  let firstView: ReturnType<typeof interpret> | undefined;
  if (hint && watermark) {
    candidates = candidatesOf(hint, watermark.maxTokenId);
    first = await firstRead(candidates);
    const proven = interpret(first, contracts, user, candidates);
    firstView = proven;
    if (BigInt(proven.owned.length) === proven.count) {
      // The user's whole set at B, proven on chain: nothing the index could add. It stands as the index's answer,
      // at the watermark's position.
      index = { tokenIds: proven.owned.map((l) => l.tokenId), ...watermark };
    } else {
      index = await lookup();
    }
  } else if (hint) {
    candidates = candidatesOf(hint);
    [first, index] = await Promise.all([firstRead(candidates), lookup()]);
  } else {
    index = await lookup();
    candidates = index ? candidatesOf(index) : [];
    first = await firstRead(candidates);
  }
  let read = first;
  let view = firstView ?? interpret(first, contracts, user, candidates);
  let roundTrips = 1;

  if (index && BigInt(view.owned.length) !== view.count) {
    const mintedAtB = view.next - 1n; // ids are sequential: the highest id minted at B
    const from = index.maxTokenId + 1n;
    if (mintedAtB - from + 1n <= maxNewMints) {
      const wanted = [...new Set([...index.tokenIds, ...range(from, mintedAtB + 1n)])].sort(ascending);
      const tried = new Set(candidates);
      if (wanted.some((id) => !tried.has(id))) {
        // Everything again, pinned to B: the answer's balances and locks still come from one eth_call.
        read = await multicallAtOneBlock(rpc, [...base, ...idCalls(contracts.ve, wanted)], {
          via,
          block: first.blockNumber,
        });
        roundTrips = 2;
        if (read.blockNumber !== first.blockNumber) {
          throw new ViewReadError("tryBlockAndAggregate()", "malformed", {
            cause: new Error(`the read pinned to block ${first.blockNumber} answered block ${read.blockNumber}`),
          });
        }
        view = interpret(read, contracts, user, wanted);
      }
    }
  }
  const complete = BigInt(view.owned.length) === view.count;
  // The next read's best guess: the set proven at B and every id minted by B (the chain's, fresher than any
  // index); unproven, the index's answer.
  const nextHint = complete
    ? {
        tokenIds: view.owned.map((l) => l.tokenId),
        maxTokenId: view.next - 1n,
        indexedBlock: index?.indexedBlock ?? null,
      }
    : (index ?? undefined);
  return {
    blockNumber: read.blockNumber,
    claimBalanceWei: view.claim,
    lpStakedWei: view.staked,
    pendingRoyaltiesEthWei: view.royalties,
    pendingLpRewardsWei: view.rewards,
    veBalanceWei: view.ve,
    lockCount: view.count,
    // A zero-amount lock is not live (protocol.md §2); a live lock always has ≥ 1000e18.
    locks: view.owned.filter((l) => l.amount > 0n).sort((a, b) => ascending(a.tokenId, b.tokenId)),
    complete,
    roundTrips,
    index,
    hint: nextHint,
  };
}
