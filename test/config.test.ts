import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainIdMismatchError, checkRpcChainId } from "../api/chain/chainId";
import { createRpcClient } from "../api/chain/rpc";
import { ConfigError, cliSchemaFrom, describeConfig, loadConfig } from "../api/config";
import { type AnvilHandle, startAnvil } from "../devnet/anvil";
import { REPO_ROOT } from "./support/ponder";
import { spawnService } from "./support/replica";
import { type RpcProxy, startRpcProxy } from "./support/rpcProxy";

// Production configuration: one validated object, every bad or missing variable named, no secret echoed;
// and the start-up check that the RPC serves the manifest's chain, down to a real `ponder start` refusing to run.

const SECRET = "SECRETKEY123";
const PASSWORD = "PGPASSWORD987";
const GOOD = {
  NETWORK: "base",
  RPC_URL: `https://base-mainnet.example.com/v2/${SECRET}`,
  DATABASE_URL: `postgresql://app:${PASSWORD}@db.internal:5432/asset`,
  DATABASE_SCHEMA: "asset_v1",
  DATABASE_VIEWS_SCHEMA: "asset",
  REDIS_URL: `redis://:${PASSWORD}@redis.internal:6379/0`,
  REDIS_KEY_PREFIX: "asset-prod:",
  TRUSTED_PROXIES: "10.0.0.5, 192.168.0.0/16, ::1",
  PORT: "42069",
  SHUTDOWN_DRAIN_MS: "8000",
};

const deployment = { deployment: true } as const;

/** The ConfigError message of `env`, asserting it is one and that no secret leaked into it. */
function failure(env: Record<string, string | undefined>, options = deployment): string {
  let caught: unknown;
  try {
    loadConfig(env, options);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const message = (caught as Error).message;
  expect(message).not.toContain(SECRET);
  expect(message).not.toContain(PASSWORD);
  return message;
}

describe("loadConfig for a deployment", () => {
  it("builds one object from a complete production environment, and describes it without secrets", () => {
    const config = loadConfig(GOOD, deployment);
    expect(config).toMatchObject({
      network: "base",
      chainId: 8453,
      rpcUrl: GOOD.RPC_URL,
      redisUrl: GOOD.REDIS_URL,
      redisKeyPrefix: "asset-prod:",
      trustedProxies: ["10.0.0.5", "192.168.0.0/16", "::1"],
      port: 42069,
      shutdownDrainMs: 8000,
      database: { url: GOOD.DATABASE_URL, schema: "asset_v1", viewsSchema: "asset" },
    });
    const line = describeConfig(config);
    expect(line).toContain("network=base");
    expect(line).toContain("indexSchema=asset viewsSchema=asset schema=asset_v1");
    expect(line).not.toContain(SECRET);
    expect(line).not.toContain(PASSWORD);
  });

  it.each(["base", "base-sepolia"])("NETWORK=%s names every missing variable at once", (network) => {
    const message = failure({ NETWORK: network });
    for (const name of ["RPC_URL", "DATABASE_URL", "DATABASE_SCHEMA"]) {
      expect(message).toContain(`${name}: required for NETWORK=${network}`);
    }
  });

  it("takes the schema from Ponder's --schema flag in place of DATABASE_SCHEMA", () => {
    const argv = ["node", "ponder.js", "serve", "--schema", "asset"];
    expect(cliSchemaFrom(argv)).toBe("asset");
    expect(cliSchemaFrom(["x", "--schema=asset_v2"])).toBe("asset_v2");
    const config = loadConfig({ ...GOOD, DATABASE_SCHEMA: undefined }, { deployment: true, cliSchema: "asset_v2" });
    expect(config.database.schema).toBe("asset_v2");
  });

  it("accepts DATABASE_PRIVATE_URL (Ponder's other name) for DATABASE_URL", () => {
    const config = loadConfig(
      { ...GOOD, DATABASE_URL: undefined, DATABASE_PRIVATE_URL: GOOD.DATABASE_URL },
      deployment,
    );
    expect(config.database.url).toBe(GOOD.DATABASE_URL);
  });

  it("SUPPLY_MAX_HEAD_AGE_SECONDS: 300 on Base, 0 (off) on the local devnet that mines on demand; 0-86400, whole", () => {
    expect(loadConfig(GOOD, deployment).supplyMaxHeadAgeSeconds).toBe(300);
    expect(loadConfig({ NETWORK: "local" }).supplyMaxHeadAgeSeconds).toBe(0);
    expect(loadConfig({ ...GOOD, SUPPLY_MAX_HEAD_AGE_SECONDS: "0" }, deployment).supplyMaxHeadAgeSeconds).toBe(0);
    expect(loadConfig({ NETWORK: "local", SUPPLY_MAX_HEAD_AGE_SECONDS: "60" }).supplyMaxHeadAgeSeconds).toBe(60);
    for (const bad of ["-1", "86401", "1.5", "five"]) {
      expect(failure({ ...GOOD, SUPPLY_MAX_HEAD_AGE_SECONDS: bad })).toContain("SUPPLY_MAX_HEAD_AGE_SECONDS");
    }
  });

  it("accepts Ponder's PONDER_RPC_URL_<chainId> for RPC_URL, as the indexer does (F10); RPC_URL wins", () => {
    // Before: the indexer ran on PONDER_RPC_URL_8453 alone while the API process refused "RPC_URL: required".
    const perChain = loadConfig({ ...GOOD, RPC_URL: undefined, PONDER_RPC_URL_8453: GOOD.RPC_URL }, deployment);
    expect([perChain.rpcUrl, perChain.rpcUrlVariable]).toEqual([GOOD.RPC_URL, "PONDER_RPC_URL_8453"]);
    const both = loadConfig({ ...GOOD, PONDER_RPC_URL_8453: "https://other.example" }, deployment);
    expect([both.rpcUrl, both.rpcUrlVariable]).toEqual([GOOD.RPC_URL, "RPC_URL"]);
    // Another chain's variable is not this network's: still missing, and the message names both.
    expect(failure({ ...GOOD, RPC_URL: undefined, PONDER_RPC_URL_84532: GOOD.RPC_URL })).toBe(
      "invalid configuration: RPC_URL: required for NETWORK=base (or set PONDER_RPC_URL_8453)",
    );
    expect(loadConfig({ NETWORK: "local" }).rpcUrlVariable).toBe("RPC_URL");
  });

  it("keeps the bare app (tests, local) free of the production requirements", () => {
    expect(loadConfig({ NETWORK: "base" }).rpcUrl).toBeNull();
    const local = loadConfig({ NETWORK: "local" }, deployment);
    expect(local.database).toEqual({ url: null, schema: null, viewsSchema: null });
    expect(local.redisKeyPrefix).toBe("asset-api:");
    expect(local.shutdownDrainMs).toBe(10_000);
    expect([local.apiPort, local.host]).toEqual([null, null]);
  });

  it("reads who may scrape the metrics: open on the public port by default; a token, a listener of their own", () => {
    expect(loadConfig({ NETWORK: "local" }).metrics).toEqual({ token: null, port: null, host: "127.0.0.1" });
    const token = `${SECRET}-metrics-token`;
    const config = loadConfig({ ...GOOD, METRICS_TOKEN: token, METRICS_PORT: "9464" }, deployment);
    expect(config.metrics).toEqual({ token, port: 9464, host: "127.0.0.1" });
    expect(loadConfig({ NETWORK: "local", METRICS_PORT: "9464", METRICS_HOST: "0.0.0.0" }).metrics.host).toBe(
      "0.0.0.0",
    );
    // Described, never shown.
    const line = describeConfig(config);
    expect(line).toContain("metrics=127.0.0.1:9464+token");
    expect(line).not.toContain(SECRET);
  });

  it("reads LOG_LEVEL through the one schema (info by default)", () => {
    expect(loadConfig({ NETWORK: "local" }, deployment).logLevel).toBe("info");
    expect(loadConfig({ NETWORK: "local", LOG_LEVEL: "warn" }, deployment).logLevel).toBe("warn");
  });

  it("reads API_PORT and HOST (npm start: the API on its own server inside Ponder's process)", () => {
    const local = loadConfig({ NETWORK: "local", API_PORT: "42069", HOST: "127.0.0.1" }, deployment);
    expect([local.apiPort, local.host]).toEqual([42069, "127.0.0.1"]);
  });

  it("connection limits: documented defaults (the total from the descriptor limit at start), each overridable", () => {
    expect(loadConfig({ NETWORK: "local" }).connections).toEqual({
      max: null,
      perIp: 256,
      pendingBytes: { perConnection: 8 * 2 ** 20, perIp: 32 * 2 ** 20, total: 128 * 2 ** 20 },
      sendTimeoutMs: 60_000,
      pressurePercent: 80,
    });
    const set = loadConfig({
      NETWORK: "local",
      MAX_CONNECTIONS: "5000",
      MAX_CONNECTIONS_PER_IP: "64",
      PENDING_RESPONSE_BYTES_PER_CONNECTION: "1048576",
      PENDING_RESPONSE_BYTES_PER_IP: "4194304",
      PENDING_RESPONSE_BYTES_MAX: "67108864",
      SEND_TIMEOUT_MS: "30000",
      CONNECTION_PRESSURE_PERCENT: "90",
    });
    expect(set.connections).toEqual({
      max: 5000,
      perIp: 64,
      pendingBytes: { perConnection: 1_048_576, perIp: 4_194_304, total: 67_108_864 },
      sendTimeoutMs: 30_000,
      pressurePercent: 90,
    });
  });

  it("pending-bytes caps set the wrong way round (per connection > per IP > total) are named; a lower total alone is not", () => {
    const MIB = 2 ** 20;
    const pending = (perConnection?: number, perIp?: number, total?: number) => ({
      ...GOOD,
      ...(perConnection ? { PENDING_RESPONSE_BYTES_PER_CONNECTION: String(perConnection * MIB) } : {}),
      ...(perIp ? { PENDING_RESPONSE_BYTES_PER_IP: String(perIp * MIB) } : {}),
      ...(total ? { PENDING_RESPONSE_BYTES_MAX: String(total * MIB) } : {}),
    });
    expect(failure(pending(64, 32))).toBe(
      "invalid configuration: PENDING_RESPONSE_BYTES_PER_CONNECTION: must not exceed PENDING_RESPONSE_BYTES_PER_IP",
    );
    expect(failure(pending(undefined, 256, 128))).toBe(
      "invalid configuration: PENDING_RESPONSE_BYTES_PER_IP: must not exceed PENDING_RESPONSE_BYTES_MAX",
    );
    expect(failure(pending(16, undefined, 8))).toBe(
      "invalid configuration: PENDING_RESPONSE_BYTES_PER_CONNECTION: must not exceed PENDING_RESPONSE_BYTES_MAX",
    );
    // One cap set below a default: the defaults are not held against it (the smallest cap is the one in effect).
    expect(loadConfig(pending(undefined, undefined, 1), deployment).connections.pendingBytes.total).toBe(MIB);
    expect(loadConfig(pending(8, 8, 8), deployment).connections.pendingBytes.perIp).toBe(8 * MIB);
  });

  it("a per-address cap above its total is named with both (connections, streams), as is STREAM_MAX above MAX_CONNECTIONS", () => {
    const with_ = (extra: Record<string, string>) => ({ ...GOOD, ...extra });
    expect(failure(with_({ MAX_CONNECTIONS: "100", MAX_CONNECTIONS_PER_IP: "101" }))).toBe(
      "invalid configuration: MAX_CONNECTIONS_PER_IP: must not exceed MAX_CONNECTIONS",
    );
    expect(failure(with_({ STREAM_MAX: "10", STREAM_MAX_PER_IP: "11" }))).toBe(
      "invalid configuration: STREAM_MAX_PER_IP: must not exceed STREAM_MAX",
    );
    // Each stream holds one of the API server's connections: more streams than connections is never reached.
    expect(failure(with_({ MAX_CONNECTIONS: "1000", STREAM_MAX: "1001" }))).toBe(
      "invalid configuration: STREAM_MAX: must not exceed MAX_CONNECTIONS",
    );
    // Every one at once, on one line each named.
    expect(
      failure(
        with_({ MAX_CONNECTIONS: "10", MAX_CONNECTIONS_PER_IP: "20", STREAM_MAX: "15", STREAM_MAX_PER_IP: "16" }),
      ),
    ).toBe(
      "invalid configuration: MAX_CONNECTIONS_PER_IP: must not exceed MAX_CONNECTIONS; " +
        "STREAM_MAX_PER_IP: must not exceed STREAM_MAX; STREAM_MAX: must not exceed MAX_CONNECTIONS",
    );
    // Equal is fine; a total set alone below a default it contains bounds it (as the pending-bytes caps);
    // STREAM_MAX=0 turns streams off whatever STREAM_MAX_PER_IP says.
    expect(
      loadConfig(with_({ MAX_CONNECTIONS: "64", MAX_CONNECTIONS_PER_IP: "64" }), deployment).connections.perIp,
    ).toBe(64);
    expect(loadConfig(with_({ MAX_CONNECTIONS: "100" }), deployment).connections).toMatchObject({
      max: 100,
      perIp: 256,
    });
    expect(loadConfig(with_({ STREAM_MAX: "8" }), deployment).streams).toMatchObject({ max: 8, perIp: 16 });
    expect(loadConfig(with_({ STREAM_MAX: "0", STREAM_MAX_PER_IP: "4" }), deployment).streams.max).toBe(0);
  });

  it("GraphQL documents: documented defaults, each overridable", () => {
    expect(loadConfig({ NETWORK: "local" }).graphqlDocuments).toEqual({
      cacheBytes: 50 * 2 ** 20,
      compilesInFlight: 1,
      compileQueue: 64,
    });
    const set = loadConfig({
      NETWORK: "local",
      GRAPHQL_DOCUMENT_CACHE_MB: "8",
      GRAPHQL_COMPILES_IN_FLIGHT: "2",
      GRAPHQL_COMPILE_QUEUE: "0",
    });
    expect(set.graphqlDocuments).toEqual({ cacheBytes: 8 * 2 ** 20, compilesInFlight: 2, compileQueue: 0 });
  });

  // [variable, bad value, what the message says]
  const table: [string, string, RegExp][] = [
    ["NETWORK", "mainnet", /^invalid configuration: NETWORK: must be one of local, base, base-sepolia$/],
    ["RPC_URL", `ftp://user:${SECRET}@node.example.com/`, /RPC_URL: must be a URL \(http: or https:\)/],
    ["RPC_URL", `not a url ${SECRET}`, /RPC_URL: must be a URL/],
    ["RPC_TIMEOUT_MS", "5", /RPC_TIMEOUT_MS: must be between/],
    ["DATABASE_URL", `mysql://app:${PASSWORD}@db/asset`, /DATABASE_URL: must be a URL \(postgres: or postgresql:\)/],
    ["DATABASE_URL", "postgresql://", /DATABASE_URL: must name a host/],
    ["DATABASE_SCHEMA", "asset-v1", /DATABASE_SCHEMA: must be a Postgres identifier/],
    ["DATABASE_SCHEMA", "ponder_sync", /DATABASE_SCHEMA: ponder_sync is reserved/],
    ["DATABASE_SCHEMA", "a".repeat(46), /DATABASE_SCHEMA: must be a Postgres identifier/],
    ["DATABASE_VIEWS_SCHEMA", "asset_v1", /DATABASE_VIEWS_SCHEMA: must differ from DATABASE_SCHEMA/],
    ["DATABASE_VIEWS_SCHEMA", "views;drop", /DATABASE_VIEWS_SCHEMA: must be a Postgres identifier/],
    ["PORT", "0", /PORT: must be between 1 and 65535/],
    ["PORT", "70000", /PORT: must be between 1 and 65535/],
    ["PORT", "80a", /PORT: must be a whole number/],
    ["API_PORT", "0", /API_PORT: must be between 1 and 65535/],
    ["TRUSTED_PROXIES", "10.0.0.5,proxy.internal", /TRUSTED_PROXIES: "proxy.internal" is not an IP address/],
    ["TRUSTED_PROXIES", "10.0.0.0/33", /TRUSTED_PROXIES: "10.0.0.0\/33" is not an IP address/],
    ["REDIS_URL", `http://:${PASSWORD}@redis.internal:6379`, /REDIS_URL: must be a URL \(redis: or rediss:\)/],
    ["REDIS_URL", "redis://", /REDIS_URL: must name a host/],
    // ioredis read these only when connecting: `SELECT NaN`, an uncaught reply error naming no variable.
    ["REDIS_URL", `redis://:${PASSWORD}@redis.internal:6379/abc`, /REDIS_URL: its path must be a database number/],
    ["REDIS_URL", "redis://redis.internal:6379/-1", /REDIS_URL: its path must be a database number/],
    ["REDIS_URL", "redis://redis.internal:6379/0/1", /REDIS_URL: its path must be a database number/],
    ["REDIS_URL", "redis://redis.internal:6379/2147483648", /REDIS_URL: its path must be a database number/],
    ["REDIS_URL", "redis://redis.internal:6379?db=abc", /REDIS_URL: its path must be a database number/],
    ["REDIS_URL", "redis://redis.internal:0/0", /REDIS_URL: its port must be between 1 and 65535/],
    ["REDIS_URL", "redis://redis.internal:99999/0", /REDIS_URL: must be a URL \(redis: or rediss:\)/],
    ["REDIS_KEY_PREFIX", "asset prod", /REDIS_KEY_PREFIX: must be 1-64 characters/],
    ["SHUTDOWN_DRAIN_MS", "600000", /SHUTDOWN_DRAIN_MS: must be between 0 and 60000/],
    ["LOG_LEVEL", "verbose", /LOG_LEVEL: must be one of debug, info, warn, error/],
    ["RATE_LIMIT_MAX", "0", /RATE_LIMIT_MAX: must be between/],
    ["METRICS_TOKEN", SECRET, /METRICS_TOKEN: must be at least 16 characters/],
    ["METRICS_TOKEN", `${SECRET} ${SECRET}`, /METRICS_TOKEN: must be at least 16 characters/],
    ["METRICS_PORT", "42069", /METRICS_PORT: must differ from PORT/],
    ["METRICS_PORT", "0", /METRICS_PORT: must be between 1 and 65535/],
    ["METRICS_HOST", "127.0.0.1", /METRICS_HOST: needs METRICS_PORT/],
    ["MAX_CONNECTIONS", "0", /MAX_CONNECTIONS: must be between 1 and/],
    ["MAX_CONNECTIONS_PER_IP", "many", /MAX_CONNECTIONS_PER_IP: must be a whole number/],
    ["PENDING_RESPONSE_BYTES_PER_CONNECTION", "1000", /PENDING_RESPONSE_BYTES_PER_CONNECTION: must be between 65536/],
    ["PENDING_RESPONSE_BYTES_PER_IP", "8M", /PENDING_RESPONSE_BYTES_PER_IP: must be a whole number/],
    ["PENDING_RESPONSE_BYTES_MAX", "0", /PENDING_RESPONSE_BYTES_MAX: must be between/],
    ["SEND_TIMEOUT_MS", "10", /SEND_TIMEOUT_MS: must be between 1000 and/],
    // Past Postgres's timestamps ("timestamp out of range": the delivery retried every lease, never dead), or at once.
    ["WEBHOOK_RETRY_SCHEDULE", "99999999999999", /WEBHOOK_RETRY_SCHEDULE: each wait must be between 0.1 and 604800/],
    ["WEBHOOK_RETRY_SCHEDULE", "5,604801", /WEBHOOK_RETRY_SCHEDULE: each wait must be between 0.1 and 604800/],
    ["WEBHOOK_RETRY_SCHEDULE", "0", /WEBHOOK_RETRY_SCHEDULE: each wait must be between 0.1 and 604800/],
    ["WEBHOOK_RETRY_SCHEDULE", "5,0.05,30", /WEBHOOK_RETRY_SCHEDULE: each wait must be between 0.1 and 604800/],
    ["WEBHOOK_RETRY_SCHEDULE", "5,,30", /WEBHOOK_RETRY_SCHEDULE: must be 1-30 comma-separated waits/],
  ];
  it.each(table)("%s=%s is named and its value not echoed", (name, value, expected) => {
    const message = failure({ ...GOOD, [name]: value });
    expect(message).toMatch(expected);
    // Only the offending variable is reported.
    expect(message.split("; ")).toHaveLength(1);
  });

  it("a bad NETWORK is named with the accepted values, never echoed (zod's own message said \"received '…'\")", () => {
    for (const value of ["mainnet", SECRET, "Base"]) {
      const message = failure({ ...GOOD, NETWORK: value });
      expect(message).toBe("invalid configuration: NETWORK: must be one of local, base, base-sepolia");
      expect(message).not.toContain(value);
    }
  });

  it("takes every REDIS_URL form ioredis connects with: no path, /, a database number, rediss, IPv6", () => {
    for (const value of [
      "redis://redis.internal",
      "redis://redis.internal:6379/",
      "redis://redis.internal:6379/15",
      `rediss://app:${PASSWORD}@redis.internal:6380/2147483647`,
      "redis://[::1]:6379/3",
      "redis://redis.internal:6379?db=2",
    ]) {
      expect(loadConfig({ ...GOOD, REDIS_URL: value }, deployment).redisUrl).toBe(value);
    }
  });

  it("WEBHOOK_RETRY_SCHEDULE: waits from 0.1 s to 7 days, in milliseconds", () => {
    const schedule = (v: string) =>
      loadConfig({ ...GOOD, WEBHOOK_RETRY_SCHEDULE: v }, deployment).webhooks.retryScheduleMs;
    expect(schedule("0.1,604800")).toEqual([100, 604_800_000]);
    expect(schedule("0.3,0.5,1")).toEqual([300, 500, 1_000]);
  });

  it("reports several bad variables in one message", () => {
    const message = failure({ ...GOOD, PORT: "x", REDIS_URL: "http://r", TRUSTED_PROXIES: "nope", RPC_URL: "" });
    for (const name of ["PORT", "REDIS_URL", "TRUSTED_PROXIES", "RPC_URL"]) expect(message).toContain(`${name}:`);
  });
});

describe(".env.example used as-is (`cp .env.example .env`, systemd EnvironmentFile=)", () => {
  /** Its uncommented KEY=VALUE lines: what a process given the file reads. */
  const values = Object.fromEntries(
    readFileSync(path.join(REPO_ROOT, ".env.example"), "utf8")
      .split("\n")
      .map((line) => line.match(/^([A-Z][A-Z0-9_]*)=(.*)$/))
      .filter((m): m is RegExpMatchArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );

  it("is a configuration every process accepts, and each value is the default the code applies", () => {
    expect(Object.keys(values).length).toBeGreaterThanOrEqual(20);
    // Not a default (a deployment's own choice, or meaningful only beside another variable): left commented.
    for (const name of ["NETWORK", "METRICS_HOST", "METRICS_PORT", "RPC_URL", "DATABASE_URL", "PORT", "HOST"])
      expect(values, name).not.toHaveProperty(name);
    // PGlite's folder is Ponder's own default (.ponder/pglite), which the config passes on as unset.
    const { PGLITE_DIR, ANVIL_PORT, ...rest } = values;
    expect([PGLITE_DIR, ANVIL_PORT]).toEqual([".ponder/pglite", "8545"]);
    const { manifest: _file, ...fromFile } = loadConfig(rest, deployment);
    const { manifest: _none, ...defaults } = loadConfig({}, deployment);
    expect(fromFile).toEqual(defaults);
    expect(loadConfig(values, deployment).indexer.pgliteDir).toBe(".ponder/pglite");
  });
});

describe("RPC chain-id check", () => {
  let anvil: AnvilHandle;
  let proxy: RpcProxy;
  const withKey = () => `${proxy.url}/v1/${SECRET}`;
  const check = (expected: number, timeoutMs = 2_000) =>
    checkRpcChainId({
      rpc: createRpcClient({ url: withKey(), timeoutMs }),
      expected,
      attempts: 2,
      retryDelayMs: 50,
    });

  /** The error of a failing check, asserted free of the key and naming RPC_URL. */
  async function rejected(p: Promise<void>): Promise<string> {
    const error = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain("RPC_URL at http://127.0.0.1:");
    expect(message).not.toContain(SECRET);
    expect(String((error as Error).stack)).not.toContain(SECRET);
    return message;
  }

  beforeAll(async () => {
    anvil = await startAnvil();
    proxy = await startRpcProxy({ upstream: anvil.rpcUrl });
  });
  afterAll(async () => {
    await proxy?.stop();
    await anvil?.stop();
  });

  it("passes when the node serves the manifest's chain", async () => {
    proxy.setFault(null);
    await expect(check(31337)).resolves.toBeUndefined();
  });

  it("stops on a mismatch, naming both chain ids", async () => {
    proxy.setFault(null);
    const error = await check(8453).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainIdMismatchError);
    expect(await rejected(check(8453))).toMatch(/serves chain id 31337, but the manifest is for chain id 8453/);
  });

  it.each([
    ["down", { kind: "down" }, /could not read eth_chainId \(unreachable/],
    ["HTTP 500", { kind: "http", status: 500 }, /could not read eth_chainId \(http: RPC eth_chainId: HTTP 500\)/],
    ["an RPC error", { kind: "rpcError", message: `bad key ${SECRET}` }, /could not read eth_chainId \(rpc:/],
    ["a timeout", { kind: "delay", ms: 1_500 }, /could not read eth_chainId \(timeout/],
    ["a malformed answer", { kind: "result", value: "31337" }, /eth_chainId answered a malformed value/],
  ] as const)("fails closed without the key when the node answers %s", async (_name, fault, expected) => {
    proxy.setFault(fault);
    try {
      expect(await rejected(check(31337, 500))).toMatch(expected);
    } finally {
      proxy.setFault(null);
    }
  });
});

describe("ponder start on a node of another chain", () => {
  let anvil: AnvilHandle;
  let proxy: RpcProxy;
  let dir: string;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1234 });
    proxy = await startRpcProxy({ upstream: anvil.rpcUrl });
    dir = mkdtempSync(path.join(os.tmpdir(), "prod-chainid-"));
  });
  afterAll(async () => {
    await proxy?.stop();
    await anvil?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exits non-zero before serving, naming RPC_URL and never printing its key", async () => {
    const ponder = await spawnService({
      command: "start",
      rpcUrl: `${proxy.url}/v1/${SECRET}`,
      // The committed devnet manifest: chainId 31337, while this anvil is chain 1234.
      manifestFile: path.join(REPO_ROOT, "deployments", "local.json"),
      pgliteDir: dir,
      schema: "chainid_check",
      logLevel: "info",
    });
    const exit = await Promise.race([ponder.exited, new Promise<null>((r) => setTimeout(() => r(null), 60_000))]);
    if (exit === null) await ponder.stop("SIGKILL");
    expect(exit, ponder.log()).not.toBeNull();
    expect(exit?.code).not.toBe(0);
    const log = ponder.log();
    expect(log).toMatch(
      /RPC_URL at http:\/\/127\.0\.0\.1:\d+\/\*\*\* serves chain id 1234, but the manifest is for chain id 31337/,
    );
    expect(log).not.toContain(SECRET);
    // It never served: no request reached the API.
    expect(await fetch(`${ponder.url}/health`).catch(() => null)).toBeNull();
  }, 90_000);
});

describe("the API process on PONDER_RPC_URL_<chainId> alone (F10)", () => {
  let anvil: AnvilHandle;
  let proxy: RpcProxy;

  beforeAll(async () => {
    anvil = await startAnvil();
    proxy = await startRpcProxy({ upstream: anvil.rpcUrl });
  });
  afterAll(async () => {
    await proxy?.stop();
    await anvil?.stop();
  });

  it("takes it as the indexer does: past the configuration to the node's check, which names that variable", async () => {
    // NETWORK=base with Base's variable only (this anvil is chain 31337, so the check refuses: nothing is served).
    // Before: "RPC_URL: required for NETWORK=base" while the indexer ran on the same environment.
    const api = await spawnService({
      command: "api",
      rpcUrl: "",
      manifestFile: "",
      // Never reached: the node is checked first.
      databaseUrl: `postgresql://app:${PASSWORD}@127.0.0.1:1/configcheck_none`,
      schema: "configcheck_f10",
      env: {
        NETWORK: "base",
        MANIFEST_FILE: undefined,
        RPC_URL: undefined,
        PONDER_RPC_URL_8453: `${proxy.url}/v1/${SECRET}`,
        REDIS_URL: undefined,
      },
    });
    const exit = await Promise.race([api.exited, new Promise<null>((r) => setTimeout(() => r(null), 30_000))]);
    if (exit === null) await api.stop("SIGKILL");
    const log = api.log();
    expect(exit?.code, log).toBe(1);
    expect(log).not.toContain("required");
    expect(log).toMatch(
      /PONDER_RPC_URL_8453 at http:\/\/127\.0\.0\.1:\d+\/\*\*\* serves chain id 31337, but the manifest is for chain id 8453/,
    );
    expect(log).not.toContain(SECRET);
  }, 60_000);
});
