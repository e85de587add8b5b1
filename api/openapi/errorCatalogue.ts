import {
  BadParamsError,
  ChainUnreadyError,
  ERROR_STATUS,
  type ErrorCode,
  type ErrorEnvelope,
  GenesisNotFinalizedError,
  IndexBehindError,
  IndexUnavailableError,
  InternalError,
  LockLimitReachedError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  PreflightReadFailedError,
  QuoteFailedError,
  RateLimitedError,
  SimulationRevertedError,
  SimulationUnavailableError,
  StateReadFailedError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  UpstreamUnavailableError,
} from "../http/errors";
import { READY_TO_FINALIZE_BITS } from "../launchPreflight";
import { TOP_UP_INSTEAD } from "../mcp/v1/lockLimit";
import { type JsonSchema, object } from "../route/jsonSchema";
import { SUPPLY_ERROR_STATUS, type SupplyErrorCode } from "../supply/supplyError";

/**
 * What each error code means, and an example envelope made by the error class that raises it, so the
 * documented envelopes are the served ones (statuses come from the one table in api/http/errors.ts).
 */
export const ERROR_DOCS: Record<ErrorCode, { meaning: string; example: ErrorEnvelope }> = {
  BAD_PARAMS: {
    meaning:
      "An input is not a strict address, a canonical non-negative uint256 or exactly true/false, is unknown, " +
      "repeated, missing, or breaks a protocol rule the contract would revert on; `detail.param` names it. " +
      "Nothing was read from the chain.",
    example: new BadParamsError("amountWei must be a non-negative integer in canonical decimal form.", {
      param: "amountWei",
    }).toEnvelope(),
  },
  NOT_FOUND: {
    meaning: "No such route or prepare action; on the index API, no such lock minted by the answer's block.",
    example: new NotFoundError().toEnvelope(),
  },
  INDEX_BEHIND: {
    meaning:
      "`minBlock` (GraphQL: `block: { number_gte }`) names a block the index has not reached, and it did not reach " +
      "it within `waitMs` (default 0, at most 10000). `detail.head` is the index's head (on the state route, the " +
      "node's: `detail.of`); retry after `retryAfterSec` seconds (also the Retry-After header). A `minBlock` more " +
      "than 5 blocks beyond the chain's head is 400 BAD_PARAMS instead.",
    example: new IndexBehindError(
      { minBlock: "38118526", head: "38118524", of: "index", waitedMs: 2000 },
      4,
    ).toEnvelope(),
  },
  UNAUTHORIZED: {
    meaning:
      "Only the operators' routes answer it: the metrics (METRICS_TOKEN set) and the webhook routes (OPERATOR_TOKEN), " +
      "when the request lacks `Authorization: Bearer <token>` or sends another token. No documented operation needs " +
      "credentials.",
    example: new UnauthorizedError().toEnvelope(),
  },
  BAD_REQUEST: {
    meaning:
      "The HTTP request itself could not be parsed (bad request line, unknown method, conflicting Content-Length " +
      "and Transfer-Encoding), or its Host or target is not one HTTP allows (no Host on HTTP/1.1, two Hosts, a bad " +
      "Host, `*` or an authority as the target); answered by the server before any route, and the connection is " +
      "closed.",
    example: { ok: false, error: "BAD_REQUEST", message: "The HTTP request could not be parsed." },
  },
  REQUEST_TIMEOUT: {
    meaning: "The request's headers or body did not arrive in time; the connection is closed.",
    example: { ok: false, error: "REQUEST_TIMEOUT", message: "The request did not arrive in time." },
  },
  HEADERS_TOO_LARGE: {
    meaning: "The URL and headers together exceed 16 KiB; the connection is closed.",
    example: { ok: false, error: "HEADERS_TOO_LARGE", message: "The URL and headers exceed 16 KiB." },
  },
  METHOD_NOT_ALLOWED: {
    meaning: "Only GET (and OPTIONS) is served; POST too at /graphql and /api/mcp. The `Allow` header names them.",
    example: new MethodNotAllowedError("POST").toEnvelope(),
  },
  PAYLOAD_TOO_LARGE: {
    meaning: "POST /graphql only: the request body is larger than 64 KiB; nothing of it was parsed.",
    example: new PayloadTooLargeError(65_536).toEnvelope(),
  },
  UNSUPPORTED_MEDIA_TYPE: {
    meaning: "POST /graphql only: the body is not `application/json` (GraphQL over HTTP); nothing was parsed.",
    example: new UnsupportedMediaTypeError("application/json").toEnvelope(),
  },
  EXPECTATION_FAILED: {
    meaning:
      "The request's `Expect` header asks for something other than 100-continue; answered before any route, and " +
      "the connection is closed.",
    example: { ok: false, error: "EXPECTATION_FAILED", message: "Only Expect: 100-continue is supported." },
  },
  RATE_LIMITED: {
    meaning:
      "More than the per-client budget of this route prefix (default 300 per 60 s); retry after `retryAfterSec` " +
      "seconds (also the Retry-After header).",
    example: new RateLimitedError(42).toEnvelope(),
  },
  INTERNAL_ERROR: {
    meaning: "An unexpected failure; no internals are shown.",
    example: new InternalError().toEnvelope(),
  },
  STATE_READ_FAILED: {
    meaning: "An on-chain read (balances, an allowance) failed upstream; `detail.upstream` says how.",
    example: new StateReadFailedError("Reading on-chain state failed upstream.", { upstream: "timeout" }).toEnvelope(),
  },
  QUOTE_FAILED: {
    meaning:
      "The Furnace quote failed: `detail.reason` names the quoter's revert (e.g. MinLockAmountNotMet), or is null " +
      "when the RPC failed.",
    example: new QuoteFailedError("The quoter rejected the entry: MinLockAmountNotMet.", {
      reason: "MinLockAmountNotMet",
    }).toEnvelope(),
  },
  PREFLIGHT_READ_FAILED: {
    meaning: "The launch preflight could not be read; the gate stays closed (never assumed finalized).",
    example: new PreflightReadFailedError().toEnvelope(),
  },
  GENESIS_NOT_FINALIZED: {
    meaning:
      "Bit 0 of the launch preflight is set: genesis is not finalized, so no transaction is prepared. `detail` " +
      "carries the status bitmask, the bits set and the bits expected.",
    example: new GenesisNotFinalizedError({
      statusBitmask: "2047",
      bitsSet: [...READY_TO_FINALIZE_BITS],
      bitsExpected: [...READY_TO_FINALIZE_BITS],
    }).toEnvelope(),
  },
  CHAIN_UNREADY: {
    meaning:
      "The deployment manifest lacks a contract this route needs; `detail.contract` names it. A contract only some " +
      "requests need (a prepare's own quote of a pending entry) is refused for those requests only, and " +
      "`detail.param` names the parameter that does without it (minVeOutWei).",
    example: new ChainUnreadyError("FurnaceQuoter", "base").toEnvelope(),
  },
  SIMULATION_REVERTED: {
    meaning:
      "Prepare routes with `requireSimulationOk=true` only: the batch reverts in simulation, so it is not returned. " +
      "`detail.index` is the failing step's position in the batch (0-based, as in `transactions`), `detail.step` " +
      "its label, `detail.revert` the decoded revert (`name`, `args`, `selector`), `detail.blockNumber` the block " +
      "simulated, and `detail.hint` what to do instead where there is a suggestion.",
    example: new SimulationRevertedError({
      index: 1,
      step: "topup",
      revert: { name: "NotAuthorized", args: [], selector: "0xea8e4eb5" },
      blockNumber: "38118524",
      hint: {
        message:
          "This function accepts only the Furnace on this deployment: lock-via-furnace does the same for the wallet.",
        action: "lock-via-furnace",
        params: {
          user: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
          claimAmountWei: "500000000000000000000",
          targetTokenId: "1",
        },
        path:
          "/api/mcp/v1/prepare/lock-via-furnace?user=0x70997970C51812dc3A010C7d01b50e0d17dc79C8&" +
          "claimAmountWei=500000000000000000000&targetTokenId=1",
      },
    }).toEnvelope(),
  },
  LOCK_LIMIT_REACHED: {
    meaning:
      "A new lock (prepare/lock; lock-via-furnace, collect mode 1, harvest compound=true and the quote with " +
      "targetTokenId=0) for a wallet that already holds 32 live locks, the most one wallet may hold: VeLockNFT " +
      "refuses the next (TooManyVeNFTs; through the Furnace, InvariantViolation), so no batch is made, whatever " +
      "`simulate` says. `detail.user`, `detail.locks` (its count, read from VeLockNFT.balanceOf) and " +
      "`detail.maxLocks`; the message says what to do instead (top up one of its locks with targetTokenId).",
    example: new LockLimitReachedError(
      { user: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", locks: 32, maxLocks: 32 },
      TOP_UP_INSTEAD,
    ).toEnvelope(),
  },
  SIMULATION_UNAVAILABLE: {
    meaning:
      "Prepare routes with `requireSimulationOk=true` only: the batch could not be simulated (`detail.skipped`: " +
      "`unsupported`, the node lacks eth_simulateV1; `node-failed`, it timed out or errored, `detail.reason` says " +
      "how), and an unsimulated batch is not handed out. Retry later (after `unsupported`, a minute at the earliest: " +
      "the node's answer is kept 60 s), or ask without the flag.",
    example: new SimulationUnavailableError({ skipped: "node-failed", reason: "timeout" }).toEnvelope(),
  },
  INDEX_UNAVAILABLE: {
    meaning:
      "The lock index cannot answer: not configured on this deployment, not started yet, its database is not " +
      "answering (the webhooks' routes: `not permitted` when it refuses this API's database user), built for another chain than this API serves (`another chain`, with `detail.indexChainId` and " +
      "`detail.chainId`), or (`busy`) its computations of past blocks' rankings and stats are all taken, with " +
      "`Retry-After` and `retryAfterSec`; `detail.reason` says which. Retry later; nothing was read.",
    example: new IndexUnavailableError("unreachable").toEnvelope(),
  },
  UPSTREAM_UNAVAILABLE: {
    meaning:
      "The chain node failed just now (unreachable, timed out or an HTTP error) and this process is backing it off: " +
      "nothing was read. Retry after `retryAfterSec` (also `Retry-After`); one request per back-off window (2 s, " +
      "doubling to 4 s while the node keeps failing) is let through to find out whether the node is back.",
    example: new UpstreamUnavailableError(2).toEnvelope(),
  },
};

export const SUPPLY_ERROR_MEANINGS: Record<SupplyErrorCode, string> = {
  SUPPLY_NO_RPC_URL: "No RPC endpoint is configured.",
  SUPPLY_RPC_INVALID_UINT256:
    "The RPC answered a view call with anything but exactly 0x + 64 hex characters (an HTTP 2xx body that is not " +
    "JSON, an answer under another id included).",
  SUPPLY_RPC_UNREACHABLE: "The RPC did not answer in time (refused, reset, timed out, or a non-2xx HTTP status).",
  SUPPLY_NOT_DEPLOYED: "The deployment manifest lacks AssetToken or VeLockNFT (or holds the zero address).",
  SUPPLY_INCONSISTENT:
    "totalSupply() is below 0.01 token (0 included), or total − locked at one block is: a figure of 0.00 or a " +
    "negative one is never answered.",
  SUPPLY_RPC_LAGGING:
    "The node's head is behind (below the block of the figures already served, or older than " +
    "SUPPLY_MAX_HEAD_AGE_SECONDS) and no newer figure is held: its older figure is never answered. Retry later.",
};

/** The envelope of spec §2.5, closed: the live test rejects any field the documentation does not name. */
export const ERROR_ENVELOPE_SCHEMA: JsonSchema = object(
  {
    ok: { const: false },
    error: { type: "string", enum: Object.keys(ERROR_STATUS), description: "The error code." },
    message: { type: "string", description: "A human-readable explanation." },
    detail: { description: "Structured context (e.g. `param` for BAD_PARAMS); shape depends on the code." },
    retryAfterSec: {
      type: "integer",
      minimum: 0,
      description:
        "Seconds to wait before asking again (as the Retry-After header): on RATE_LIMITED, UPSTREAM_UNAVAILABLE, " +
        "INDEX_BEHIND and INDEX_UNAVAILABLE `busy`.",
    },
  },
  { optional: ["detail", "retryAfterSec"], description: "Every /api/mcp/v1 failure (spec §2.5)." },
);

export const SUPPLY_ERROR_SCHEMA: JsonSchema = object(
  {
    result: { type: "null" },
    error: { type: "string", enum: Object.keys(SUPPLY_ERROR_STATUS), description: "The supply error code." },
  },
  { description: "A supply failure in JSON form (spec §2.1, §7.1)." },
);

/** The codes in `codes` grouped by their HTTP status, in status order. */
export function byStatus<C extends string>(codes: readonly C[], status: Record<C, number>): [number, C[]][] {
  const groups = new Map<number, C[]>();
  for (const code of codes) groups.set(status[code], [...(groups.get(status[code]) ?? []), code]);
  return [...groups.entries()].sort(([a], [b]) => a - b);
}
