import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export interface AnvilOptions {
  port?: number;
  chainId?: number;
  /** Seconds between blocks; default: automine (one block per transaction). */
  blockTime?: number;
  /** The genesis block's timestamp (unix seconds); later blocks follow the wall clock from it. Default: now. */
  genesisTimestamp?: number;
  /** With `blockTime`: a transaction is still mined at once, and a block comes every `blockTime` seconds besides. */
  mixedMining?: boolean;
  /** A fork of the node at this URL (tests: a second node that lags behind the first), at `forkBlockNumber`. */
  forkUrl?: string;
  forkBlockNumber?: bigint;
}
export interface AnvilHandle {
  rpcUrl: string;
  port: number;
  /** Where this anvil keeps the states it moves out of memory (removed when it exits; see launch). */
  statesDir: string;
  stop(): Promise<void>;
}

export const DEVNET_CHAIN_ID = 31337;

/** The platform binary itself: the npm `anvil` bin is a wrapper that would add a second process to kill. */
export function anvilBinary(): string {
  const pkg = createRequire(import.meta.url).resolve("@foundry-rs/anvil-linux-amd64/package.json");
  return path.join(path.dirname(pkg), "bin", "anvil");
}

/** A port the OS says is free right now (bind port 0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("could not allocate a free port"))));
    });
  });
}

// Every anvil this process started (with its states' folder), killed synchronously on exit so no orphan outlives a
// crashed test run, and its folder removed.
const live = new Map<ChildProcess, string>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const [child, statesDir] of live) {
      child.kill("SIGKILL");
      rmSync(statesDir, { recursive: true, force: true });
    }
  });
}

async function chainIdAnswers(rpcUrl: string): Promise<boolean> {
  try {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    const body = (await res.json()) as { result?: string };
    return typeof body.result === "string";
  } catch {
    return false;
  }
}

function launch(port: number, chainId: number, opts: AnvilOptions): Promise<AnvilHandle> {
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId)];
  if (opts.blockTime !== undefined) args.push("--block-time", String(opts.blockTime));
  if (opts.genesisTimestamp !== undefined) args.push("--timestamp", String(opts.genesisTimestamp));
  if (opts.mixedMining) args.push("--mixed-mining");
  if (opts.forkUrl !== undefined) args.push("--fork-url", opts.forkUrl);
  if (opts.forkBlockNumber !== undefined) args.push("--fork-block-number", String(opts.forkBlockNumber));
  // anvil keeps the last few hundred blocks' states in memory and moves older ones to disk (up to 3,600 of them, about
  // 1.3 MB each, so historical reads reach ~3,900 blocks back as on an archive node), by default under
  // ~/.foundry/anvil/tmp, which it never removes — not on SIGTERM, not on SIGINT: one run of 10,000 blocks left 4.6 GB
  // there, the local stack (a block every 2 s) its ~4.7 GB for good. A folder of our own, removed once it exits.
  const statesDir = mkdtempSync(path.join(os.tmpdir(), "anvil-states-"));
  args.push("--cache-path", statesDir);
  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  live.set(child, statesDir);
  installExitHook();

  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  // Our own child saying it holds the port: an eth_chainId answer alone could come from another
  // anvil that won a race for the same port (this child then exits, but maybe after the answer).
  let listening = false;
  let stdout = "";
  const banner = `Listening on 127.0.0.1:${port}`;
  child.stdout?.on("data", (chunk: Buffer) => {
    if (listening) return; // keep draining: anvil logs every transaction to stdout
    stdout = (stdout + chunk.toString()).slice(-4000);
    listening = stdout.includes(banner);
  });
  // Settles once anvil has exited and its states' folder is gone.
  const exited = new Promise<number | null>((resolve) => {
    const removed = (code: number | null) =>
      void rm(statesDir, { recursive: true, force: true }).then(
        () => resolve(code),
        () => resolve(code),
      );
    child.once("exit", (code) => {
      live.delete(child);
      removed(code);
    });
    // A spawn that failed (no binary) never exits: its folder is removed here.
    child.once("error", () => {
      live.delete(child);
      removed(null);
    });
  });

  const rpcUrl = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  };

  return new Promise((resolve, reject) => {
    let done = false;
    child.once("error", (error) => {
      done = true;
      reject(error);
    });
    void exited.then((code) => {
      if (done) return;
      done = true;
      reject(new Error(`anvil exited (code ${code}) before answering on ${rpcUrl}: ${stderr.trim()}`));
    });
    const deadline = Date.now() + 15_000;
    const poll = async (): Promise<void> => {
      while (!done) {
        if (listening && (await chainIdAnswers(rpcUrl))) {
          done = true;
          resolve({ rpcUrl, port, statesDir, stop });
          return;
        }
        if (Date.now() > deadline) {
          done = true;
          await stop();
          reject(new Error(`anvil did not answer eth_chainId on ${rpcUrl} within 15 s: ${stderr.trim()}`));
          return;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    void poll();
  });
}

/**
 * Spawns anvil on 127.0.0.1 (a free port unless one is given; chain id 31337 by default) and resolves once
 * eth_chainId answers. With a picked port, a lost race for the port is retried on a new one.
 */
export async function startAnvil(opts: AnvilOptions = {}): Promise<AnvilHandle> {
  const chainId = opts.chainId ?? DEVNET_CHAIN_ID;
  if (opts.port !== undefined) return launch(opts.port, chainId, opts);
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await launch(await freePort(), chainId, opts);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}
