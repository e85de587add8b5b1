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
 * Still checked: the statement runs for N anyway, after, with nobody waiting for it (the cost it had before). If it
 * says otherwise — a write the count missed (a second writer beside Ponder racing the count, a trigger an operator
 * changed) — what was made of N and above is forgotten (`onDiffered`; the next reader reads again), the count's
 * sequence is not trusted again by this process, and it is counted (`differed`, an alert in docs/operations.md).
 * Never taken: a count missing (a polled head, a trigger or sequence gone: indexSignal.ts), another anchor, a lower
 * block, a statement not sent after its block's notification.
 */
import type { LockChange, VeLocksAnswer } from "./contract";
import { sameChanges } from "./veBoard";

type At = { block: bigint; time: bigint };

/** What the process was told of each head's write count (notifiedHead.ts). */
export type WritesTold = {
  /** The count notified with `block`'s commit, while it is one of the last heads told. */
  writesAt(block: bigint): string | undefined;
  /** The newest head told and its count. */
  readonly lastWrites: { block: bigint; writes: string | undefined } | undefined;
};

/** What became of a block's changes: taken from an earlier head's (`reused`), then confirmed or contradicted. */
export type QuietOutcome = "reused" | "confirmed" | "differed";

export type QuietBlocksOptions = {
  told: WritesTold;
  onOutcome?: (outcome: QuietOutcome) => void;
  /** A block's changes were taken and the statement after said otherwise: forget what was made of it and above. */
  onDiffered: (block: bigint) => void;
};

type Read = { from: string; block: bigint; writes: string; answer: VeLocksAnswer<LockChange> };

/** The sequence a count is of ("<oid>.<n>"): a new sequence (installed again) is another. */
const sequenceOf = (writes: string) => writes.slice(0, writes.indexOf("."));

export class QuietBlocks {
  /** The newest head's changes read by a statement sent once it was notified, with the count it was notified with. */
  #last: Read | undefined;
  /** Sequences whose counts a statement contradicted. */
  readonly #distrusted = new Set<string>();

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
      // The head is N as notified (its rows readable); the finalized block is the one P's statement read (it only
      // moves the anchor and sets cache lifetimes: an older one is safe).
      const { head, finalizedTime, value } = last.answer;
      const answer: VeLocksAnswer<LockChange> = {
        head: { block: at.block, time: at.time, finalized: head.finalized },
        block: at.block,
        time: at.time,
        inRange: true,
        value,
        finalizedTime,
      };
      this.o.onOutcome?.("reused");
      this.#confirm(at.block, writes, answer, read);
      return Promise.resolve(answer);
    }
    return this.#read(key, at, read);
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
    read().then(
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
  }
}
