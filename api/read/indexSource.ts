/**
 * Which schema the index's rows are read from (LockIndex.source: the schema behind the views, "name:oid"), as part of
 * the index's identity. A re-index into a new schema of the same Ponder build (docs/operations.md, Unrecoverable
 * reorg) names the same build, so a changed build alone does not tell the processes that their answers kept by block
 * are the old schema's rows: the source does. It is read every BRANCH_CHECK_MS (one catalog statement, no request
 * pays for it; with a branch check, after each of its reads, so its verdict is never lifted before the answers kept
 * from the old schema are forgotten), and names the shared answers' Redis keys, so replicas never trade answers of
 * two schemas either.
 */
import { BRANCH_CHECK_MS } from "./branchCheck";
import { PeriodicCheck } from "./periodicCheck";

/** The key part of an index without a source to read (a stand-in index, which never switches). */
const NO_SOURCE = "-";

export class SourceWatch {
  readonly #read: (() => Promise<string | null>) | null;
  readonly #onChanged: (from: string, to: string) => void;
  /** The source last read; undefined before the first read succeeded. */
  #source: string | null | undefined;
  readonly #reads = new PeriodicCheck(() => this.#checkOnce());

  /** `read`: LockIndex.source (absent: never switches); `onChanged`: told each change after the first read. */
  constructor(read: (() => Promise<string | null>) | null, onChanged: (from: string, to: string) => void) {
    this.#read = read;
    this.#onChanged = onChanged;
  }

  /**
   * The source for a shared answer's key: its oid (a schema dropped and made again is another), "-" for an index
   * without a source to read; null while it is unknown (never read, or not there): nothing is shared then. Read once
   * first if it never was (a process's first shared answer).
   */
  async key(): Promise<string | null> {
    if (this.#read === null) return NO_SOURCE;
    if (this.#source === undefined) await this.check();
    const source = this.#source;
    return source == null ? null : (source.split(":").at(-1) ?? source);
  }

  /** One read (joined by a second caller while it runs); a failure changes nothing and is the next read's to retry. */
  check(): Promise<void> {
    return this.#reads.check();
  }

  /** Reads every `ms` until the returned function is called; the timer never holds the process. */
  start(ms: number = BRANCH_CHECK_MS): () => void {
    return this.#reads.start(ms);
  }

  async #checkOnce(): Promise<void> {
    if (this.#read === null) return;
    const now = await this.#read();
    // No source there (the views dropped): no rows to answer from either; the source that comes back is compared.
    if (now === null) {
      this.#source ??= null;
      return;
    }
    const was = this.#source;
    this.#source = now;
    if (was != null && was !== now) this.#onChanged(was, now);
  }
}
