/**
 * The processes of the production topology for tests and the soak: `ponder start` indexers, API processes
 * (the built dist/server/main.js, `npm run serve:api`) and `ponder serve` replicas, each with EVERY line it prints kept
 * (the secrets test reads all of it; test/support/ponder.ts keeps only the tail). Same conventions as
 * startPonder: NETWORK=local + MANIFEST_FILE, a free port on 127.0.0.1.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { freePort } from "../../devnet/anvil";
import { API_PROCESS_ARGS, API_PROCESS_ENV } from "./build";
import { REPO_ROOT } from "./ponder";

const PONDER_BIN = path.join(REPO_ROOT, "node_modules", "ponder", "dist", "esm", "bin", "ponder.js");

/** `start` / `serve`: Ponder's commands; `api`: the API process, reading `viewsSchema` (else `schema`). */
export type ServiceCommand = "start" | "serve" | "api";

export interface SpawnServiceOptions {
  command: ServiceCommand;
  rpcUrl: string;
  manifestFile: string;
  /** Postgres URL of the test database (`ponder serve` refuses PGlite); omit with `pgliteDir`. */
  databaseUrl?: string;
  pgliteDir?: string;
  schema: string;
  viewsSchema?: string;
  port?: number;
  /** Added to (and overriding) the child's environment: REDIS_URL, REDIS_KEY_PREFIX, SHUTDOWN_DRAIN_MS, … */
  env?: Record<string, string | undefined>;
  logLevel?: "error" | "warn" | "info" | "debug";
  /**
   * Another installation (test/production/container.test.ts: the image's file system): run `argv` (program
   * first, e.g. the Dockerfile's CMD) in `cwd`, as `uid`/`gid` when given. Default: this checkout's processes.
   */
  install?: { cwd: string; argv: string[]; uid?: number; gid?: number };
}

export interface ServiceChild {
  command: ServiceCommand;
  url: string;
  port: number;
  pid: number;
  /** Everything printed on stdout and stderr so far. */
  log(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
  running(): boolean;
  /** Sends `signal` and resolves with the exit (SIGKILL after `forceAfterMs`). */
  stop(signal?: NodeJS.Signals, forceAfterMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once `pathname` answers 200 (e.g. /health, /ready); rejects if the process exits first. */
  waitFor200(pathname: string, timeoutMs?: number): Promise<void>;
}

const live = new Set<ChildProcess>();
let hooked = false;

export async function spawnService(opts: SpawnServiceOptions): Promise<ServiceChild> {
  const port = opts.port ?? (await freePort());
  const env: Record<string, string | undefined> = {
    ...process.env,
    NETWORK: "local",
    MANIFEST_FILE: opts.manifestFile,
    RPC_URL: opts.rpcUrl,
    PONDER_TELEMETRY_DISABLED: "true",
    NO_COLOR: "1",
    PORT: undefined,
    DATABASE_SCHEMA: opts.schema,
    DATABASE_VIEWS_SCHEMA: opts.viewsSchema,
    DATABASE_URL: opts.databaseUrl,
    DATABASE_PRIVATE_URL: undefined,
    PGLITE_DIR: opts.pgliteDir,
    // The API process's environment as `npm run serve:api` sets it (its allocator), under the caller's.
    ...(opts.command === "api" ? API_PROCESS_ENV : {}),
    ...opts.env,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const args =
    opts.command === "api"
      ? API_PROCESS_ARGS
      : [
          PONDER_BIN,
          opts.command,
          "--port",
          String(port),
          "--hostname",
          "127.0.0.1",
          "--log-level",
          opts.logLevel ?? "warn",
        ];
  if (opts.command === "api") Object.assign(env, { PORT: String(port), HOST: "127.0.0.1" });
  const i = opts.install;
  const child = i
    ? spawn(i.argv[0]!, i.argv.slice(1), {
        cwd: i.cwd,
        env: env as NodeJS.ProcessEnv,
        stdio: "pipe",
        uid: i.uid,
        gid: i.gid,
      })
    : spawn(process.execPath, args, { cwd: REPO_ROOT, env: env as NodeJS.ProcessEnv, stdio: "pipe" });
  live.add(child);
  if (!hooked) {
    hooked = true;
    process.on("exit", () => {
      for (const c of live) c.kill("SIGKILL");
    });
  }
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>((resolve) =>
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve({ code, signal, atMs: performance.now() });
    }),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  const url = `http://127.0.0.1:${port}`;
  return {
    command: opts.command,
    url,
    port,
    pid: child.pid ?? -1,
    log: () => out,
    exited,
    running,
    async stop(signal = "SIGTERM", forceAfterMs = 20_000) {
      if (running()) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill("SIGKILL"), forceAfterMs);
        await exited;
        clearTimeout(timer);
      }
      const { code, signal: s } = await exited;
      return { code, signal: s };
    },
    async waitFor200(pathname, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (!running()) throw new Error(`${opts.command} process exited while waiting for ${pathname}:\n${out}`);
        const res = await fetch(`${url}${pathname}`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
        if (res?.status === 200) return;
        await res?.body?.cancel();
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${opts.command}: no 200 from ${pathname} within ${timeoutMs} ms:\n${out}`);
    },
  };
}
