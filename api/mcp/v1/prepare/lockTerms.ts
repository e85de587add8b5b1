import { BadParamsError } from "../../../http/errors";
import { MAX_LOCK_DURATION, MIN_LOCK_DURATION } from "../../../math";

/**
 * The lock rules every prepare action that ends in a lock shares (protocol.md §1): they are checked
 * at parse time so a request the contract would certainly revert is BAD_PARAMS, before any RPC.
 */

/** The lock arguments of a Furnace entry (collect mode 1, harvest with compound, lock-via-furnace). */
export type LockTerms = {
  /** 0 mints a new lock; otherwise the lock to top up. */
  targetTokenId: bigint;
  durationSeconds: bigint;
  createAutoMax: boolean;
};

/** The parameters of a Furnace entry a request may add to a payout (collect mode 1, harvest with compound=true). */
export const LOCK_PARAMS = ["targetTokenId", "durationSeconds", "createAutoMax", "minVeOutWei"] as const;

/** Each lock parameter's value that asks for no lock: its default (protocol.md §5: "all default 0/false"). */
const NO_LOCK: Record<(typeof LOCK_PARAMS)[number], string> = {
  targetTokenId: "0",
  durationSeconds: "0",
  createAutoMax: "false",
  minVeOutWei: "0",
};

/**
 * Lock parameters given to a request that pays out instead of locking are refused, never dropped: the user asked for
 * a lock the batch would not make. A parameter given at its default (`targetTokenId=0`, `createAutoMax=false`: what a
 * client that always sends every field sends) asks for nothing and is taken, as its absence is. Called after
 * parseQuery, so a value given is canonical.
 */
export function refuseLockParams(url: string, onlyWith: string): void {
  const search = new URL(url, "http://x").searchParams;
  const given = LOCK_PARAMS.find((p) => search.has(p) && search.get(p) !== NO_LOCK[p]);
  if (given) throw new BadParamsError(`${given} only applies with ${onlyWith}.`, { param: given });
}

/** A positive uint256 check with the parameter named in the error. */
export function requireAtLeast(param: string, value: bigint, min: bigint, why: string): bigint {
  if (value < min) throw new BadParamsError(`${param} must be at least ${min} (${why}).`, { param, min: String(min) });
  return value;
}

/** [7 days, 365 days], and AutoMax only with exactly 365 days: the rules of a new lock. */
export function requireLockDuration(
  durationParam: string,
  duration: bigint,
  autoMaxParam: string,
  autoMax: boolean,
  what = "a new lock",
): void {
  if (duration < MIN_LOCK_DURATION || duration > MAX_LOCK_DURATION) {
    throw new BadParamsError(
      `${durationParam} must be between ${MIN_LOCK_DURATION} (7 days) and ${MAX_LOCK_DURATION} (365 days) for ${what}.`,
      { param: durationParam, min: String(MIN_LOCK_DURATION), max: String(MAX_LOCK_DURATION) },
    );
  }
  if (autoMax && duration !== MAX_LOCK_DURATION) {
    throw new BadParamsError(`${autoMaxParam}=true requires ${durationParam}=${MAX_LOCK_DURATION} (365 days).`, {
      param: autoMaxParam,
    });
  }
}

/**
 * A Furnace entry's lock arguments: a new lock (targetTokenId 0) needs a valid duration; a top-up of
 * an existing lock ignores the duration and cannot turn AutoMax on (AutoMax is only for a new lock).
 */
export function requireLockTerms(terms: LockTerms): LockTerms {
  if (terms.targetTokenId === 0n) {
    requireLockDuration("durationSeconds", terms.durationSeconds, "createAutoMax", terms.createAutoMax);
  } else if (terms.createAutoMax) {
    throw new BadParamsError("createAutoMax=true is only possible for a new lock (targetTokenId=0).", {
      param: "createAutoMax",
    });
  }
  return terms;
}

/** A Furnace entry with minVeOut 0 reverts (MinVeOutRequired); the value comes from /quote/lock-via-furnace. */
export function requireMinVeOut(minVeOutWei: bigint | undefined): bigint {
  if (minVeOutWei === undefined || minVeOutWei === 0n) {
    throw new BadParamsError(
      "minVeOutWei must be greater than 0 when the result is locked; take it from /quote/lock-via-furnace.",
      { param: "minVeOutWei" },
    );
  }
  return minVeOutWei;
}
