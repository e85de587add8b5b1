import { type Address, getAddress, isAddress } from "viem";
import { z } from "zod";
import { DEFAULT_RPC_TIMEOUT_MS } from "./chain/rpc";
import { loadManifest, NETWORKS, type Network } from "./manifest";
import { parseTrustedProxies } from "./net/ip";
import { LOG_LEVELS, type LogLevel } from "./observability/logger";
import { redactUrl } from "./redact";

export const LOCAL_RPC_URL = "http://127.0.0.1:8545";

const MIB = 1024 * 1024;

/**
 * The defaults, and why. Connections: nginx's limit_conn has no default; a few hundred per address lets a
 * NAT of browsers (6 connections each) through and stops one host holding the process's descriptors.
 * Bytes: an answer is at most ~4.4 MB (the docs bundle uncompressed; an MCP answer is at most 2 MiB), so a
 * connection may hold one, an address a handful, and the process a bounded 128 MiB of other people's
 * unread answers. The send timeout is nginx's send_timeout (60 s between two successful writes).
 */
export const CONNECTION_DEFAULTS = {
  perIp: 256,
  pendingBytes: { perConnection: 8 * MIB, perIp: 32 * MIB, total: 128 * MIB },
  sendTimeoutMs: 60_000,
  /** Past this share of the total cap, an address above its fair share loses its oldest idle connections first. */
  pressurePercent: 80,
} as const;

/**
 * GraphQL documents a client chooses (api/graphql/documentCache.ts, compileGate.ts): the cache of parsed, validated
 * and compiled documents is bounded by bytes; new documents compile one at a time, at most 64 waiting (1 s each).
 */
export const GRAPHQL_DOCUMENT_DEFAULTS = { cacheMb: 50, compilesInFlight: 1, compileQueue: 64 } as const;

export type Multicall3Setting = "auto" | "canonical" | "deployless" | Address;

/** Networks whose deployment must name every external part: nothing may fall back to a local default. */
export const PRODUCTION_NETWORKS: readonly Network[] = ["base", "base-sepolia"];

export type LoadConfigOptions = {
  /**
   * Set by the Ponder entry (src/api/index.ts): on a production network RPC_URL, DATABASE_URL and
   * DATABASE_SCHEMA become required, so a half-configured deployment stops at start-up instead of
   * indexing into a local PGlite or serving without a node. Tests of the bare app leave it off.
   */
  deployment?: boolean;
  /** The schema given as `--schema` on Ponder's command line, which stands in for DATABASE_SCHEMA. */
  cliSchema?: string;
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

const url = (schemes: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return schemes.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL (${schemes.join(" or ")})`,
  );

const intIn = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be between ${min} and ${max}`);

// Ponder's own limits (drizzle/onchain.js MAX_DATABASE_OBJECT_NAME_LENGTH; ponder_sync is its cache schema).
const schemaName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,44}$/, "must be a Postgres identifier (letters, digits and _, at most 45)")
  .refine((v) => v !== "ponder_sync", "ponder_sync is reserved by Ponder");

export const DEFAULT_REDIS_KEY_PREFIX = "asset-api:";
/** A metrics listener of its own is for the scraper beside the process, not for the internet. */
export const DEFAULT_METRICS_HOST = "127.0.0.1";
/** Fits a Kubernetes default grace period (30 s) with Ponder's own 5 s shutdown after it. */
export const DEFAULT_SHUTDOWN_DRAIN_MS = 10_000;

/** How long every index read may fail, with no success between, before /ready answers 503 (docs/operations.md). */
export const DEFAULT_READY_INDEX_FAILURE_MS = 30_000;
/** SUPPLY_MAX_HEAD_AGE_SECONDS on Base: the supply figures' window (a head older is older than any figure served). */
export const DEFAULT_SUPPLY_MAX_HEAD_AGE_SECONDS = 300;
/** The streams' defaults: 10,000 idle streams cost well under 200 MB (bench/stream-idle.ts); a browser opens one. */
export const STREAM_DEFAULTS = { max: 10_000, perIp: 16, heartbeatMs: 15_000, replayBlocks: 1_000 } as const;

/**
 * The webhooks' defaults: retries after 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h, 8 h (31.7 h in
 * all, so a receiver down for a day still gets everything), 10 s an attempt, 1,000 subscriptions.
 */
export const WEBHOOK_DEFAULTS = {
  retrySchedule: "5,30,120,600,1800,3600,7200,14400,28800,28800,28800",
  timeoutMs: 10_000,
  max: 1_000,
} as const;

/**
 * One retry's wait, in seconds: not 0 (a failing receiver retried at once, 30 times in a row), at most 7 days (a
 * delivery's next attempt is a Postgres timestamp; 99999999999999 s is past its year 294276, so the failed attempt
 * could not be recorded and the delivery was retried every lease for ever). 0.1 s lets tests run a schedule quickly.
 */
export const RETRY_WAIT_SECONDS = { min: 0.1, max: 7 * 86_400 } as const;

const envSchema = z.object({
  // A message of its own: zod's default one echoes the value ("received 'mainnet'"), and no value is ever echoed.
  NETWORK: z
    .enum(Object.keys(NETWORKS) as [Network, ...Network[]], {
      message: `must be one of ${Object.keys(NETWORKS).join(", ")}`,
    })
    .default("local"),
  /** Overrides deployments/<NETWORK>.json (tests point it at their own devnet's manifest). */
  MANIFEST_FILE: z.string().optional(),
  RPC_URL: url(["http:", "https:"]).optional(),
  RPC_TIMEOUT_MS: intIn(100, 120_000).default(String(DEFAULT_RPC_TIMEOUT_MS)),
  REDIS_URL: url(["redis:", "rediss:"]).optional(),
  TRUSTED_PROXIES: z.string().optional(),
  RATE_LIMIT_MAX: intIn(1, 1_000_000).default("300"),
  RATE_LIMIT_WINDOW_SEC: intIn(1, 86_400).default("60"),
  INDEX_COMPUTE_QUEUE: intIn(0, 10_000).default("8"),
  INDEX_COMPUTE_WAIT_MS: intIn(0, 60_000).default("2000"),
  PORT: intIn(1, 65_535).optional(),
  HOST: z.string().optional(),
  API_PORT: intIn(1, 65_535).optional(),
  DATABASE_URL: url(["postgres:", "postgresql:"]).optional(),
  DATABASE_PRIVATE_URL: url(["postgres:", "postgresql:"]).optional(),
  DATABASE_SCHEMA: schemaName.optional(),
  DATABASE_VIEWS_SCHEMA: schemaName.optional(),
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_.-]{1,64}$/, "must be 1-64 characters of A-Z a-z 0-9 : _ . -")
    .default(DEFAULT_REDIS_KEY_PREFIX),
  SHUTDOWN_DRAIN_MS: intIn(0, 60_000).default(String(DEFAULT_SHUTDOWN_DRAIN_MS)),
  LOG_LEVEL: z
    .enum(LOG_LEVELS as [LogLevel, ...LogLevel[]], { message: `must be one of ${LOG_LEVELS.join(", ")}` })
    .default("info"),
  PGLITE_DIR: z.string().optional(),
  INDEXER_POLLING_MS: intIn(100, 60_000).optional(),
  INDEXER_DISABLE_CACHE: z.enum(["true", "false"], { message: "must be true or false" }).optional(),
  // RFC 6750's token characters, so any scraper can send it; long enough not to be guessed.
  METRICS_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9._~+/-]{16,}=*$/, "must be at least 16 characters of A-Z a-z 0-9 . _ ~ + / - (then = padding)")
    .optional(),
  METRICS_PORT: intIn(1, 65_535).optional(),
  METRICS_HOST: z.string().default(DEFAULT_METRICS_HOST),
  MULTICALL3: z
    .string()
    .refine(
      (v) => ["auto", "canonical", "deployless"].includes(v) || isAddress(v),
      "must be auto, canonical, deployless or a contract address (0x + 40 hex, EIP-55 checksum when mixed case)",
    )
    .optional(),
  MAX_CONNECTIONS: intIn(1, 1_000_000).optional(),
  MAX_CONNECTIONS_PER_IP: intIn(1, 1_000_000).default(String(CONNECTION_DEFAULTS.perIp)),
  PENDING_RESPONSE_BYTES_PER_CONNECTION: intIn(64 * 1024, 1024 * MIB).default(
    String(CONNECTION_DEFAULTS.pendingBytes.perConnection),
  ),
  PENDING_RESPONSE_BYTES_PER_IP: intIn(64 * 1024, 16 * 1024 * MIB).default(
    String(CONNECTION_DEFAULTS.pendingBytes.perIp),
  ),
  PENDING_RESPONSE_BYTES_MAX: intIn(64 * 1024, 64 * 1024 * MIB).default(String(CONNECTION_DEFAULTS.pendingBytes.total)),
  SEND_TIMEOUT_MS: intIn(1_000, 3_600_000).default(String(CONNECTION_DEFAULTS.sendTimeoutMs)),
  /** An index answer whose indexed head is older than this many seconds says `stale: true` (the reference's 180). */
  INDEX_STALE_SECONDS: intIn(1, 86_400).default("180"),
  /** The same for a leaderboard's answer (the ve board, the duration boards, their rank lookups): the reference's 15 min. */
  INDEX_BOARD_STALE_SECONDS: intIn(1, 86_400).default("900"),
  /**
   * A supply read whose head block is older than this many seconds (by the wall clock) came from a lagging node: its
   * figures are never served (api/supply/router.ts). 0 turns the check off; unset: 300 on Base, 0 on the local devnet.
   */
  SUPPLY_MAX_HEAD_AGE_SECONDS: intIn(0, 86_400).optional(),
  // The key of the page cursors' MAC (api/read/cursor.ts): a secret, long enough not to be guessed.
  CURSOR_SECRET: z
    .string()
    .regex(/^[\x21-\x7e]{32,}$/, "must be at least 32 printable characters, no spaces")
    .optional(),
  READY_INDEX_FAILURE_MS: intIn(1_000, 3_600_000).default(String(DEFAULT_READY_INDEX_FAILURE_MS)),
  CONNECTION_PRESSURE_PERCENT: intIn(50, 100).default(String(CONNECTION_DEFAULTS.pressurePercent)),
  GRAPHQL_DOCUMENT_CACHE_MB: intIn(1, 4096).default(String(GRAPHQL_DOCUMENT_DEFAULTS.cacheMb)),
  GRAPHQL_COMPILES_IN_FLIGHT: intIn(1, 64).default(String(GRAPHQL_DOCUMENT_DEFAULTS.compilesInFlight)),
  GRAPHQL_COMPILE_QUEUE: intIn(0, 10_000).default(String(GRAPHQL_DOCUMENT_DEFAULTS.compileQueue)),
  STREAM_MAX: intIn(0, 1_000_000).default(String(STREAM_DEFAULTS.max)),
  STREAM_MAX_PER_IP: intIn(1, 100_000).default(String(STREAM_DEFAULTS.perIp)),
  STREAM_HEARTBEAT_MS: intIn(1_000, 60_000).default(String(STREAM_DEFAULTS.heartbeatMs)),
  STREAM_REPLAY_BLOCKS: intIn(0, 100_000).default(String(STREAM_DEFAULTS.replayBlocks)),
  // The operators' bearer for the webhook routes (api/webhooks/routes.ts): a secret, long enough not to be guessed.
  OPERATOR_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9._~+/-]{16,}=*$/, "must be at least 16 characters of A-Z a-z 0-9 . _ ~ + / - (then = padding)")
    .optional(),
  WEBHOOK_ALLOW_PRIVATE: z
    .enum(["false", "loopback", "true"], { message: "must be false, loopback or true" })
    .default("false"),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?){0,29}$/, "must be 1-30 comma-separated waits in seconds (5,30,120)")
    // Piped: the bounds are checked only on a well-formed list, so a bad one is told once.
    .pipe(
      z
        .string()
        .refine(
          (v) => v.split(",").every((s) => Number(s) >= RETRY_WAIT_SECONDS.min && Number(s) <= RETRY_WAIT_SECONDS.max),
          `each wait must be between ${RETRY_WAIT_SECONDS.min} and ${RETRY_WAIT_SECONDS.max} seconds (7 days)`,
        ),
    )
    .default(WEBHOOK_DEFAULTS.retrySchedule),
  WEBHOOK_TIMEOUT_MS: intIn(100, 60_000).default(String(WEBHOOK_DEFAULTS.timeoutMs)),
  WEBHOOK_MAX: intIn(0, 100_000).default(String(WEBHOOK_DEFAULTS.max)),
  WEBHOOK_SCHEMA: schemaName.default("webhooks"),
});

/** Ponder's own name for a chain's RPC: RPC_URL wins over it. */
export const perChainRpcVariable = (chainId: number) => `PONDER_RPC_URL_${chainId}`;

const hasHost = (value: string) => {
  try {
    return new URL(value).hostname !== "";
  } catch {
    return false;
  }
};

/** Redis's largest database index (its `databases` setting is a C int); which exist is the server's to say. */
const MAX_REDIS_DB = 2_147_483_647;

/**
 * What is wrong with a redis:// or rediss:// URL, or null. ioredis takes a URL apart only when it connects: a
 * database path that is not a number became `SELECT NaN`, an uncaught reply error after start naming no variable.
 */
function redisUrlProblem(value: string): string | null {
  const u = new URL(value);
  if (u.hostname === "") return "must name a host";
  if (u.port === "0") return "its port must be between 1 and 65535";
  // The database: the path (redis://host:6379/2), else ioredis's `db` query parameter.
  const db = u.pathname.replace(/^\//, "") || (u.searchParams.get("db") ?? "");
  if (db !== "" && !(/^[0-9]{1,10}$/.test(db) && Number(db) <= MAX_REDIS_DB)) {
    // No example URL here: the process's output filter would mask it (api/startup/redactOutput.ts).
    return `its path must be a database number, 0-${MAX_REDIS_DB}, or none (database 0)`;
  }
  return null;
}

/**
 * Caps that lie within another: [inner, outer]. The pending-bytes caps nest; a per-address cap lies within its total
 * (connections, streams); and each stream holds one of the API server's connections, so STREAM_MAX above
 * MAX_CONNECTIONS could never be reached.
 */
const CAPS_NESTED = [
  ["PENDING_RESPONSE_BYTES_PER_CONNECTION", "PENDING_RESPONSE_BYTES_PER_IP"],
  ["PENDING_RESPONSE_BYTES_PER_IP", "PENDING_RESPONSE_BYTES_MAX"],
  ["PENDING_RESPONSE_BYTES_PER_CONNECTION", "PENDING_RESPONSE_BYTES_MAX"],
  ["MAX_CONNECTIONS_PER_IP", "MAX_CONNECTIONS"],
  ["STREAM_MAX_PER_IP", "STREAM_MAX"],
  ["STREAM_MAX", "MAX_CONNECTIONS"],
] as const;

/** The value of `--schema X` / `--schema=X` in a Ponder command line, if any. */
export function cliSchemaFrom(argv: readonly string[] = process.argv): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--schema") return argv[i + 1];
    if (arg.startsWith("--schema=")) return arg.slice("--schema=".length);
  }
  return undefined;
}

/**
 * Reads the environment; every bad or missing value is reported in one ConfigError naming each variable at
 * fault (never its value: URLs carry API keys and passwords).
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, options: LoadConfigOptions = {}) {
  // Values are trimmed, and an empty one is unset, so `RPC_URL=` behaves like no RPC at all.
  const cleaned = Object.fromEntries(
    Object.entries(env)
      .map(([k, v]) => [k, v?.trim()] as const)
      .filter((entry): entry is readonly [string, string] => entry[1] !== undefined && entry[1] !== ""),
  );
  const parsed = envSchema.safeParse(cleaned);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`);
  const bad = new Set(parsed.success ? [] : parsed.error.issues.map((i) => String(i.path[0])));
  const e = (parsed.success ? parsed.data : {}) as Partial<z.output<typeof envSchema>>;
  // Read NETWORK on its own, so the production requirements are reported even when another variable failed.
  const network = bad.has("NETWORK") ? undefined : ((cleaned.NETWORK ?? "local") as Network);

  // URL forms zod's refine cannot see: a redis URL must name a host ("redis://" alone parses), a port, a database.
  const redisProblem = e.REDIS_URL === undefined ? null : redisUrlProblem(e.REDIS_URL);
  if (redisProblem !== null) problems.push(`REDIS_URL: ${redisProblem}`);
  for (const name of ["DATABASE_URL", "DATABASE_PRIVATE_URL"] as const) {
    const v = e[name];
    if (v !== undefined && !hasHost(v)) problems.push(`${name}: must name a host`);
  }
  const trustedProxies = (cleaned.TRUSTED_PROXIES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of trustedProxies) {
    try {
      parseTrustedProxies([entry]);
    } catch {
      // The entry is not a secret, and naming it is what lets an operator fix the list.
      problems.push(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
    }
  }
  const schema = e.DATABASE_SCHEMA ?? options.cliSchema ?? null;
  if (e.DATABASE_VIEWS_SCHEMA !== undefined && e.DATABASE_VIEWS_SCHEMA === schema) {
    problems.push("DATABASE_VIEWS_SCHEMA: must differ from DATABASE_SCHEMA");
  }
  // Each nested cap lies within its outer one; a default is left alone (setting only the total lower is fine: it then
  // bounds the others), but two caps set the wrong way round are a mistake to name. An outer 0 (STREAM_MAX: streams
  // off) contains nothing to compare.
  for (const [inner, outer] of CAPS_NESTED) {
    const [a, b] = [e[inner], e[outer]];
    const bothSet = cleaned[inner] !== undefined && cleaned[outer] !== undefined;
    if (bothSet && a !== undefined && b !== undefined && b !== 0 && a > b) {
      problems.push(`${inner}: must not exceed ${outer}`);
    }
  }
  if (cleaned.METRICS_HOST !== undefined && e.METRICS_PORT === undefined) {
    problems.push("METRICS_HOST: needs METRICS_PORT (the metrics listener it places)");
  }
  for (const name of ["PORT", "API_PORT"] as const) {
    if (e.METRICS_PORT !== undefined && e.METRICS_PORT === e[name])
      problems.push(`METRICS_PORT: must differ from ${name}`);
  }
  if (options.deployment && network !== undefined && PRODUCTION_NETWORKS.includes(network)) {
    const missing = (name: string) => problems.push(`${name}: required for NETWORK=${network}`);
    // Ponder's own name for the chain's RPC stands in for RPC_URL, as it does for the indexer (indexer/config.ts): a
    // deployment that sets only PONDER_RPC_URL_8453 runs both processes, not just the indexer.
    const perChain = perChainRpcVariable(NETWORKS[network]);
    if (cleaned.RPC_URL === undefined && cleaned[perChain] === undefined) {
      problems.push(`RPC_URL: required for NETWORK=${network} (or set ${perChain})`);
    }
    if (cleaned.DATABASE_URL === undefined && cleaned.DATABASE_PRIVATE_URL === undefined) missing("DATABASE_URL");
    if (cleaned.DATABASE_SCHEMA === undefined && options.cliSchema === undefined) missing("DATABASE_SCHEMA");
  }
  if (problems.length > 0 || network === undefined || !parsed.success) {
    throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
  }
  const v = parsed.data;

  const manifest = loadManifest(network, e.MANIFEST_FILE);
  const perChain = perChainRpcVariable(manifest.chainId);
  const perChainUrl = cleaned[perChain];
  if (perChainUrl !== undefined && !url(["http:", "https:"]).safeParse(perChainUrl).success) {
    throw new ConfigError(`invalid configuration: ${perChain}: must be a URL (http: or https:)`);
  }
  return {
    network,
    chainId: manifest.chainId,
    manifest,
    /** null → the supply routes answer SUPPLY_NO_RPC_URL, reads fail upstream; /max still answers. The local devnet's
     *  anvil is the one default; every other network must name its node. */
    rpcUrl: v.RPC_URL ?? perChainUrl ?? (network === "local" ? LOCAL_RPC_URL : null),
    /** The variable `rpcUrl` came from, for messages about the node (RPC_URL when it is the local default or none). */
    rpcUrlVariable: v.RPC_URL === undefined && perChainUrl !== undefined ? perChain : "RPC_URL",
    rpcTimeoutMs: v.RPC_TIMEOUT_MS,
    redisUrl: v.REDIS_URL ?? null,
    /** Peers whose X-Forwarded-For is believed (exact IPs). */
    trustedProxies,
    rateLimit: { max: v.RATE_LIMIT_MAX, windowSec: v.RATE_LIMIT_WINDOW_SEC },
    /**
     * Past blocks' whole-index computations (a ve ranking, the stats) waiting for a slot of the index's pool
     * (api/read/computeGate.ts): at most `queue` (INDEX_COMPUTE_QUEUE) wait, each at most `waitMs`
     * (INDEX_COMPUTE_WAIT_MS); past either, 503 INDEX_UNAVAILABLE "busy" with Retry-After.
     */
    indexCompute: { queue: v.INDEX_COMPUTE_QUEUE, waitMs: v.INDEX_COMPUTE_WAIT_MS },
    /** PORT, when set (Ponder reads the same variable; --port otherwise). */
    port: v.PORT ?? null,
    /** HOST: the API server's listening address; null → the entry's default. */
    host: v.HOST ?? null,
    /**
     * API_PORT: when set, `ponder start` also serves the API on this port, assembled as the API process is
     * (api/server/process.ts), reading Ponder's in-process database; Ponder's HTTP server stays on its --port.
     * `npm start` sets it. Unset (production, `npm run serve:indexer`): Ponder only indexes; `serve:api` serves.
     */
    apiPort: v.API_PORT ?? null,
    /** Where Ponder keeps the index. `url` holds credentials: log it only through describeConfig. */
    database: {
      url: v.DATABASE_URL ?? v.DATABASE_PRIVATE_URL ?? null,
      schema,
      viewsSchema: v.DATABASE_VIEWS_SCHEMA ?? null,
    },
    /** Namespaces every Redis key (cache and limiter); replicas that must share state use the same one. */
    redisKeyPrefix: v.REDIS_KEY_PREFIX,
    /** After SIGTERM, how long in-flight requests may run before Ponder's own shutdown proceeds. */
    shutdownDrainMs: v.SHUTDOWN_DRAIN_MS,
    /** LOG_LEVEL: lines below it are dropped (api/observability/logger.ts). */
    logLevel: v.LOG_LEVEL,
    /**
     * MULTICALL3: how the state route's multicall reaches Multicall3, decided at start-up (api/startup/multicall3.ts):
     * "auto" uses the contract at its canonical address when the node has it, else runs it deployless; "canonical"
     * requires it there (the process refuses to start without it); "deployless" never asks; an address requires
     * Multicall3 at that address.
     */
    multicall3: multicall3Setting(v.MULTICALL3),
    /** INDEX_STALE_SECONDS: an index answer lagging the wall clock by more says `stale: true` (api/index/answer.ts). */
    indexStaleSeconds: v.INDEX_STALE_SECONDS,
    /** INDEX_BOARD_STALE_SECONDS: `stale: true` on a leaderboard's answer past this lag (api/index/answer.ts boardAnswers). */
    indexBoardStaleSeconds: v.INDEX_BOARD_STALE_SECONDS,
    /**
     * SUPPLY_MAX_HEAD_AGE_SECONDS: a supply read whose head is older than this (wall clock) is a lagging node's, never
     * served; 0: no such check. Default 300 s (the figures' window) on Base, 0 on the local devnet, whose anvil
     * (`npm run devnet:up`) mines only on demand, so its head is as old as its last transaction.
     */
    supplyMaxHeadAgeSeconds:
      v.SUPPLY_MAX_HEAD_AGE_SECONDS ?? (network === "local" ? 0 : DEFAULT_SUPPLY_MAX_HEAD_AGE_SECONDS),
    /** The indexer's own settings (indexer/config.ts turns them into Ponder's); null = the network's default. */
    indexer: {
      pgliteDir: v.PGLITE_DIR ?? null,
      pollingIntervalMs: v.INDEXER_POLLING_MS ?? null,
      disableCache: v.INDEXER_DISABLE_CACHE === undefined ? null : v.INDEXER_DISABLE_CACHE === "true",
    },
    /**
     * Who may read the metrics. `token` (METRICS_TOKEN): a scrape must send `Authorization: Bearer <token>`, else
     * 401 UNAUTHORIZED; a secret, never logged. `port` (METRICS_PORT): the metrics are served only on a listener
     * of their own at `host`:`port`/metrics (METRICS_HOST, default 127.0.0.1), and the public port answers
     * /api/metrics with 404. Neither set: /api/metrics on the public port, open.
     */
    metrics: { token: v.METRICS_TOKEN ?? null, port: v.METRICS_PORT ?? null, host: v.METRICS_HOST },
    /** What clients may make the API server hold (api/server/server.ts; defaults and reasons in CONNECTION_DEFAULTS). */
    connections: {
      /** MAX_CONNECTIONS; null: the process's descriptor limit, read at start, less a reserve (api/server/descriptorLimit.ts). */
      max: (v.MAX_CONNECTIONS ?? null) as number | null,
      /** MAX_CONNECTIONS_PER_IP: connections one peer may hold open; trusted proxies count only in `max`. */
      perIp: v.MAX_CONNECTIONS_PER_IP,
      /** PENDING_RESPONSE_BYTES_*: unsent answer bytes one connection, one peer and the whole process may hold. */
      pendingBytes: {
        perConnection: v.PENDING_RESPONSE_BYTES_PER_CONNECTION,
        perIp: v.PENDING_RESPONSE_BYTES_PER_IP,
        total: v.PENDING_RESPONSE_BYTES_MAX,
      },
      /** SEND_TIMEOUT_MS: a connection whose unsent answer makes no progress for this long closes (api/server/sendTimeout.ts). */
      sendTimeoutMs: v.SEND_TIMEOUT_MS,
      /**
       * CONNECTION_PRESSURE_PERCENT: once open connections pass this share of `max`, a new connection from an
       * address holding less than its fair share is taken by closing an idle one of the address holding most.
       */
      pressurePercent: v.CONNECTION_PRESSURE_PERCENT,
    },
    /** GraphQL's documents (api/graphql/documentCache.ts, compileGate.ts). */
    graphqlDocuments: {
      /** GRAPHQL_DOCUMENT_CACHE_MB: the estimated bytes of parsed, validated and compiled documents kept. */
      cacheBytes: v.GRAPHQL_DOCUMENT_CACHE_MB * MIB,
      /** GRAPHQL_COMPILES_IN_FLIGHT: new documents parsed, validated and compiled at once in this process. */
      compilesInFlight: v.GRAPHQL_COMPILES_IN_FLIGHT,
      /** GRAPHQL_COMPILE_QUEUE: new documents that may wait for a compile permit; past it, 503 at once. */
      compileQueue: v.GRAPHQL_COMPILE_QUEUE,
    },
    /**
     * CURSOR_SECRET: the key the page cursors are signed with (api/read/cursor.ts); a secret, never logged. null:
     * derived from the chain, the schema and the database URL's name and password (api/read/cursor.ts cursorKey), the
     * same in every replica of one deployment.
     */
    cursorSecret: v.CURSOR_SECRET ?? null,
    /** READY_INDEX_FAILURE_MS: index reads failing this long with no success between → /ready 503 "index reads failing". */
    readyIndexFailureMs: v.READY_INDEX_FAILURE_MS,
    /**
     * The index's event streams (GET /api/index/v1/stream, api/index/stream.ts): STREAM_MAX open in this process
     * (0: every stream is refused with 429), STREAM_MAX_PER_IP per client address, a comment
     * every STREAM_HEARTBEAT_MS, and at most STREAM_REPLAY_BLOCKS blocks replayed for a Last-Event-ID (beyond: `reset`).
     */
    streams: {
      max: v.STREAM_MAX,
      perIp: v.STREAM_MAX_PER_IP,
      heartbeatMs: v.STREAM_HEARTBEAT_MS,
      replayBlocks: v.STREAM_REPLAY_BLOCKS,
    },
    /**
     * The webhooks (api/webhooks): OPERATOR_TOKEN the operators' bearer (a secret, never logged; null: the routes answer
     * 401); WEBHOOK_ALLOW_PRIVATE which non-public targets may be registered and reached (none, loopback, all);
     * WEBHOOK_RETRY_SCHEDULE the waits before each retry, then dead; WEBHOOK_TIMEOUT_MS one attempt; WEBHOOK_MAX the
     * deployment's subscriptions; WEBHOOK_SCHEMA the database schema of their tables.
     */
    webhooks: {
      operatorToken: v.OPERATOR_TOKEN ?? null,
      allowPrivate: ({ false: "none", loopback: "loopback", true: "all" } as const)[v.WEBHOOK_ALLOW_PRIVATE],
      retryScheduleMs: v.WEBHOOK_RETRY_SCHEDULE.split(",").map((s) => Math.round(Number(s) * 1000)),
      timeoutMs: v.WEBHOOK_TIMEOUT_MS,
      maxSubscriptions: v.WEBHOOK_MAX,
      schema: v.WEBHOOK_SCHEMA,
    },
  };
}

/**
 * The service's whole configuration, built once from the environment at start-up: what the schema above declares
 * (each variable, its rule and its default) as loadConfig shapes it. Declared nowhere else.
 */
export type AppConfig = ReturnType<typeof loadConfig>;

/**
 * Caps on what clients can make the API server hold: open connections (api/server/connectionLimit.ts) and the
 * bytes of answers written but not yet taken by the client (api/server/connectionGuard.ts). Per IP means per
 * socket peer (an IPv6 /64), whatever X-Forwarded-For says: a connection is a socket's.
 */
export type ConnectionLimits = AppConfig["connections"];

function multicall3Setting(value: string | undefined): Multicall3Setting {
  if (value === undefined) return "auto";
  return value === "auto" || value === "canonical" || value === "deployless" ? value : getAddress(value);
}

/**
 * A one-line description safe to log: no secrets. `indexSchema` is the schema the index is read from (the views
 * schema when DATABASE_VIEWS_SCHEMA is set, as api/server/main.ts reads it); `schema` (DATABASE_SCHEMA or `--schema`)
 * is then only checked, and after a redeploy may name an older deployment.
 */
export function describeConfig(config: AppConfig): string {
  return [
    `network=${config.network}`,
    `chainId=${config.chainId}`,
    `rpc=${config.rpcUrl ? redactUrl(config.rpcUrl) : "none"}`,
    `redis=${config.redisUrl ? redactUrl(config.redisUrl) : "none"}`,
    `redisKeyPrefix=${config.redisKeyPrefix}`,
    `database=${config.database.url ? redactUrl(config.database.url) : "none"}`,
    `indexSchema=${config.database.viewsSchema ?? config.database.schema ?? "none"}`,
    `viewsSchema=${config.database.viewsSchema ?? "none"}`,
    `schema=${config.database.schema ?? "none"}`,
    `metrics=${config.metrics.port === null ? "public" : `${config.metrics.host}:${config.metrics.port}`}${config.metrics.token ? "+token" : ""}`,
    `multicall3=${config.multicall3}`,
    `cursorKey=${config.cursorSecret === null ? "derived" : "set"}`,
  ].join(" ");
}
