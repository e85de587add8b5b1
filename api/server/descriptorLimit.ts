/**
 * How many connections the API server may hold in total: below the process's open-file limit, so the
 * descriptors the process needs for its own work (Postgres and Redis pools, sockets to the node, files)
 * are never taken by clients. Node raises the soft limit to the hard one at start, so the value read here is
 * what the process really has.
 */
import { readFileSync } from "node:fs";

/** Kept for the process itself: at least this many, or a tenth of the limit when that is more. */
export const DESCRIPTOR_RESERVE = 256;
/** Assumed when /proc is not there to ask (not Linux): the common default soft limit. */
export const FALLBACK_DESCRIPTOR_LIMIT = 1024;

/** The soft "Max open files" of this process (`ulimit -n`), from /proc/self/limits; null when unreadable. */
export function openFileLimit(limitsText?: string): number | null {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync("/proc/self/limits", "utf8");
    } catch {
      return null;
    }
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  if (soft === undefined) return null;
  return soft === "unlimited" ? Number.POSITIVE_INFINITY : Number(soft) || null;
}

/** Refused connections answered at once (api/server/refusal.ts) at most, however large the reserve. */
export const MAX_REFUSING = 1_024;

/** The total connection cap a descriptor limit leaves room for (at least 1). */
export function connectionsWithin(descriptorLimit: number): number {
  const limit = Number.isFinite(descriptorLimit) ? descriptorLimit : 1_048_576;
  return Math.max(1, limit - Math.max(DESCRIPTOR_RESERVE, Math.ceil(limit / 10)));
}

/**
 * The server's total connection cap: MAX_CONNECTIONS when it fits under the descriptor limit, else what
 * fits (`clamped` says so, for a warning at start, as nginx warns when worker_connections exceed the limit).
 */
export function totalConnectionCap(
  configured: number | null,
  limitsText?: string,
): {
  max: number;
  /** Refused connections that may be answered at once: half of what the cap leaves of the descriptors, at most MAX_REFUSING. */
  refusing: number;
  descriptorLimit: number;
  clamped: boolean;
} {
  const descriptorLimit = openFileLimit(limitsText) ?? FALLBACK_DESCRIPTOR_LIMIT;
  const room = connectionsWithin(descriptorLimit);
  const max = configured === null ? room : Math.min(configured, room);
  const left = Number.isFinite(descriptorLimit) ? descriptorLimit - max : Number.POSITIVE_INFINITY;
  const refusing = Math.max(1, Math.min(MAX_REFUSING, Math.floor(left / 2)));
  return { max, refusing, descriptorLimit, clamped: configured !== null && configured > room };
}
