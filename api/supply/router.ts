/**
 * The supply API (spec §1, §2.1, §2.2, §4.1, §7.1, §8), mounted at /api/supply:
 *   GET /total        AssetToken.totalSupply() at the block of the one read both figures share
 *   GET /circulating  totalSupply() − VeLockNFT.totalLockedClaim(), both at one block
 *   GET /max          always null, no RPC needed (answers even without RPC_URL)
 * total and circulating are answered from ONE cache entry filled by ONE read at ONE block (api/supply/figures.ts),
 * so the two figures served at any moment always describe the same block.
 * `?format=bare` answers text/plain; without it (no format, `?format=json`, any other value) the JSON shape
 * `{ "result": … }` is answered, as spec §4.1 says ("Without format=bare the JSON shape of 2.1 is returned"); `format`
 * given more than once is bare only if every value is `bare`. Other query parameters are ignored,
 * since aggregators append cache-busters. Never rate-limited (spec §8: safe at any frequency).
 */
import type { Context } from "hono";
import { Hono } from "hono";
import { MemoryTtlCache, type Timed, type TtlCache } from "../cache/ttlCache";
import type { AppDeps } from "../deps";
import { raceDeadline } from "../http/cancellation";
import { edgeResponse, ownsEdgeHeaders, respond, writeEdgeResponse } from "../http/edge";
import type { AppBindings, AppEnv } from "../http/env";
import { type NodeHotPath, originTarget } from "../http/nodeHotPath";
import { requestIdFor, requestIdFrom } from "../http/requestId";
import { deployedAddress } from "../manifest";
import { CacheStats } from "../observability/cacheStats";
import { throttledWarnings } from "../observability/throttle";
import { SUPPLY_BASE } from "../paths";
import { branchWatch } from "./branchWatch";
import {
  circulatingCode,
  circulatingFailed,
  decodeFigures,
  encodeFigures,
  figuresOf,
  type SupplyFigures,
  SupplyFloor,
  type SupplyRead,
} from "./figures";
import { MissingBlockError, readSupply } from "./reads";
import { SupplyError, type SupplyErrorCode, type SupplyRouteDefinition, toSupplyError } from "./supplyError";

/** spec §8: 5 minutes for total and circulating (one entry holds both), 24 hours for max. */
export const SUPPLY_FIGURES_TTL_MS = 300_000;
export const SUPPLY_TTL_MS = {
  total: SUPPLY_FIGURES_TTL_MS,
  circulating: SUPPLY_FIGURES_TTL_MS,
  max: 86_400_000,
} as const;

/**
 * Aggregators give up after a few seconds; answering a clean 502 in time beats a hung socket. The
 * node timeout from the config applies, capped at this for the supply routes.
 */
export const SUPPLY_RPC_TIMEOUT_CAP_MS = 5_000;

/**
 * After a failed read, the figure is not read again for this long: every request in between answers the
 * same 502 code at once (shared through Redis when configured). A node in trouble is then asked about
 * once per value per interval by the whole cluster instead of once per poll, and recovery is seen within
 * the interval. Failures still answer 502 with no-store: nothing wrong is ever served or cached downstream.
 */
export const SUPPLY_FAILURE_BACKOFF_MS = 2_000;

/**
 * How often a process asks Redis again for the figures it serves (once per interval for the process, whatever the
 * request rate; the hot path never waits on Redis): after Redis lost the entry (a restart without persistence, an
 * eviction, a failover), replicas sharing it serve the same block again within this (docs/api.md "Supply API").
 */
export const SUPPLY_REVALIDATE_MS = 1_000;

/**
 * How far ahead of this clock an entry's read time (taken by the replica that read it) may be and still be served:
 * NTP keeps replicas within milliseconds; a stamp further ahead is not this code's write and is read again.
 */
export const SUPPLY_CLOCK_SKEW_MS = 2_000;

/** Slack for the client's safety-net deadline over the read's: a Redis poll plus a round trip. */
const CLIENT_GRACE_MS = 250;

export function supplyRpcTimeoutMs(configTimeoutMs: number): number {
  return Math.min(configTimeoutMs, SUPPLY_RPC_TIMEOUT_CAP_MS);
}

const CACHE_OK = { total: "public, max-age=300", circulating: "public, max-age=300", max: "public, max-age=86400" };
const JSON_TYPE = "application/json; charset=UTF-8";
const TEXT_TYPE = "text/plain; charset=UTF-8";

type Format = "json" | "bare";
type Metric = "total" | "circulating";

/** Key of the Redis-shared entry: named after chain and contracts (replicas sharing a Redis with another deployment
 * never mix figures), and `figures-v5` (the entry whose circulating half may also hold SUPPLY_RPC_INVALID_UINT256, its
 * totalLockedClaim() having failed beside a good total), not the `figures-v4` key of the version that failed both
 * figures then, nor the `figures-v3` key of the version whose entry had no block timestamp, nor the `figures-v2` key of
 * the version whose entry had no hash, nor the `figures` key of the version whose entry had no read time, nor the
 * `total` / `circulating` keys of the versions that cached them apart (an old replica in a rolling upgrade never reads
 * this entry, nor this one its). Change the name if the entry's form changes. */
export const supplyFiguresKey = (chainId: number, token: string | null, veLock: string | null) =>
  `supply:${chainId}:${token}:${veLock}:figures-v5`;

/**
 * `bare` when every `format` given is `bare` (spec §4.1: "Value bare switches to a plain-text response … Without
 * format=bare the JSON shape of 2.1 is returned"), else JSON: `json`, a typo such as `BARE`, an empty value or none.
 * A URL without `?` is the default JSON form, without parsing anything.
 */
function formatOf(c: Context): Format {
  if (!c.req.url.includes("?")) return "json";
  const values = c.req.queries("format");
  return values?.every((v) => v === "bare") ? "bare" : "json";
}

// Every supply response is built by respond() or, before routing, edgeResponse() / writeEdgeResponse()
// (api/http/edge.ts), with the edge's CORS and request-id headers in one plain object: a cached hit,
// polled at any rate, allocates no WHATWG Headers.
const okBody = (format: Format, result: string | null) =>
  format === "bare" ? (result ?? "null") : JSON.stringify({ result });
const okHeaders = (format: Format, cacheControl: string) => ({
  "content-type": format === "bare" ? TEXT_TYPE : JSON_TYPE,
  "cache-control": cacheControl,
});
/** A figure's: with `Age` (RFC 9111 §5.1), so a cache downstream counts its max-age from the read, not from its copy. */
const figureHeaders = (format: Format, cacheControl: string, age: string) => ({
  "content-type": format === "bare" ? TEXT_TYPE : JSON_TYPE,
  "cache-control": cacheControl,
  age,
});

/** A route's answer from one entry: its bodies, made once per entry (not per hit), or the code it fails with. */
type Answer = { json: string; bare: string } | SupplyErrorCode;
type Answers = Record<Metric, Answer>;
const figureAnswer = (figure: string): Answer => ({ json: okBody("json", figure), bare: okBody("bare", figure) });
const answersOf = (f: SupplyFigures): Answers => ({
  total: figureAnswer(f.total),
  circulating: circulatingCode(f) ?? figureAnswer(f.circulating),
});

const UNREADABLE: Answers = { total: "SUPPLY_RPC_INVALID_UINT256", circulating: "SUPPLY_RPC_INVALID_UINT256" };

/**
 * An entry as served: its answers, made when it is first seen (not per hit), and its `Age` header value, whole seconds
 * since its read began (readAtMs), made again only once the second turns (`ageUntil`), so a hit compares a number.
 * Never above `windowSec` (the window counts from the read: only a clock ahead of the reading replica's would get there).
 */
type Served = {
  entry: string;
  answers: Answers;
  readAtMs: number;
  age: string;
  ageUntil: number;
  /** The block read: its number, hash and timestamp (null, null, 0: an entry that is not one this code writes). */
  blockNumber: bigint | null;
  blockHash: string | null;
  blockTimestampSec: number;
  circulatingFailed: boolean;
};

function ok(c: Context, format: Format, body: string, cacheControl: string): Response {
  return respond(c, body, 200, okHeaders(format, cacheControl));
}

function ageOf(served: Served, nowMs: number, windowSec: number): string {
  if (nowMs >= served.ageUntil) {
    const sec = Math.min(Math.max(Math.floor((nowMs - served.readAtMs) / 1000), 0), windowSec);
    served.age = String(sec);
    served.ageUntil = sec === windowSec ? Number.POSITIVE_INFINITY : served.readAtMs + (sec + 1) * 1000;
  }
  return served.age;
}

function fail(c: Context, format: Format, code: SupplyErrorCode, status: 400 | 502): Response {
  const headers = {
    "content-type": format === "bare" ? TEXT_TYPE : JSON_TYPE,
    "cache-control": "no-store",
    "x-supply-error": code,
  };
  return respond(c, format === "bare" ? null : JSON.stringify({ result: null, error: code }), status, headers);
}

/** `work` with its own AbortSignal, cancelled at `ms` (api/http/cancellation.ts): a timeout is SUPPLY_RPC_UNREACHABLE. */
function withDeadline<T>(work: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const controller = new AbortController();
  return raceDeadline(work(controller.signal), {
    ms,
    cancel: () => controller.abort(),
    timeoutError: () => new SupplyError("SUPPLY_RPC_UNREACHABLE", `supply read timed out after ${ms} ms`),
  });
}

const READ_FAILURES = [
  "SUPPLY_NO_RPC_URL",
  "SUPPLY_RPC_UNREACHABLE",
  "SUPPLY_RPC_INVALID_UINT256",
  "SUPPLY_NOT_DEPLOYED",
  "SUPPLY_RPC_LAGGING",
] as const;

/** The documented face of the three routes (api/openapi); the router below registers these paths. */
export const SUPPLY_ROUTES = {
  total: {
    path: "/total",
    operationId: "get_total_supply",
    summary: "Total supply",
    description:
      "AssetToken.totalSupply() at the latest block, read with circulating at one block: every token minted minus " +
      "burned, 2 decimals, truncated. " +
      "Never zero: a node answering less than 0.01 token (0 included) fails closed with SUPPLY_INCONSISTENT.",
    example: "12345678.90",
    errors: [...READ_FAILURES, "SUPPLY_INCONSISTENT"],
    maxAgeSec: SUPPLY_TTL_MS.total / 1000,
  },
  circulating: {
    path: "/circulating",
    operationId: "get_circulating_supply",
    summary: "Circulating supply",
    description:
      "Total supply minus the tokens locked in VeLockNFT (totalLockedClaim()), both read at one block; " +
      "2 decimals, truncated. Never negative or zero: total − locked below 0.01 token (locked ≥ total included) fails " +
      "closed with SUPPLY_INCONSISTENT.",
    example: "8345678.90",
    errors: [...READ_FAILURES, "SUPPLY_INCONSISTENT"],
    maxAgeSec: SUPPLY_TTL_MS.circulating / 1000,
  },
  max: {
    path: "/max",
    operationId: "get_max_supply",
    summary: "Max supply",
    description: "Always null: the token has no hard-coded maximum (supply is minted on a decaying schedule).",
    example: null,
    errors: [],
    maxAgeSec: SUPPLY_TTL_MS.max / 1000,
  },
} as const satisfies Record<Metric | "max", SupplyRouteDefinition>;

/** The query strings the hot path answers (none, `?` alone, one format); any other takes the routed path. */
const HOT_QUERIES = new Map<string, Format>([
  ["", "json"],
  ["format=json", "json"],
  ["format=bare", "bare"],
]);

/**
 * A cached supply answer made before routing, or undefined for "route it". `env` is the server's
 * (under @hono/node-server: the IncomingMessage), as app.fetch receives it.
 */
export type SupplyHotPath = (request: Request, env: AppBindings | undefined) => Response | undefined;

/**
 * `hotPath` answers in front of app.fetch (in-process requests, any server of app.fetch); `nodeHotPath`
 * answers the same in front of @hono/node-server, in the served processes (api/server/server.ts).
 */
export type SupplyApi = { router: Hono<AppEnv>; hotPath: SupplyHotPath; nodeHotPath: NodeHotPath };

/**
 * The router, and its hot path: aggregators poll these routes at any rate, and a cached figure is
 * almost every answer. The hot path is asked first, so such a hit skips routing, the middleware chain
 * and its promises, and at the Node level also @hono/node-server's Request and Response; everything
 * else (a miss, an error, HEAD, another query, a request worth a log line) is routed as usual. A hot
 * answer is the routed one byte for byte (same builders, same edge headers, same request id rules,
 * one matcher for both levels) and is counted under the same route label; it is only taken when the
 * logger would drop the routed path's debug line for a success, so no log line is lost either
 * (test/supply/hotPath.test.ts holds both levels to the routed answer).
 */
export function supplyApi(deps: AppDeps): SupplyApi {
  const { config, logger, metrics } = deps;
  // One line per code and metric per minute, with a count (api/observability/throttle.ts): an outage under
  // aggregator polling must not flood the log.
  const warn = throttledWarnings(logger);
  const logUpstreamFailure = (metric: Metric | "figures", error: SupplyError) => {
    warn(`${metric}:${error.code}`, "supply read failed", { metric, code: error.code, cause: error.message });
  };
  const cache: TtlCache = deps.supply?.cache ?? new MemoryTtlCache();
  // Counted here, not in the cache: a hot-path miss is asked again on the routed path, and is one miss.
  const stats = new CacheStats();
  metrics.caches.register("supply", { stats, entries: () => cache.entries() });
  if (cache.shared) {
    metrics.caches.register("supply_shared", {
      stats: cache.shared,
      ...(cache.breaker ? { breaker: cache.breaker } : {}),
    });
  }
  const ttlMs = deps.supply?.ttlMs ?? SUPPLY_FIGURES_TTL_MS;
  const timeoutMs = deps.supply?.rpcTimeoutMs ?? supplyRpcTimeoutMs(config.rpcTimeoutMs);
  const backoff = {
    ms: deps.supply?.failureBackoffMs ?? SUPPLY_FAILURE_BACKOFF_MS,
    codeOf: (error: unknown) => toSupplyError(error).code,
  };
  const token = deployedAddress(config.manifest, "AssetToken");
  const veLock = deployedAddress(config.manifest, "VeLockNFT");
  const key = supplyFiguresKey(config.chainId, token, veLock);
  // The entry as served, made when a new entry is first seen: a hit compares one string (the same object while the
  // entry lives), takes a body made already and an Age made at most once a second, so it does no more work than when
  // each figure had its own entry.
  let seen: Served | undefined;
  // The newest figures served (their block is `floor`, which the shared cache also reads): an entry of a lower block,
  // from a node that lags (behind a load balancer, restarted from an old snapshot) or from a replica that read one, is
  // never served over them (`refused`: the last such entry, so a hit on it is one more compare), nor a read of one
  // (load below); only a reorg that drops their block lets a lower one in. The blocks seen reorged away are remembered
  // there too (`floor.orphan`): their figures are never served, taken from Redis or written back again.
  let held: Served | undefined;
  let refused: string | undefined;
  const floor = deps.supply?.floor ?? new SupplyFloor();
  const maxHeadAgeMs = config.supplyMaxHeadAgeSeconds * 1000;
  // One line per reason per minute, with a count; and a counter (api_supply_node_lagging_total).
  const lagging = (reason: "behind" | "head_age", fields: Record<string, string | number>) => {
    metrics.supplyNodeLagging.inc({ reason });
    warn(`lagging:${reason}`, "supply node lags: its figures are not served", { reason, ...fields });
  };
  /**
   * The block `hash` (number `block`) is no longer on the chain: its figures (`entry`, as served or held) are dropped here
   * and in Redis, and never taken again by this process (the next request reads the canonical chain). A replica that
   * has not seen the reorg yet may still write them back to Redis for a while: this one refuses them (supplyCache.ts).
   */
  const dropOrphan = (block: bigint, hash: string, entry: string, canonical: string | null) => {
    const known = floor.isOrphaned(hash);
    floor.orphan(hash);
    if (seen?.blockHash === hash) seen = undefined;
    if (held?.blockHash === hash) {
      held = undefined;
      refused = undefined;
      floor.blockNumber = null;
    }
    if (!known) {
      logger.warn("supply figures dropped: their block was reorged away", {
        block: String(block),
        hash,
        canonical,
      });
    }
    void cache.invalidate(key, entry);
  };
  // While figures are served, their block is checked against the chain every few seconds (api/supply/branchWatch.ts):
  // once it is reorged away they are dropped here and in Redis, and the next request reads the canonical chain.
  const watcher =
    deps.rpc === null
      ? null
      : branchWatch({
          rpc: deps.rpc,
          timeoutMs,
          intervalMs: deps.supply?.branchCheckMs,
          onOrphan: (read, canonical) => dropOrphan(read.blockNumber, read.blockHash, read.entry, canonical),
          onBehind: (read, head) => lagging("behind", { block: String(read.blockNumber), head: String(head.number) }),
        });
  /** The entry as served; undefined for one of a block this process saw reorged away (dropped: read again). */
  const servedFor = (entry: string): Served | undefined => {
    if (seen?.entry === entry) return seen;
    if (entry === refused && held !== undefined) return held;
    // Every entry was written by encodeFigures or passed decodeFigures (createSupplyCache's accept); one that did not
    // (a shared cache made without that check) fails closed, never served as a figure.
    const figures = decodeFigures(entry);
    if (figures === null) {
      seen = {
        entry,
        answers: UNREADABLE,
        readAtMs: 0,
        age: "0",
        ageUntil: 0,
        blockNumber: null,
        blockHash: null,
        blockTimestampSec: 0,
        circulatingFailed: false,
      };
      return seen;
    }
    const { blockNumber, blockHash, blockTimestampSec, readAtMs } = figures;
    if (floor.isOrphaned(blockHash)) {
      // Taken or read just before its block was found reorged away (a load that ended meanwhile): never served.
      void cache.invalidate(key, entry);
      return undefined;
    }
    if (held !== undefined && held.blockNumber !== null && blockNumber < held.blockNumber) {
      refused = entry;
      lagging("behind", { block: String(held.blockNumber), read: String(blockNumber) });
      seen = held;
      return held;
    }
    seen = held = {
      entry,
      answers: answersOf(figures),
      readAtMs,
      age: "0",
      ageUntil: 0,
      blockNumber,
      blockHash,
      blockTimestampSec,
      circulatingFailed: circulatingFailed(figures),
    };
    refused = undefined;
    floor.blockNumber = blockNumber;
    watcher?.watch({ entry, blockNumber, blockHash, timestampSec: blockTimestampSec, readAtMs });
    return seen;
  };
  // Age never passes the server's window (an entry is kept one window from its read: miss below).
  const windowSec = Math.floor(ttlMs / 1000);
  const answerServed = (c: Context, format: Format, metric: Metric, served: Served): Response => {
    const a = served.answers[metric];
    if (typeof a === "string") return fail(c, format, a, 502);
    const now = Date.now();
    watcher?.served(now);
    return respond(c, a[format], 200, figureHeaders(format, CACHE_OK[metric], ageOf(served, now, windowSec)));
  };

  /**
   * The figures held (the last served), to be written in the place of a read that is not served, kept what is left of
   * their window (counted from their read), at most `maxMs`, and at most the backoff for an entry whose circulating half
   * failed; null when none are held or their window is over.
   */
  const heldBack = (maxMs = Number.POSITIVE_INFINITY): Timed | null => {
    if (held?.blockNumber == null) return null;
    const left = Math.floor(held.readAtMs + ttlMs - Date.now());
    const keepMs = Math.min(left, maxMs, held.circulatingFailed ? backoff.ms : left);
    return keepMs >= 1 ? { value: held.entry, ttlMs: keepMs } : null;
  };

  /**
   * null when a read (of the node's head) may be served; else the node lags (its head below the figures held, on a
   * block this process saw reorged away, or older than SUPPLY_MAX_HEAD_AGE_SECONDS): the figures held (the last
   * served) are written back in its place while their window lasts (Redis lost them, or holds a lagging replica's older
   * ones), else the read fails SUPPLY_RPC_LAGGING (remembered the backoff, so the node is asked once per backoff) and
   * miss() answers 502: their window is over, or none are held. A head below the held
   * figures' block and younger than it is the branch check's proof of a reorg to a shorter chain (branchWatch.ts): their
   * block is dropped as the check drops it, and the read is served.
   */
  const lag = (read: SupplyRead): Timed | null => {
    const { blockNumber, blockHash } = read;
    if (
      held?.blockNumber != null &&
      held.blockHash !== null &&
      blockNumber < held.blockNumber &&
      read.blockTimestampSec > held.blockTimestampSec
    ) {
      dropOrphan(held.blockNumber, held.blockHash, held.entry, null);
    }
    const nowMs = Date.now();
    const headAgeMs = nowMs - read.blockTimestampSec * 1000;
    const old = maxHeadAgeMs > 0 && headAgeMs > maxHeadAgeMs;
    const below = held?.blockNumber != null && blockNumber < held.blockNumber;
    // A node that still answers a block seen reorged away is behind the chain (one behind a load balancer).
    const orphaned = floor.isOrphaned(blockHash);
    if (!old && !below && !orphaned) return null;
    lagging(below || orphaned ? "behind" : "head_age", {
      read: String(blockNumber),
      headAgeSec: Math.floor(headAgeMs / 1000),
      ...(held?.blockNumber != null ? { block: String(held.blockNumber) } : {}),
      ...(orphaned ? { reorgedAway: blockHash } : {}),
    });
    // Never the older block (the published figures never go back in block), nor a figure of an old head as a fresh one:
    // the figures last served stay, with their own read time.
    const back = heldBack();
    if (back !== null) return back;
    const why = below
      ? `below the figures' block ${held?.blockNumber}`
      : orphaned
        ? `its block ${blockHash} was reorged away`
        : `its head is ${Math.floor(headAgeMs / 1000)} s old`;
    throw new SupplyError("SUPPLY_RPC_LAGGING", `the node lags at block ${blockNumber}: ${why}`);
  };

  /**
   * The node lags, and this process learnt it from a failure remembered (here, or in Redis by a replica that holds no
   * figures and so had none to write back), not from a read of its own: the figures held are written back as its own
   * read would have written them (lag()), without asking the node, so a replica that holds none takes them from Redis
   * instead of answering 502 SUPPLY_RPC_LAGGING until their window ends (red team supply F5). A load without the backoff:
   * the remembered failure says "do not ask the node", which this load does not. In the background: the request is
   * answered at once.
   */
  const writeBack = () => {
    const back = heldBack();
    if (back !== null) void cache.getOrLoadTimed(key, ttlMs, async () => back).catch(() => {});
  };

  async function miss(c: Context, format: Format, metric: Metric): Promise<Response> {
    try {
      // Configuration problems are answered without touching the cache: there is nothing to share.
      const rpc = deps.rpc;
      if (rpc === null || config.rpcUrl === null) throw new SupplyError("SUPPLY_NO_RPC_URL");
      if (token === null || (metric === "circulating" && veLock === null)) throw new SupplyError("SUPPLY_NOT_DEPLOYED");
      // One read for both figures. An entry whose circulating half failed (locked ≥ total at its block, or its
      // totalLockedClaim() reverted or garbled) still answers its total (spec §4.1: totalSupply() alone), but is kept
      // only as long as a failure would be remembered: read again after the backoff.
      // The read's deadline ends the single flight, so every client sharing it is answered by then; a
      // replica waiting on another's Redis lock gives up at the same deadline (createSupplyCache). The
      // client's own deadline, a poll later, is only a safety net.
      const load = () =>
        withDeadline(async (signal) => {
          const started = performance.now();
          const read = await readSupply(rpc, token, veLock, { signal });
          const behind = lag(read);
          if (behind !== null) return behind;
          const figures = figuresOf(read, (error) => logUpstreamFailure("circulating", error));
          // totalLockedClaim() failed (the node's answer, not a fact of the block, as locked ≥ total is): to a process
          // holding figures within their window this is a failed re-read (docs/api.md "Supply API"): those are
          // written back for the backoff, both figures of their block, and the node is asked again after it.
          if (figures.circulating === "SUPPLY_RPC_INVALID_UINT256" && held?.circulatingFailed === false) {
            const back = heldBack(backoff.ms);
            if (back !== null) return back;
          }
          const value = encodeFigures(figures);
          // An entry whose half failed is a failure remembered: kept the backoff from now, as a failed read is (its
          // Age still counts from the read). A figure's window counts from the read, not from this write: no replica
          // serves it past the window, so none answers an Age above the max-age.
          if (circulatingFailed(figures)) return { value, ttlMs: backoff.ms };
          // Whole ms, as Redis takes PX; rounded down, so the entry never outlives the window.
          return { value, ttlMs: Math.floor(ttlMs - (performance.now() - started)) };
        }, timeoutMs).catch((error: unknown) => {
          const failure = toSupplyError(error);
          // A lagging node is told by lag() (its own line and counter), not as a failed read; so is a backend that
          // had no block at the height just named, asked twice (api/supply/reads.ts).
          if (error instanceof MissingBlockError)
            lagging("behind", { read: String(error.blockNumber), head: "no block at that height" });
          else if (failure.code !== "SUPPLY_RPC_LAGGING") logUpstreamFailure("figures", failure);
          throw error;
        });
      const loaded = () =>
        withDeadline(() => cache.getOrLoadTimed(key, ttlMs, load, backoff), timeoutMs + CLIENT_GRACE_MS);
      // An entry whose block was found reorged away while it was loaded is dropped (servedFor): loaded once more.
      const served = servedFor(await loaded()) ?? servedFor(await loaded());
      if (served === undefined) throw new SupplyError("SUPPLY_RPC_LAGGING", "the figures read were reorged away");
      return answerServed(c, format, metric, served);
    } catch (error) {
      const failure = toSupplyError(error);
      // A failed re-read (the node lagging, down, hung or garbled, remembered or not, here or by another replica)
      // while the figures held are within their window answers them, with their Age counting from their own read:
      // never the lagging node's, and a process that lost its Redis entry serves what it would have served without
      // Redis. Past the window (spec §8: 5 minutes), or with nothing held, the failure's code (spec §7.1: 502) — a
      // node stuck for an hour does not make an hour-old figure a 200, whatever the failure.
      if (held !== undefined && Date.now() < held.readAtMs + ttlMs) {
        if (failure.code === "SUPPLY_RPC_LAGGING") writeBack();
        return answerServed(c, format, metric, held);
      }
      return fail(c, format, failure.code, failure.status);
    }
  }

  const route = (metric: Metric) => (c: Context) => {
    const format = formatOf(c);
    const hit = cache.peek(key);
    const served = hit === undefined ? undefined : servedFor(hit);
    if (served !== undefined) {
      stats.hits++;
      return answerServed(c, format, metric, served);
    }
    stats.misses++;
    return miss(c, format, metric);
  };

  type HotRoute = {
    metric: Metric | "max";
    /** Its request count and duration series, resolved once. */
    requests: { inc(): void };
    duration: { observe(seconds: number): void };
  };
  const hot = new Map<string, HotRoute>();
  for (const metric of ["total", "circulating", "max"] as const) {
    const path = `${SUPPLY_BASE}${SUPPLY_ROUTES[metric].path}`;
    const labels = { method: "GET", route: path, status: "200" } as const;
    hot.set(path, {
      metric,
      requests: metrics.httpRequests.series(labels),
      duration: metrics.httpDuration.series(labels),
    });
  }
  /** The cached answer for a path and query, before the request id; undefined: route it. */
  const hotAnswer = (target: string) => {
    const q = target.indexOf("?");
    const route = hot.get(q === -1 ? target : target.slice(0, q));
    if (route === undefined) return undefined;
    const format = HOT_QUERIES.get(q === -1 ? "" : target.slice(q + 1));
    if (format === undefined) return undefined;
    if (logger.enabled?.("debug") !== false) return undefined;
    if (route.metric === "max") return { route, body: okBody(format, null), headers: okHeaders(format, CACHE_OK.max) };
    const entry = cache.peek(key);
    if (entry === undefined) return undefined;
    // A failed half (or a circulating without a VeLockNFT) is routed: the hot path answers figures only.
    const served = servedFor(entry);
    if (served === undefined) return undefined;
    const a = served.answers[route.metric];
    if (typeof a === "string") return undefined;
    const now = Date.now();
    watcher?.served(now);
    const age = ageOf(served, now, windowSec);
    return { route, body: a[format], headers: figureHeaders(format, CACHE_OK[route.metric], age) };
  };
  const count = (route: HotRoute, started: number) => {
    if (route.metric !== "max") stats.hits++;
    route.requests.inc();
    route.duration.observe((performance.now() - started) / 1000);
  };
  const hotPath: SupplyHotPath = (request, env) => {
    if (request.method !== "GET") return undefined;
    const started = performance.now();
    // The path and query as Hono's getPath finds them: after the authority.
    const url = request.url;
    const answer = hotAnswer(url.slice(url.indexOf("/", url.indexOf(":") + 3)));
    if (answer === undefined) return undefined;
    const response = edgeResponse(requestIdFrom(request, env), answer.body, 200, answer.headers);
    count(answer.route, started);
    return response;
  };
  const nodeHotPath: NodeHotPath = (req, res) => {
    if (req.method !== "GET") return false;
    const started = performance.now();
    const target = originTarget(req);
    const answer = target === undefined ? undefined : hotAnswer(target);
    if (answer === undefined) return false;
    writeEdgeResponse(res, requestIdFor(req.headers["x-request-id"]), answer.body, 200, answer.headers);
    count(answer.route, started);
    return true;
  };

  const supply = new Hono<AppEnv>();
  supply.get(SUPPLY_ROUTES.total.path, ownsEdgeHeaders(route("total")));
  supply.get(SUPPLY_ROUTES.circulating.path, ownsEdgeHeaders(route("circulating")));
  // max is static (spec §2.2: none): nothing to read, so nothing to cache server-side beyond the constant.
  supply.get(
    SUPPLY_ROUTES.max.path,
    ownsEdgeHeaders((c: Context) => {
      const format = formatOf(c);
      return ok(c, format, okBody(format, null), CACHE_OK.max);
    }),
  );
  return { router: supply, hotPath, nodeHotPath };
}
