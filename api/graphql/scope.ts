/**
 * One GraphQL request's view of the index: the block every field is answered at (pinned once, from the plan), the
 * request's signal (its deadline and its client's hang-up: api/http/cancellation.ts), and each read bound to both.
 */
import type { Context } from "hono";
import type { CancelSignal } from "../chain/rpc";
import { type AnswerTurns, LARGE_ANSWER_BYTES, LARGE_PAGE_ROWS } from "../http/answerTurns";
import { requestDeadline } from "../http/cancellation";
import type { AppContext } from "../http/env";
import type { Admission } from "../read/admission";
import { type AtBlock, QueryCancelledError, type ReadAt } from "../read/contract";
import {
  type Admissible,
  admitComputation,
  guarded,
  type IndexRuntime,
  type Pinned,
  pinBlock,
  readAtBlock,
} from "../read/runtime";
import { graphqlError, timedOut, toGraphqlError } from "./errors";
import { GRAPHQL_LIMITS } from "./limits";
import type { Plan } from "./plan";

export class RequestScope {
  /** Set by the plan step (api/graphql/yoga.ts) before any resolver runs. */
  plan: Plan = { block: null, minBlock: null, rows: 0 };
  #pinned: Promise<Pinned> | undefined;
  #admitted: Promise<() => void> | undefined;
  /** An error met while executing (set by api/graphql/yoga.ts): the answer is not shared with another request. */
  failed = false;
  /**
   * Gives back a new document's compile permit (api/graphql/compileGate.ts, set by the endpoint): called when the
   * compiled query first reads (it is compiled by then) and when the request ends; harmless more than once.
   */
  compiled: () => void = () => {};
  readonly signal: CancelSignal | undefined;

  constructor(
    readonly rt: IndexRuntime,
    readonly c: Context,
    readonly admission: Admission,
    /** A list of many rows is completed and encoded in a turn of its own (api/http/answerTurns.ts). */
    readonly turns?: AnswerTurns,
  ) {
    this.signal = requestDeadline(c);
  }

  /** Waits until the request's rows fit the process's budget (api/read/admission.ts); then holds them. */
  #admit(): Promise<() => void> {
    this.#admitted ??= this.bounded(() => this.admission.acquire(Math.max(1, this.plan.rows), this.signal));
    return this.#admitted;
  }

  /** Gives the request's rows back (its answer is encoded, or it ended): once, whenever it is called. */
  release(): void {
    this.#admitted?.then(
      (release) => release(),
      () => {},
    );
  }

  /**
   * For `_meta`: the request's block. When the request reads rows at all (its plan counts some), the fields that
   * read have been called by the time this turn of the event loop ends, and the first read's own statement names
   * the block (its failure is this field's too): no statement of its own. Else the head is probed.
   */
  async meta(): Promise<Pinned> {
    if (this.#pinned === undefined && this.plan.rows > 0) await new Promise((resolve) => setImmediate(resolve));
    return this.at();
  }

  /** The request's block, its time and the index's head: read once, by whichever field asks first. */
  at(): Promise<Pinned> {
    this.compiled();
    this.#pinned ??= this.bounded(() => {
      this.#atLeast();
      const named = this.plan.block;
      return pinBlock(this.rt, this.c, named?.value ?? null, named?.param ?? "block", this.signal);
    });
    return this.#pinned;
  }

  /**
   * `work` (rankings read from `memos` at the request's block: api/read/runtime.ts blockAnswer) once the computations
   * it makes are admitted and charged, as a REST route's (admitComputation): at a past block, each ranking the memos
   * do not hold is a computation of the past lane, refused at once when the lane is full and charged to the request's
   * `graphql` budget; the head's run in the head's lane. Admitted after the pin (the request's block is the plan's,
   * pinned once for all its fields), bound to the request's signal.
   */
  async computing<R>(memos: readonly Admissible[], work: (at: Pinned) => Promise<R>): Promise<R> {
    const at = await this.at();
    return this.bounded(() => admitComputation(this.rt, this.c, memos, at.pinned ? at.block : null, () => work(at)));
  }

  /**
   * A read of the index at the request's block, bound to its signal; what the read model answers, in range. The
   * request's first read pins its block in the same statement as its rows (api/read/runtime.ts readAtBlock: the head's,
   * or the named block's), so a one-field request is one round trip; later reads are at that block.
   */
  async read<T>(read: (at: ReadAt, signal?: CancelSignal) => Promise<AtBlock<T>>): Promise<T> {
    this.compiled();
    if (this.#pinned === undefined) {
      const named = this.plan.block;
      // Set before any wait, so that a field asking for the block meanwhile (`_meta`) takes this statement's.
      const first = this.#admit().then(() =>
        this.bounded(() => {
          this.#atLeast();
          return readAtBlock(this.rt, this.c, named?.value ?? null, named?.param ?? "block", (at) =>
            read(at, this.signal),
          );
        }),
      );
      this.#pinned = first.then(({ block, time, head, pinned }) => ({ block, time, head, pinned }));
      // Its failure is answered by this field; another field waiting on the pin gets the same.
      this.#pinned.catch(() => {});
      return this.#inTurn((await first).value);
    }
    await this.#admit();
    const { block, time } = await this.at();
    const answer = await this.bounded(() => guarded(this.rt, () => read({ block, time }, this.signal)));
    // Only a reorg that took the head below the pinned block since the pin, a moment ago.
    if (!answer.inRange) {
      throw graphqlError("INDEX_UNAVAILABLE", `Block ${block} is no longer in the index (a reorg); ask again.`, {
        reason: "reorg",
      });
    }
    return this.#inTurn(answer.value);
  }

  /**
   * `value`, once a turn of the event loop is this request's if it is a list of many rows: what the execution does
   * with them next (its fields completed, the answer encoded, then written in a turn of its own by the endpoint)
   * runs after the sockets that are ready were served, one large page per turn, as the REST index pages.
   */
  async #inTurn<T>(value: T): Promise<T> {
    if (this.turns && Array.isArray(value) && value.length >= LARGE_PAGE_ROWS) {
      await this.turns.turnFor(LARGE_ANSWER_BYTES);
    }
    return value;
  }

  /** The plan's `block: { number_gte }`, for the read model (api/read/runtime.ts atLeastOf) to honour. */
  #atLeast(): void {
    const min = this.plan.minBlock;
    if (min === null) return;
    const spentMs = (this.c as AppContext).get("waitedForOthersMs");
    (this.c as AppContext).set("atLeast", { minBlock: min.value, waitMs: min.waitMs, spentMs });
  }

  /**
   * `work`, settled no later than the signal: a store that cannot cancel its statement (PGlite) is left to finish
   * on its own, unread. Failures come out in GraphQL's terms.
   */
  async bounded<T>(work: () => Promise<T>): Promise<T> {
    const signal = this.signal;
    try {
      if (signal?.aborted) throw new QueryCancelledError(signal.reason);
      if (!signal) return await work();
      let stop = () => {};
      const aborted = new Promise<never>((_, reject) => {
        stop = () => signal.removeEventListener("abort", onAbort);
        const onAbort = () => reject(new QueryCancelledError(signal.reason));
        signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        return await Promise.race([work(), aborted]);
      } finally {
        stop();
      }
    } catch (error) {
      // The IndexUnavailableError of a cancelled read (guarded) is the timeout too.
      if (signal?.aborted) throw timedOut(GRAPHQL_LIMITS.timeMs);
      throw toGraphqlError(error, GRAPHQL_LIMITS.timeMs) ?? error;
    }
  }
}
