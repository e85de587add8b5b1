/**
 * GET /ready, the same in every process that serves the API: the index database must answer within
 * READY_PROBE_MS and hold the index of this deployment's chain; otherwise 503 with a reason, never a wait beyond the
 * bound and never an internal (an error's text stays out of the answer). Index lag does not count.
 */
import type { ReadyState } from "../http/probes";

/** How long /ready waits for the database before it answers 503 "database unreachable". */
export const READY_PROBE_MS = 500;

/**
 * What the database holds: the index (true), none yet (false), or an index of another chain than the configured one
 * ("another chain": an API configured for Base over a devnet's index would label the devnet's locks as Base's).
 */
export type IndexPresence = boolean | "another chain";

/**
 * `indexPresent` asks the database whether the index is there (true: ready; false: "index missing"; "another
 * chain": "index of another chain"); a rejection or no answer within `ms` is "database unreachable".
 */
export function boundedReadiness(
  indexPresent: () => Promise<IndexPresence>,
  ms: number = READY_PROBE_MS,
): () => Promise<ReadyState> {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<ReadyState>((resolve) => {
      timer = setTimeout(() => resolve({ ready: false, reason: "database unreachable" }), ms);
    });
    const probe = indexPresent().then(
      (present): ReadyState =>
        present === "another chain"
          ? { ready: false, reason: "index of another chain" }
          : present
            ? { ready: true }
            : { ready: false, reason: "index missing" },
      (): ReadyState => ({ ready: false, reason: "database unreachable" }),
    );
    try {
      return await Promise.race([probe, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}
