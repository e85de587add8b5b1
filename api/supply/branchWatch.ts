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
 */
import { numberToHex } from "viem";
import type { RpcClient } from "../chain/rpc";
import { blockHashOf } from "./reads";

/**
 * The check's interval: two Base blocks (2 s each), so a reorged-away figure is dropped within about two blocks of
 * the reorg while it is polled, and at most one small call per replica per 4 s (75 per 5-minute window) for the node,
 * whatever the request rate.
 */
export const SUPPLY_BRANCH_CHECK_MS = 4_000;

/** The figures a process serves: the block they were read at, and when (Unix ms) that read began. */
export type WatchedRead = { entry: string; blockNumber: bigint; blockHash: string; readAtMs: number };

export type BranchWatchOptions = {
  rpc: RpcClient;
  intervalMs?: number;
  /** One check's deadline (the supply read's). */
  timeoutMs: number;
  /** The chain no longer holds the block `read` was made at: drop its figures. */
  onOrphan: (read: WatchedRead, canonicalHash: string | null) => void;
};

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
      const hash = blockHashOf(raw, read.blockNumber);
      if (hash === read.blockHash) return;
      if (current === read) current = null;
      options.onOrphan(read, hash);
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
