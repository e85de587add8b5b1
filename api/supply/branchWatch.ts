/**
 * The reorg check of the supply figures. They are read at the latest block (spec §2.2), which on Base is the
 * sequencer's unsafe head: a block that may still be reorged away. The hash of the block read is kept with the figures
 * (api/supply/figures.ts); while a process serves figures, it asks the node for that block's hash at most once per
 * SUPPLY_BRANCH_CHECK_MS (one `eth_getBlockByNumber` per process per interval, in the background: a request that finds
 * the check due starts it and is answered at once, never waits for it) and, once the chain no longer has that block at
 * that height, drops the figures here and in Redis (`onOrphan`): the next request reads the canonical chain again.
 * Figures nobody asks for cost the node nothing (no timer): after a quiet spell the first request starts the check.
 *
 * A check the node does not answer (or answers garbled) decides nothing: the figures stay, the next due request asks
 * again.
 *
 * A node that has NO block at that height is behind (a lagging node behind a load balancer, one restarted from an old
 * snapshot) or on a shorter chain: from one node the two look alike at first. It is taken for a reorg only when the
 * node's head, below that height, is younger than the block read (its timestamp later: no ancestor of that block can
 * be, timestamps grow along a chain); otherwise the figures stay (`onBehind`: the node lags) and their block is asked
 * for again at the next check, so a shorter chain is followed once it has a block at that height (a different hash) or
 * a head younger than the block read. Until then the newer figure is served, never the lagging node's older one.
 * The block's timestamp travels with the figures (the shared entry carries it, api/supply/figures.ts), so every replica
 * judges alike, also one that took the entry from Redis: without it such a replica took every shorter chain for a
 * lagging node, for as long as that chain stayed below the block.
 */
import { numberToHex } from "viem";
import type { RpcClient } from "../chain/rpc";
import { type BlockHeader, blockHeaderOf } from "./reads";

/**
 * The check's interval: two Base blocks (2 s each), so a reorged-away figure is dropped within about two blocks of
 * the reorg while it is polled, and at most one small call per replica per 4 s (75 per 5-minute window) for the node,
 * whatever the request rate.
 */
export const SUPPLY_BRANCH_CHECK_MS = 4_000;

/**
 * The figures a process serves: the block they were read at (its number, hash and timestamp in Unix seconds), and when
 * (Unix ms) that read began.
 */
export type WatchedRead = {
  entry: string;
  blockNumber: bigint;
  blockHash: string;
  timestampSec: number;
  readAtMs: number;
};

export type BranchWatchOptions = {
  rpc: RpcClient;
  intervalMs?: number;
  /** One check's deadline (the supply read's). */
  timeoutMs: number;
  /** The chain no longer holds the block `read` was made at: drop its figures. */
  onOrphan: (read: WatchedRead, canonicalHash: string | null) => void;
  /** The node has no block at the watched height and nothing says it was reorged away: it lags (`head`: its head). */
  onBehind?: (read: WatchedRead, head: BlockHeader & { number: bigint }) => void;
};

const HEX_QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

/** The node's head block (eth_getBlockByNumber("latest")): its number, hash and timestamp; garbled: throws. */
function headOf(raw: unknown): BlockHeader & { number: bigint } {
  const n = (raw as { number?: unknown } | null)?.number;
  if (typeof n !== "string" || !HEX_QUANTITY.test(n)) throw new Error("eth_getBlockByNumber(latest): no number");
  const number = BigInt(n);
  const header = blockHeaderOf(raw, number);
  if (header === null) throw new Error("eth_getBlockByNumber(latest): no block");
  return { ...header, number };
}

export type BranchWatch = {
  /** The figures this process serves from now on (a new entry replaces the one watched). */
  watch(read: WatchedRead): void;
  /** A figure of the watched entry is answered at `nowMs` (Unix ms): starts the check when it is due. Cheap: a compare. */
  served(nowMs: number): void;
};

export function branchWatch(options: BranchWatchOptions): BranchWatch {
  const intervalMs = options.intervalMs ?? SUPPLY_BRANCH_CHECK_MS;
  let current: WatchedRead | null = null;
  /** When the next check is due (Unix ms); infinite while one runs. */
  let dueAt = Number.POSITIVE_INFINITY;

  const check = async (read: WatchedRead) => {
    try {
      const raw = await options.rpc.request(
        { method: "eth_getBlockByNumber", params: [numberToHex(read.blockNumber), false] },
        { signal: AbortSignal.timeout(options.timeoutMs) },
      );
      const header = blockHeaderOf(raw, read.blockNumber);
      if (header?.hash === read.blockHash) return;
      if (header === null) {
        // No block at that height: behind, or a shorter chain. Only a head below it and younger than the block read is
        // on another chain (a head at or above it came meanwhile: asked again at the next check).
        const head = headOf(
          await options.rpc.request(
            { method: "eth_getBlockByNumber", params: ["latest", false] },
            { signal: AbortSignal.timeout(options.timeoutMs) },
          ),
        );
        if (head.number >= read.blockNumber || head.timestampSec <= read.timestampSec) {
          options.onBehind?.(read, head);
          return;
        }
      }
      if (current === read) current = null;
      options.onOrphan(read, header?.hash ?? null);
    } catch {
      // Unanswered or garbled: nothing is known, the figures stay; the next due request asks again.
    } finally {
      if (current === read) dueAt = Date.now() + intervalMs;
    }
  };

  return {
    watch(read) {
      current = read;
      // The read itself saw the block at readAt: the first check is due one interval later (at once for an entry
      // taken from Redis that was read longer ago).
      dueAt = read.readAtMs + intervalMs;
    },
    served(nowMs) {
      if (nowMs < dueAt || current === null) return;
      dueAt = Number.POSITIVE_INFINITY;
      void check(current);
    },
  };
}
