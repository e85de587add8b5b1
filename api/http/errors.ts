/**
 * Every failure a client can see, as named classes, mapped to a code and an HTTP status in this
 * one table. Routes throw these; `app.onError` turns them into the envelope of spec §2.5.
 */
export const ERROR_STATUS = {
  BAD_PARAMS: 400,
  /** The HTTP request itself could not be parsed (bad request line, unknown method, conflicting framing). */
  BAD_REQUEST: 400,
  REQUEST_TIMEOUT: 408,
  /** The request line (URL) and headers together exceed the server's limit. */
  HEADERS_TOO_LARGE: 431,
  /** A restricted route (the metrics, with METRICS_TOKEN) asked without its credentials. */
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  /** `minBlock` names a block the index (or, for the state route, the node) has not reached within `waitMs`. */
  INDEX_BEHIND: 409,
  METHOD_NOT_ALLOWED: 405,
  /** requireSimulationOk=true and the prepared batch reverts in simulation: the batch is withheld. */
  SIMULATION_REVERTED: 409,
  /** A new lock asked for a wallet that already holds the most locks one wallet may (32): it would revert. */
  LOCK_LIMIT_REACHED: 409,
  /** A request body above the route's limit (POST /graphql: 64 KiB). */
  PAYLOAD_TOO_LARGE: 413,
  /** A request body in a media type the route does not read (POST /graphql: application/json only). */
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** An `Expect` other than 100-continue (RFC 9110 §10.1.1); answered before any route. */
  EXPECTATION_FAILED: 417,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  STATE_READ_FAILED: 502,
  QUOTE_FAILED: 502,
  PREFLIGHT_READ_FAILED: 502,
  GENESIS_NOT_FINALIZED: 503,
  CHAIN_UNREADY: 503,
  /** The lock index is not configured, not started, or not answering (the /api/index/v1 routes). */
  INDEX_UNAVAILABLE: 503,
  /** requireSimulationOk=true and the simulation could not run (no eth_simulateV1, the node failed). */
  SIMULATION_UNAVAILABLE: 503,
  /** The node failed just now and is being backed off (api/chain/backoff.ts): state, quote, prepare, preflight. */
  UPSTREAM_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export type ErrorEnvelope = {
  ok: false;
  error: ErrorCode;
  message: string;
  detail?: unknown;
  retryAfterSec?: number;
};

export class ApiError extends Error {
  override name = "ApiError";
  readonly status: (typeof ERROR_STATUS)[ErrorCode];
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: unknown,
    /** What went wrong underneath (kept for logs and tests; never in the response). */
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.status = ERROR_STATUS[code];
  }

  toEnvelope(): ErrorEnvelope {
    return {
      ok: false,
      error: this.code,
      message: this.message,
      ...(this.detail === undefined ? {} : { detail: this.detail }),
    };
  }
}

/**
 * A failure answered in a protocol's own body, not the envelope: GraphQL's `{ errors }` (its deadline passed while the
 * request still waited, api/graphql/endpoint.ts). The one error handler sends `body` as it is, with `status`.
 */
export class ProtocolAnswerError extends Error {
  override name = "ProtocolAnswerError";
  constructor(
    readonly body: string,
    readonly status: 200,
    readonly contentType = "application/json; charset=utf-8",
  ) {
    super("answered in the protocol's own body");
  }
}

export class BadParamsError extends ApiError {
  override name = "BadParamsError";
  constructor(message: string, detail?: { param: string; [k: string]: unknown }) {
    super("BAD_PARAMS", message, detail);
  }
}

export class NotFoundError extends ApiError {
  override name = "NotFoundError";
  constructor(message = "No such route.", detail?: unknown) {
    super("NOT_FOUND", message, detail);
  }
}

export class UnauthorizedError extends ApiError {
  override name = "UnauthorizedError";
  /** The WWW-Authenticate header a 401 must carry (RFC 9110 §11.6.1): the scheme to use (RFC 6750). */
  readonly challenge: string;
  /** `realm`: what is restricted (the metrics; the operators' webhook routes), `token`: the variable its bearer is. */
  constructor(realm = "metrics", token = "METRICS_TOKEN") {
    super("UNAUTHORIZED", `The ${realm} need Authorization: Bearer <${token}>.`);
    this.challenge = `Bearer realm="${realm}"`;
  }
}

export class MethodNotAllowedError extends ApiError {
  override name = "MethodNotAllowedError";
  constructor(method: string, allowed: readonly string[] = ["GET", "HEAD", "OPTIONS"]) {
    const use = allowed.filter((m) => m !== "OPTIONS").join(" or ");
    super("METHOD_NOT_ALLOWED", `Method ${method} is not allowed; use ${use}.`, { allowed });
  }
}

export class PayloadTooLargeError extends ApiError {
  override name = "PayloadTooLargeError";
  constructor(maxBytes: number) {
    super("PAYLOAD_TOO_LARGE", `The request body is larger than ${maxBytes} bytes.`, { maxBytes });
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  override name = "UnsupportedMediaTypeError";
  constructor(accepted: string) {
    super("UNSUPPORTED_MEDIA_TYPE", `The request body must be ${accepted}.`, { accepted });
  }
}

export class RateLimitedError extends ApiError {
  override name = "RateLimitedError";
  constructor(readonly retryAfterSec: number) {
    super("RATE_LIMITED", `Too many requests; retry after ${retryAfterSec} s.`);
  }

  override toEnvelope(): ErrorEnvelope {
    return { ...super.toEnvelope(), retryAfterSec: this.retryAfterSec };
  }
}

export class UpstreamUnavailableError extends ApiError {
  override name = "UpstreamUnavailableError";
  constructor(readonly retryAfterSec: number) {
    super(
      "UPSTREAM_UNAVAILABLE",
      `The chain node failed just now; this process asks it again in ${retryAfterSec} s. Nothing was read.`,
    );
  }

  override toEnvelope(): ErrorEnvelope {
    return { ...super.toEnvelope(), retryAfterSec: this.retryAfterSec };
  }
}

export class StateReadFailedError extends ApiError {
  override name = "StateReadFailedError";
  constructor(message = "Reading on-chain state failed upstream.", detail?: unknown, options?: { cause?: unknown }) {
    super("STATE_READ_FAILED", message, detail, options);
  }
}

export class QuoteFailedError extends ApiError {
  override name = "QuoteFailedError";
  constructor(message: string, detail?: unknown, options?: { cause?: unknown }) {
    super("QUOTE_FAILED", message, detail, options);
  }
}

export class PreflightReadFailedError extends ApiError {
  override name = "PreflightReadFailedError";
  constructor(
    message = "The launch preflight could not be read; the gate stays closed.",
    options?: { cause?: unknown },
  ) {
    super("PREFLIGHT_READ_FAILED", message, undefined, options);
  }
}

export class GenesisNotFinalizedError extends ApiError {
  override name = "GenesisNotFinalizedError";
  constructor(detail: { statusBitmask: string; bitsSet: number[]; bitsExpected: number[] }) {
    super("GENESIS_NOT_FINALIZED", "Genesis is not finalized yet; preparing transactions is closed.", detail);
  }
}

/**
 * A contract only some requests of a route use (a prepare's own quote): the request that needs it (`when`) and the
 * parameter that does without it (`param`), said in the message and named in `detail.param`.
 */
export type NeededOnlyWhen = { when: string; param: string };

export class ChainUnreadyError extends ApiError {
  override name = "ChainUnreadyError";
  constructor(contract: string, chain: string, only?: NeededOnlyWhen) {
    super(
      "CHAIN_UNREADY",
      only
        ? `${contract} is not deployed on ${chain}, and a request with ${only.when} needs it (the service quotes the ` +
            `entry itself). Give ${only.param} to do without it.`
        : `${contract} is not deployed on ${chain}.`,
      only ? { contract, chain, param: only.param } : { contract, chain },
    );
  }
}

export class IndexUnavailableError extends ApiError {
  override name = "IndexUnavailableError";
  constructor(
    reason:
      | "unconfigured"
      | "not started"
      | "not ready"
      | "unreachable"
      | "head went back"
      | "not permitted"
      | "replaced branch"
      | "another chain",
    options?: { cause?: unknown },
    /** What a reason has to say beyond it (IndexOfAnotherChainError: both chains). */
    said?: { message: string; detail: Record<string, number> },
  ) {
    super(
      "INDEX_UNAVAILABLE",
      said?.message ?? "The lock index cannot answer right now.",
      { reason, ...said?.detail },
      options,
    );
  }
}

/**
 * The index was built for another chain than this API serves (its checkpoint names `indexChainId`, NETWORK names
 * `chainId`): an API for Base over a devnet's index would label the devnet's locks as Base's. Refused until the index
 * (the views schema) is this chain's again; nothing to retry on the client's side.
 */
export class IndexOfAnotherChainError extends IndexUnavailableError {
  override name = "IndexOfAnotherChainError";
  constructor(indexChainId: number, chainId: number, options?: { cause?: unknown }) {
    super("another chain", options, {
      message: `The lock index is of chain ${indexChainId}; this API serves chain ${chainId}.`,
      detail: { indexChainId, chainId },
    });
  }
}

/**
 * A new lock (a prepare or a quote with targetTokenId 0, prepare/lock) for a wallet that already holds MAX_LOCKS_PER_USER
 * live locks: the published VeLockNFT refuses the next one (TooManyVeNFTs; through the Furnace, InvariantViolation), so
 * the batch would certainly revert and the wallet pay gas for nothing. Refused, as the devnet and Base both would, with
 * what to do instead (`instead`: top up one of the wallet's locks, in the words of the request's action).
 */
export class LockLimitReachedError extends ApiError {
  override name = "LockLimitReachedError";
  constructor(detail: { user: string; locks: number; maxLocks: number }, instead: string) {
    super(
      "LOCK_LIMIT_REACHED",
      `The wallet already holds ${detail.locks} locks, the most one wallet may hold (${detail.maxLocks}): a new lock ` +
        `would revert (VeLockNFT: TooManyVeNFTs), so no batch was made. ${instead}`,
      detail,
    );
  }
}

/** A revert as the simulation decodes it (api/chain/simulate.ts SimulatedError). */
export type RevertDetail = { name: string | null; args: string[]; selector: string | null };

/** How a revert reads in a sentence: `NotAuthorized`, `Error(reason)`, or by its selector when unknown. */
function revertText(revert: RevertDetail): string {
  if (revert.name !== null) return revert.args.length > 0 ? `${revert.name}(${revert.args.join(", ")})` : revert.name;
  return revert.selector === null ? "a revert without data" : `an unknown error (selector ${revert.selector})`;
}

/**
 * requireSimulationOk=true, and a step of the prepared batch reverts in simulation: the batch is withheld.
 * `index` is the step's position in the batch (0-based, as in `transactions`), `step` its label.
 */
export class SimulationRevertedError extends ApiError {
  override name = "SimulationRevertedError";
  constructor(detail: {
    index: number;
    step: string;
    revert: RevertDetail;
    blockNumber: string;
    hint?: { message: string; [k: string]: unknown };
  }) {
    super(
      "SIMULATION_REVERTED",
      `Step ${detail.index} (${detail.step}) of the batch reverts in simulation: ${revertText(detail.revert)}. ` +
        "The batch was not returned (requireSimulationOk=true).",
      detail,
    );
  }
}

/** requireSimulationOk=true, and the batch could not be simulated: an unsimulated batch is not handed out. */
export class SimulationUnavailableError extends ApiError {
  override name = "SimulationUnavailableError";
  constructor(detail: { skipped: "unsupported" | "node-failed"; reason?: string }) {
    // The node's "method not found" is believed for a minute (api/chain/simulate.ts SIMULATION_REPROBE_MS): a retry
    // within it gets this answer again without the node being asked; a failure is tried again on the next request.
    const why =
      detail.skipped === "unsupported"
        ? "the node answered that it does not support eth_simulateV1. That answer is kept for 60 s before the node " +
          "is asked again, so retry after a minute at the earliest"
        : `the node did not answer the simulation${detail.reason ? ` (${detail.reason})` : ""}. Retry later`;
    super(
      "SIMULATION_UNAVAILABLE",
      `The batch could not be simulated: ${why}, or ask without requireSimulationOk to get the batch with simulation ` +
        "skipped. requireSimulationOk=true withholds an unsimulated batch.",
      detail,
    );
  }
}

/**
 * `minBlock` (GraphQL: `block: { number_gte }`) names a block the index has not reached, and it did not reach it
 * within the request's `waitMs`. `detail.head` is the index's head (the node's, on the state route); a retry after
 * `retryAfterSec` (also the Retry-After header) may find it there.
 */
export class IndexBehindError extends ApiError {
  override name = "IndexBehindError";
  constructor(
    detail: { minBlock: string; head: string | null; of: "index" | "node"; waitedMs: number },
    readonly retryAfterSec: number,
  ) {
    super(
      "INDEX_BEHIND",
      `The ${detail.of === "node" ? "node" : "index"} has not reached block ${detail.minBlock} yet` +
        `${detail.head === null ? "" : ` (its head is block ${detail.head})`}; retry after ${retryAfterSec} s.`,
      detail,
    );
  }

  override toEnvelope(): ErrorEnvelope {
    return { ...super.toEnvelope(), retryAfterSec: this.retryAfterSec };
  }
}

/**
 * The index is loaded, not down: nothing was read; `Retry-After` says when to try again. Either its whole-index
 * computations (a block's ve ranking or stats not yet in memory) are all busy and this one could not start within its
 * wait (api/read/computeGate.ts; answers at the index's head are never refused this way: they have a lane of their
 * own), or (`of: "connections"`) the pool of the per-request statements has more waiting than it serves in time
 * (api/server/indexPool.ts).
 */
export class IndexBusyError extends ApiError {
  override name = "IndexBusyError";
  constructor(
    readonly retryAfterSec: number,
    why: "queue full" | "wait expired",
    of: "computations" | "connections" = "computations",
    options?: { cause?: unknown },
  ) {
    super(
      "INDEX_UNAVAILABLE",
      of === "connections"
        ? "The lock index is busy answering other requests; retry later."
        : "The lock index is busy computing other blocks; retry later.",
      { reason: "busy", why },
      options,
    );
  }

  override toEnvelope(): ErrorEnvelope {
    return { ...super.toEnvelope(), retryAfterSec: this.retryAfterSec };
  }
}

/**
 * The client closed its connection before the end of the request's body: nobody will read the answer, and it is no
 * failure of ours (a debug line, api/http/answerError.ts). `cause` is what the body's stream reported.
 */
export class BodyAbandonedError extends ApiError {
  override name = "BodyAbandonedError";
  constructor(options?: { cause?: unknown }) {
    super("BAD_REQUEST", "The request body was not received in full.", undefined, options);
  }
}

export class InternalError extends ApiError {
  override name = "InternalError";
  constructor() {
    super("INTERNAL_ERROR", "Internal error.");
  }
}
