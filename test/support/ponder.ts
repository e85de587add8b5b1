/**
 * The real indexer for a test: `ponder start` as a child process against a devnet, on its own port and its
 * own database (a fresh PGlite directory, or a fresh Postgres database when DATABASE_URL is set), plus a way to
 * read its tables from the test process. Reused by every end-to-end test that needs the index.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { drizzle as drizzleProxy } from "drizzle-orm/pg-proxy";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import pg from "pg";
import type { Manifest } from "../../api/manifest";
import type { LockDb } from "../../api/read/statements";
import { freePort } from "../../devnet/anvil";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const PONDER_BIN = path.join(REPO_ROOT, "node_modules", "ponder", "dist", "esm", "bin", "ponder.js");
const SQL_PROBE = path.join(REPO_ROOT, "test", "support", "ponderSqlProbe.mjs");

export type PonderDatabase =
  | { kind: "pglite"; dir: string; schema?: string }
  | { kind: "postgres"; url: string; schema: string };

export interface StartPonderOptions {
  rpcUrl: string;
  /** A devnet manifest written to disk (see writeManifest); passed as MANIFEST_FILE with NETWORK=local. */
  manifestFile: string;
  database: PonderDatabase;
  port?: number;
  /** Added to (and overriding) the child's environment, e.g. an env flag the API reads. */
  extraEnv?: Record<string, string | undefined>;
  /** Ponder project root (default: the repository); benchmarks point it at a variant with other handlers. */
  root?: string;
  logLevel?: "error" | "warn" | "info" | "debug";
  /** Extra node flags for the child (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
}

export interface PonderProcess {
  url: string;
  pid: number;
  port: number;
  /** The database schema Ponder writes (`--schema`). */
  schema: string;
  /** Ends the process with `signal` (default SIGTERM: graceful, releases the schema lock); resolves with its exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL: no shutdown hooks run, like a crash or an OOM kill. */
  kill(): Promise<void>;
  /** Resolves once GET /ready answers 200 (historical indexing done; the last ~30 blocks may still be pending). */
  waitForReady(timeoutMs?: number): Promise<void>;
  /** Resolves once /status reports the indexed block ≥ `block`, i.e. every event up to it is in the tables. */
  waitForBlock(block: bigint | number, timeoutMs?: number): Promise<void>;
  /**
   * Reads the live tables while the indexer runs: Postgres through a pool of its own; PGlite (one process per
   * directory) through ponderSqlProbe.mjs, i.e. Ponder's own read-only client. Close it before stop().
   */
  openDb(): Promise<IndexDb>;
  /** The indexed block from /status, or null before the first checkpoint. */
  indexedBlock(): Promise<bigint | null>;
  /** The last lines Ponder printed (stdout and stderr), for failure messages. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A crashed test run must not leave an indexer polling a dead anvil.
  process.on("exit", () => {
    for (const child of live) child.kill("SIGKILL");
  });
}

/** Writes `manifest` to a temp file for MANIFEST_FILE; the caller removes it (or its directory) afterwards. */
export function writeManifest(manifest: Manifest, dir = mkdtempSync(path.join(os.tmpdir(), "manifest-"))): string {
  const file = path.join(dir, "local.json");
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  return file;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startPonder(opts: StartPonderOptions): Promise<PonderProcess> {
  const port = opts.port ?? (await freePort());
  const probePort = opts.database.kind === "pglite" ? await freePort() : undefined;
  const schema = opts.database.schema ?? "indexer";
  const env: Record<string, string | undefined> = {
    ...process.env,
    NETWORK: "local",
    MANIFEST_FILE: opts.manifestFile,
    RPC_URL: opts.rpcUrl,
    PONDER_TELEMETRY_DISABLED: "true",
    NO_COLOR: "1",
    PORT: undefined,
    DATABASE_SCHEMA: undefined,
    // Ponder picks Postgres whenever one of these is set, so a PGlite run must not inherit them.
    DATABASE_URL: opts.database.kind === "postgres" ? opts.database.url : undefined,
    DATABASE_PRIVATE_URL: undefined,
    PGLITE_DIR: opts.database.kind === "pglite" ? opts.database.dir : undefined,
    PONDER_TEST_SQL_PORT: probePort === undefined ? undefined : String(probePort),
    ...opts.extraEnv,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const args = [
    ...(opts.nodeArgs ?? []),
    ...(probePort === undefined ? [] : ["--import", pathToFileURL(SQL_PROBE).href]),
    PONDER_BIN,
    "start",
    "--schema",
    schema,
    "--port",
    String(port),
    "--hostname",
    "127.0.0.1",
    "--log-level",
    opts.logLevel ?? "warn",
  ];
  const root = opts.root ?? REPO_ROOT;
  if (root !== REPO_ROOT) args.push("--root", root);
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: env as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  installExitHook();
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-16_000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const isRunning = () => child.exitCode === null && child.signalCode === null;

  const get = async (pathname: string): Promise<Response | null> => {
    try {
      return await fetch(`${url}${pathname}`, { signal: AbortSignal.timeout(2000) });
    } catch {
      return null;
    }
  };

  const waitFor = async (what: string, timeoutMs: number, done: () => Promise<boolean>) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!isRunning()) throw new Error(`ponder exited while waiting for ${what}:\n${output}`);
      if (await done()) return;
      await sleep(100);
    }
    throw new Error(`ponder: no ${what} within ${timeoutMs} ms:\n${output}`);
  };

  const indexedBlock = async (): Promise<bigint | null> => {
    const res = await get("/status");
    if (!res?.ok) return null;
    const status = (await res.json()) as Record<string, { block?: { number?: number } }>;
    const n = Object.values(status)[0]?.block?.number;
    return n === undefined ? null : BigInt(n);
  };

  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (isRunning()) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    }
    return exited;
  };

  return {
    url,
    port,
    schema,
    pid: child.pid ?? -1,
    exited,
    output: () => output,
    stop,
    kill: async () => {
      await stop("SIGKILL");
    },
    indexedBlock,
    openDb: () =>
      probePort === undefined
        ? openIndexDb(opts.database)
        : Promise.resolve(probeDb(`http://127.0.0.1:${probePort}`, schema)),
    waitForReady: (timeoutMs = 90_000) =>
      waitFor("200 from /ready", timeoutMs, async () => (await get("/ready"))?.status === 200),
    waitForBlock: (block, timeoutMs = 90_000) =>
      waitFor(`indexed block ${block}`, timeoutMs, async () => ((await indexedBlock()) ?? -1n) >= BigInt(block)),
  };
}

/** A database of its own for one test file: a fresh Postgres database when DATABASE_URL is set, else a PGlite dir. */
export interface TestDatabase {
  kind: "pglite" | "postgres";
  /** The `database` option of startPonder, with `schema`. */
  forPonder(schema?: string): PonderDatabase;
  /** Drops the database / removes the directory. */
  drop(): Promise<void>;
}

export async function createTestDatabase(baseUrl = process.env.DATABASE_URL): Promise<TestDatabase> {
  if (!baseUrl) {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ponder-pglite-"));
    return {
      kind: "pglite",
      forPonder: (schema = "indexer") => ({ kind: "pglite", dir, schema }),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  // A whole database per run: Ponder's ponder_sync cache is keyed by chain id, and every devnet is 31337 with the
  // same addresses, so a shared database would serve logs of an earlier chain.
  // TEST_DATABASE_PREFIX: a run's own prefix (a session sharing the server with others names its databases apart).
  const prefix = process.env.TEST_DATABASE_PREFIX ?? "ponder_test_";
  const name = `${prefix}${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    kind: "postgres",
    forPonder: (schema = "indexer") => ({ kind: "postgres", url: url.toString(), schema }),
    drop: async () => {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface IndexDb {
  /** A drizzle database with search_path = Ponder's schema: what createLockStore takes. */
  db: LockDb;
  /** Ponder's schema. Qualify table names with it (see `table`): on PGlite, Ponder's flushes leave TEMP tables
   *  named like the real ones in the shared session, and pg_temp shadows unqualified names. */
  schema: string;
  /** `"schema"."name"`, for SQL text. */
  table(name: string): string;
  /** Plain SQL (SELECT only through the PGlite probe). numeric columns come back as strings. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * Opens Ponder's tables from the test process. Postgres: any time, through a pool with search_path = the schema.
 * PGlite: the directory belongs to one process at a time, so only while the indexer is stopped.
 */
export async function openIndexDb(database: PonderDatabase): Promise<IndexDb> {
  const schema = database.schema ?? "indexer";
  if (database.kind === "postgres") {
    // One connection: a test's session state (SET, TEMP tables) is the store's, as in Ponder's PGlite.
    const pool = new pg.Pool({ connectionString: database.url, max: 1, options: `-c search_path="${schema}"` });
    return {
      ...qualified(schema),
      db: drizzlePg(pool, { casing: "snake_case" }),
      query: async (text, params) => (await pool.query(text, params)).rows,
      close: () => pool.end(),
    };
  }
  const client = new PGlite(database.dir);
  await client.exec(`SET search_path TO "${schema}"`);
  return {
    ...qualified(schema),
    db: drizzlePglite(client, { casing: "snake_case" }),
    query: async <T>(text: string, params?: unknown[]) => (await client.query<T>(text, params)).rows,
    close: () => client.close(),
  };
}

/** A drizzle database over ponderSqlProbe.mjs (drizzle's pg-proxy driver: the SQL drizzle builds, run remotely). */
function probeDb(probeUrl: string, schema: string): IndexDb {
  const call = async (sql: string, params: unknown[], method: string) => {
    const res = await fetch(probeUrl, {
      method: "POST",
      body: JSON.stringify({ sql, params, method }, (_k, v) => (typeof v === "bigint" ? v.toString() : v)),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json()) as { rows?: unknown[]; error?: string };
    if (!res.ok || !body.rows) throw new Error(`ponder SQL probe: ${body.error ?? res.status}`);
    return body.rows;
  };
  return {
    ...qualified(schema),
    db: drizzleProxy(async (sql, params, method) => ({ rows: await call(sql, params, method) }), {
      casing: "snake_case",
    }),
    query: async <T>(text: string, params: unknown[] = []) => (await call(text, params, "execute")) as T[],
    close: async () => {},
  };
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
const qualified = (schema: string) => ({
  schema,
  table: (name: string) => `${quoteIdent(schema)}.${quoteIdent(name)}`,
});
