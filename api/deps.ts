/**
 * What the routes are given: the one types-only module every feature imports its dependencies' shape
 * from, so no route imports the app that mounts it (the graph reads app → routes → features → platform).
 */

import type { TtlCache } from "./cache/ttlCache";
import type { RpcBackoff } from "./chain/backoff";
import type { MulticallVia } from "./chain/multicall";
import type { RpcClient } from "./chain/rpc";
import type { AppConfig } from "./config";
import type { PeerAddressSource } from "./http/clientIp";
import type { ReadyState } from "./http/probes";
import type { StaticAssets } from "./http/staticAssets";
import type { Gate } from "./launchPreflight";
import type { Logger } from "./observability/logger";
import type { Metrics } from "./observability/metrics";
import type { RateLimiter } from "./ratelimit/limiter";
import type { IndexSource } from "./read/runtime";
import type { Webhooks } from "./webhooks/service";

/** Everything the routes need from the outside world; tests build it from real parts. */
export type AppDeps = {
  config: AppConfig;
  /** null when no RPC URL is configured. */
  rpc: RpcClient | null;
  /** How multicalls reach Multicall3: decided at start-up (api/startup/multicall3.ts), else what MULTICALL3 implies. */
  multicall: MulticallVia;
  /** The genesis gate; one per process so the preflight route and the prepare routes share its cache. */
  gate: Gate;
  /** The node's back-off in an outage, shared by the v1 routes and the gate (api/chain/backoff.ts). */
  rpcBackoff: RpcBackoff;
  /** The index (api/read): its lock store, its reads at any block, their watermark and shared answers. */
  index: IndexSource;
  /** Supply cache, TTLs and deadline; everything defaults (in-process cache, spec TTLs). */
  supply?: SupplyDeps;
  /** Request budgets on /api/mcp/v1: in-memory, or Redis when config.redisUrl is set. */
  limiter: RateLimiter;
  /** Counters served at /api/metrics; give `metrics.onRpcCall` to createRpcClient as `onCall`. */
  metrics: Metrics;
  /** Structured JSON logs (stdout, level LOG_LEVEL: config.logLevel). */
  logger: Logger;
  /** The socket peer of a request; default: @hono/node-server's incoming socket (Ponder serves with it too). */
  peerAddress?: PeerAddressSource;
  /** The docs UI's built assets (dist/static); default: loaded once per process; null: /docs without the UI. */
  staticAssets: StaticAssets | null;
  /** What GET /ready reports (bounded; never hangs); default: ready, and with no index `index: "unconfigured"`. */
  readiness?: () => Promise<ReadyState>;
  /** The webhooks' store and settings (api/webhooks/service.ts); absent or null: their routes answer 503 (after 401). */
  webhooks?: Webhooks | null;
};

/** What callers pass to createApp: the gate defaults to one built from rpc + manifest, locks to none. */
export type AppDepsInput = Omit<AppDeps, Defaulted> &
  Partial<Pick<AppDeps, Exclude<Defaulted, "index">>> & { index?: Partial<IndexSource> };
type Defaulted = "gate" | "index" | "limiter" | "metrics" | "logger" | "staticAssets" | "multicall" | "rpcBackoff";

/** The supply routes' cache, TTLs, deadline and failure backoff; everything defaults. */
export type SupplyDeps = {
  /** Defaults to an in-process cache; pass createSupplyCache(config) to share through Redis. */
  cache?: TtlCache;
  /**
   * Server-side TTL of the one entry holding both total and circulating (api/supply/figures.ts); tests shorten it.
   * Cache-Control stays the spec's 300 / 86400 s.
   */
  ttlMs?: number;
  /** Whole-read deadline; defaults to min(config.rpcTimeoutMs, SUPPLY_RPC_TIMEOUT_CAP_MS). */
  rpcTimeoutMs?: number;
  /** How long a failed read is remembered before the figure is read again; default SUPPLY_FAILURE_BACKOFF_MS. */
  failureBackoffMs?: number;
  /** How often the block of the figures served is checked against the chain; default SUPPLY_BRANCH_CHECK_MS. */
  branchCheckMs?: number;
  /**
   * The block of the figures served and the blocks seen reorged away (api/supply/figures.ts SupplyFloor), shared with
   * `cache` (pass the one given to createSupplyCache); default: own.
   */
  floor?: { blockNumber: bigint | null; orphan(hash: string): void; isOrphaned(hash: string): boolean };
};
