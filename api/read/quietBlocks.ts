/**
 * A block that wrote no lock event changes no lock: its changed locks since the ve anchor are the head's before it.
 *
 * Each head's ve board starts from one statement, the locks changed since the anchor (atBlock.ts veLockDelta). Most
 * Base blocks write no lock event (about one in thirty at 520,000 events a year), and for those the board made ahead
 * is taken as it is (veBoard.ts) — once that statement, sent at the commit, has said the changes are the same. The
 * block's first reader waited for it: 1–3 ms on a database connection idle since the last block
 * (`bench/first-reader.ts`), most of what it waited.
 *
 * The commit's notification now says whether anything wrote the lock events since the last one (indexSignal.ts: a
 * statement trigger counts every write to `lock_event`, in any transaction, and the checkpoint's NOTIFY carries the
 * count). Head P's changes were read by a statement sent once P was notified with count W; head N > P notified with
 * the same W had no write between P's commit and N's: no event above P, none at or below it changed. The statement's
 * rows at N (the locks with an event after the anchor, up to N, each at its newest event up to N) are then its rows at
 * P, so N's changes are taken from P's without a statement, and the board made ahead is taken at the notification.
 *
 * Still checked: the statement runs for N anyway, after, with nobody waiting for it (the cost it had before), sent
 * CONFIRM_AFTER_MS after N was taken: not at the commit, when the block's first readers come, the head's next board is
 * being patched, and its rows (thousands at Base scale: ~5–20 ms of Postgres, ~2–3 ms of this process parsing them)
 * took the two cores those readers were waiting for (a traced bench/first-reader.ts run with bursts of 40 lock events:
 * the statement's rows parsed 3–8 ms after the notification, while the first requests were in flight). If it
 * says otherwise — a write the count missed (a second writer beside Ponder racing the count, a trigger an operator
 * changed) — what was made of N and above is forgotten (`onDiffered`; the next reader reads again), the count's
 * sequence is not trusted again by this process, and it is counted (`differed`, an alert in docs/operations.md).
 * Never taken: a count missing (a polled head, a trigger or sequence gone: indexSignal.ts), another anchor, a lower
 * block, a statement not sent after its block's notification.
 *
 * A block that wrote lock events (about one Base block in thirty) carries them in its notification when they are few
 * (indexSignal.ts: the events of the blocks after the checkpoint it replaced, up to its own). Head P's changes read as
 * above, and head N notified with P as the checkpoint it replaced, with no update, delete or truncate of the lock events
 * between P's commit and N's (a second count, of those alone, equal at both — a revert's deletes move it) and P still
 * among the heads kept (no reorg told since): N's changes are P's with N's rows applied in order — a token's newest row
 * its state (live unless burned or merged away), a token merged from dead — which is what the statement reads at N
 * (atBlock.ts veLockDelta: each changed lock at its newest event up to N, dead once merged from). Where the rows cannot
 * decide (a token dead at P with a live row: a merge before P and a burn read alike), the statement is waited as
 * before. Counted `carried`, and checked by the statement after like a quiet block.
 */
import type { Address } from "viem";
import { extendBasis } from "./basisLines";
import type { LockChange, SealBasis, VeLock, VeLocksAnswer } from "./contract";
import { sameChanges } from "./veBoard";
import { inTokenOrder, madeInTokenOrder } from "./veRanking";

type At = { block: bigint; time: bigint };

/** What the process was told of each head's write count (notifiedHead.ts). */
export type WritesTold = {
  /** The count notified with `block`'s commit, while it is one of the last heads told. */
  writesAt(block: bigint): string | undefined;
  /** The lock events notified with `block`'s commit ("<rewrites>:<old block>:<rows>"), while it is kept. */
  carriedAt?(block: bigint): string | undefined;
  /** The newest head told and its count. */
  readonly lastWrites: { block: bigint; writes: string | undefined } | undefined;
};

/** What became of a block's changes: taken from an earlier head's (`reused`), then confirmed or contradicted. */
export type QuietOutcome = "reused" | "carried" | "confirmed" | "differed";

/** How long after a block's changes are taken the statement that checks them is sent (see above). */
export const CONFIRM_AFTER_MS = 250;

export type QuietBlocksOptions = {
  told: WritesTold;
  onOutcome?: (outcome: QuietOutcome) => void;
  /** A block's changes were taken and the statement after said otherwise: forget what was made of it and above. */
  onDiffered: (block: bigint) => void;
};

type Read = { from: string; block: bigint; writes: string; answer: VeLocksAnswer<LockChange> };

/** The sequence a count is of ("<oid>.<n>"): a new sequence (installed again) is another. */
const sequenceOf = (writes: string) => writes.slice(0, writes.indexOf("."));

/** A lock event carried by a notification: the columns veLockDelta reads (indexSignal.ts CARRIED_COLUMNS). */
export type CarriedRow = {
  tokenId: bigint;
  /** Lower-case; "" once burned. */
  owner: string;
  amount: bigint;
  lockEnd: bigint;
  autoMax: boolean;
  burned: boolean;
  fromTokenId: bigint | null;
  block: bigint;
  logIndex: bigint;
};

/**
 * What a notification carried: the rewrites count at its commit, the checkpoint's block it replaced, the rows (and
 * their text: a ranking made of them is sealed by it, api/read/cursorSeal.ts).
 */
export type Carried = { rewrites: string; from: bigint; rows: CarriedRow[]; body: string };

const DIGITS = /^\d+$/;
const OWNER = /^0x[0-9a-f]{40}$/;

/** Parses a notification's carried lock events; undefined when anything in it is not as the trigger writes it. */
export function parseCarried(text: string): Carried | undefined {
  const [rewrites, from, body, extra] = text.split(":");
  if (rewrites === undefined || !/^\d+\.\d+$/.test(rewrites) || from === undefined || !DIGITS.test(from))
    return undefined;
  if (body === undefined || extra !== undefined) return undefined;
  const rows: CarriedRow[] = [];
  for (const line of body === "" ? [] : body.split(";")) {
    const f = line.split(",");
    if (f.length !== 9) return undefined;
    const [token, owner, amount, end, auto, burned, merged, block, log] = f as [string, ...string[]];
    const digits = [token, amount, end, block, log];
    if (!digits.every((d) => d !== undefined && DIGITS.test(d))) return undefined;
    if (owner === undefined || (owner !== "" && !OWNER.test(owner))) return undefined;
    if ((auto !== "t" && auto !== "f") || (burned !== "t" && burned !== "f")) return undefined;
    if (merged === undefined || (merged !== "" && !DIGITS.test(merged))) return undefined;
    rows.push({
      tokenId: BigInt(token),
      owner,
      amount: BigInt(amount!),
      lockEnd: BigInt(end!),
      autoMax: auto === "t",
      burned: burned === "t",
      fromTokenId: merged === "" ? null : BigInt(merged),
      block: BigInt(block!),
      logIndex: BigInt(log!),
    });
  }
  return { rewrites, from: BigInt(from), rows, body };
}

/**
 * The locks changed since the anchor at block `to`, from those changed up to block `from` (`before`) and the lock events
 * after `from` up to `to` (`rows`, in block and log order), as the statement reads them at `to`; undefined where the
 * rows cannot decide (out of range or order, a token dead at `from` with a live row, a live row without an owner).
 */
export function applyCarried(
  before: readonly LockChange[],
  rows: readonly CarriedRow[],
  from: bigint,
  to: bigint,
): LockChange[] | undefined {
  const newest = new Map<bigint, CarriedRow>();
  const mergedFrom = new Set<bigint>();
  let last: CarriedRow | undefined;
  for (const r of rows) {
    if (r.block <= from || r.block > to) return undefined;
    if (last !== undefined && (r.block < last.block || (r.block === last.block && r.logIndex < last.logIndex))) {
      return undefined;
    }
    last = r;
    newest.set(r.tokenId, r);
    if (r.fromTokenId !== null) mergedFrom.add(r.fromTokenId);
  }
  // Each token's state in `before`: by a binary search where it is in token order (the statement's, and the lists
  // made here from it), else by a map of it.
  const sorted = inTokenOrder(before);
  const state = sorted ? undefined : new Map<bigint, VeLock | null>(before.map((c) => [c.tokenId, c.lock]));
  const stateOf = (tokenId: bigint): VeLock | null | undefined => {
    if (state !== undefined) return state.get(tokenId);
    const k = tokenAt(before, tokenId);
    return k < 0 ? undefined : (before[k] as LockChange).lock;
  };
  const updates = new Map<bigint, VeLock | null>();
  for (const [tokenId, r] of newest) {
    const live = !r.burned && !mergedFrom.has(tokenId);
    if (live && (r.owner === "" || stateOf(tokenId) === null)) return undefined;
    updates.set(
      tokenId,
      live ? { tokenId, owner: r.owner as Address, amount: r.amount, lockEnd: r.lockEnd, autoMax: r.autoMax } : null,
    );
  }
  for (const tokenId of mergedFrom) if (!newest.has(tokenId)) updates.set(tokenId, null);
  if (state !== undefined) {
    for (const [tokenId, lock] of updates) state.set(tokenId, lock);
    return [...state].map(([tokenId, lock]) => ({ tokenId, lock }));
  }
  // In token order: `before` with the updated tokens replaced or put in their places (the others the same entries).
  const changed = [...updates.keys()].sort((a, b) => (a < b ? -1 : 1));
  const value: LockChange[] = [];
  let k = 0;
  for (const tokenId of changed) {
    for (; k < before.length && (before[k] as LockChange).tokenId < tokenId; k++) value.push(before[k] as LockChange);
    if (k < before.length && (before[k] as LockChange).tokenId === tokenId) k++;
    value.push({ tokenId, lock: updates.get(tokenId) as VeLock | null });
  }
  for (; k < before.length; k++) value.push(before[k] as LockChange);
  return madeInTokenOrder(value);
}

/** The index of `tokenId` in a list in ascending token order, or -1. */
function tokenAt(list: readonly LockChange[], tokenId: bigint): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as LockChange).tokenId < tokenId) lo = mid + 1;
    else hi = mid;
  }
  return lo < list.length && (list[lo] as LockChange).tokenId === tokenId ? lo : -1;
}

/**
 * Head N's changes (`value`) as an answer of its own: N as notified (its rows readable); the finalized block (and the
 * build) the one P's statement read (it only moves the anchor and sets cache lifetimes: an older one is safe). No seal
 * of N was read with them: their basis is the statement they come from (P's, or the one P's came from) and the lock
 * events carried since (`lines`: none for a quiet block), which a seal read checks (api/read/cursorSeal.ts).
 */
function atHead(p: VeLocksAnswer<LockChange>, at: At, value: LockChange[], lines = ""): VeLocksAnswer<LockChange> {
  const from: SealBasis = p.basis ?? { block: p.block, seal: p.seal ?? null, lines: "" };
  const basis = extendBasis(from, lines);
  return {
    basis,
    head: { ...p.head, block: at.block, time: at.time },
    block: at.block,
    time: at.time,
    inRange: true,
    value,
    finalizedTime: p.finalizedTime,
  };
}

export class QuietBlocks {
  /** The newest head's changes read by a statement sent once it was notified, with the count it was notified with. */
  #last: Read | undefined;
  /** Sequences whose counts a statement contradicted. */
  readonly #distrusted = new Set<string>();
  /** The last notification's carried events parsed: the next block's P (its rows parsed once, not twice). */
  #parsed: { text: string; carried: Carried | undefined } | undefined;

  constructor(private readonly o: QuietBlocksOptions) {}

  /** The locks changed between `from` (the anchor) and `at`: `read`'s statement, or a quiet block's taken. */
  delta(from: At, at: At, read: () => Promise<VeLocksAnswer<LockChange>>): Promise<VeLocksAnswer<LockChange>> {
    const key = `${from.block}:${from.time}`;
    const writes = this.o.told.writesAt(at.block);
    const last = this.#last;
    if (
      writes !== undefined &&
      last !== undefined &&
      last.from === key &&
      last.writes === writes &&
      last.block < at.block &&
      !this.#distrusted.has(sequenceOf(writes))
    ) {
      return this.#take("reused", key, at, writes, atHead(last.answer, at, last.answer.value), read);
    }
    const carried = writes === undefined ? undefined : this.#carried(key, at, writes);
    if (carried !== undefined && writes !== undefined) return this.#take("carried", key, at, writes, carried, read);
    return this.#read(key, at, read);
  }

  /**
   * N's changes made without the statement: kept as the head the next block's are made from (N, the checkpoint its
   * notification will name as replaced), counted, and checked by the statement after.
   */
  #take(
    outcome: "reused" | "carried",
    key: string,
    at: At,
    writes: string,
    answer: VeLocksAnswer<LockChange>,
    read: () => Promise<VeLocksAnswer<LockChange>>,
  ): Promise<VeLocksAnswer<LockChange>> {
    this.#last = { from: key, block: at.block, writes, answer };
    this.o.onOutcome?.(outcome);
    this.#confirm(at.block, writes, answer, read);
    return Promise.resolve(answer);
  }

  /** N's changes from P's and the lock events N's notification carried, when they decide them (see above). */
  #carried(key: string, at: At, writes: string): VeLocksAnswer<LockChange> | undefined {
    const last = this.#last;
    const told = this.o.told;
    if (last === undefined || last.from !== key || last.block >= at.block) return undefined;
    if (this.#distrusted.has(sequenceOf(writes)) || told.carriedAt === undefined) return undefined;
    // P still kept as told (no reorg since), with the rewrites count at its commit equal to N's.
    if (told.writesAt(last.block) !== last.writes) return undefined;
    const atN = told.carriedAt(at.block);
    const atP = told.carriedAt(last.block);
    if (atN === undefined || atP === undefined) return undefined;
    const p = this.#parse(atP);
    const n = this.#parse(atN);
    if (n === undefined || p === undefined || n.from !== last.block || n.rewrites !== p.rewrites) return undefined;
    const value = applyCarried(last.answer.value, n.rows, last.block, at.block);
    return value === undefined ? undefined : atHead(last.answer, at, value, n.body);
  }

  #parse(text: string): Carried | undefined {
    if (this.#parsed?.text !== text) this.#parsed = { text, carried: parseCarried(text) };
    return this.#parsed.carried;
  }

  async #read(key: string, at: At, read: () => Promise<VeLocksAnswer<LockChange>>): Promise<VeLocksAnswer<LockChange>> {
    // The count is the block's only when the statement goes out after its notification and before the next's.
    const told = this.o.told.lastWrites;
    const writes = told?.block === at.block ? told.writes : undefined;
    const answer = await read();
    if (writes !== undefined && answer.inRange && (this.#last === undefined || this.#last.block <= at.block)) {
      this.#last = { from: key, block: at.block, writes, answer };
    }
    return answer;
  }

  #confirm(
    block: bigint,
    writes: string,
    taken: VeLocksAnswer<LockChange>,
    read: () => Promise<VeLocksAnswer<LockChange>>,
  ): void {
    const check = () =>
      // N's count no longer told: a reorg since (its counts cleared: notifiedHead.ts) replaced N and forgot what was
      // made of it, and the statement would read the other branch's N; or more heads came within the delay than are
      // kept (a catch-up), and the next taken block's check reads the same count's changes.
      this.o.told.writesAt(block) !== writes
        ? undefined
        : // From a timer: a statement that throws as it is sent (a full lane) is a rejection, not an uncaught error.
          Promise.resolve()
            .then(read)
            .then(
              (answer) => {
                if (!answer.inRange) return;
                if (sameChanges(answer.value, taken.value)) {
                  this.o.onOutcome?.("confirmed");
                  return;
                }
                this.#distrusted.add(sequenceOf(writes));
                this.#last = undefined;
                this.o.onOutcome?.("differed");
                this.o.onDiffered(block);
              },
              // A failed statement says nothing either way (the index's reads report their own failures).
              () => {},
            );
    setTimeout(check, CONFIRM_AFTER_MS).unref();
  }
}
