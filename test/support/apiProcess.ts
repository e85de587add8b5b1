/** Starts test/support/apiChild.ts (the API on @hono/node-server in its own process) over a devnet. */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "../../devnet/anvil";
import { API_PROCESS_ARGS, API_PROCESS_ENV } from "./build";

/**
 * Starts the API process as operators run it (the built dist/server/main.js, `npm run serve:api`) on 127.0.0.1 and a
 * free port; with CONNECTION_GUARD=off, the same server without its guard (test/support/apiChild.ts).
 */
export async function startApiChild(
  env: Record<string, string>,
  /** Node's flags in place of serve:api's (bench/supply-hit.ts compares V8 flags in one run). */
  nodeFlags?: readonly string[],
): Promise<{ child: ChildProcess; base: string; output(): string }> {
  const port = await freePort();
  const args =
    env.CONNECTION_GUARD === "off"
      ? ["--import", "tsx", path.join(import.meta.dirname, "apiChild.ts")]
      : nodeFlags
        ? [...nodeFlags, API_PROCESS_ARGS.at(-1)!]
        : API_PROCESS_ARGS;
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...API_PROCESS_ENV, ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  // Everything it prints on stdout (its log lines) is kept for output().
  let out = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      if (out.includes('"listening"')) resolve();
    });
    child.once("exit", (code) => reject(new Error(`api process exited ${code}`)));
  });
  return { child, base: `http://127.0.0.1:${port}`, output: () => out };
}

/** The child's environment: the devnet's manifest (written to `folder`) and RPC (`rpcUrl`, e.g. a fault proxy). */
export function childEnv(
  devnet: { deployment: { manifest: unknown }; proxy: { url: string } },
  folder: string,
): Record<string, string> {
  const manifest = path.join(folder, "local.json");
  writeFileSync(manifest, JSON.stringify(devnet.deployment.manifest));
  return { NETWORK: "local", MANIFEST_FILE: manifest, RPC_URL: devnet.proxy.url, LOG_LEVEL: "error", REDIS_URL: "" };
}

/** Latency of sequential GETs of `url`: for `durationMs`, or while `during` is pending (at least 1 s). */
export async function sampleP99(
  url: string,
  durationMs: number,
  during?: Promise<unknown>,
): Promise<{ p50: number; p99: number; n: number }> {
  const samples: number[] = [];
  let pending = during !== undefined;
  during?.finally(() => {
    pending = false;
  });
  const until = performance.now() + durationMs;
  while (performance.now() < until || pending) {
    const t0 = performance.now();
    const res = await fetch(url);
    await res.text();
    if (res.status !== 200) throw new Error(`supply answered ${res.status}`);
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50: at(0.5), p99: at(0.99), n: samples.length };
}

/** Runs test/support/flood.ts with `requests` requests (within `durationMs`); resolves with what it sent and how it was answered. */
export function flood(
  base: string,
  requests: number,
  durationMs = 30_000,
): Promise<{ requests: number; byStatus: Record<string, number> }> {
  return runFloodScript(path.join(import.meta.dirname, "flood.ts"), {
    BASE: base,
    REQUESTS: String(requests),
    DURATION_MS: String(durationMs),
  });
}

/**
 * Runs a flood generator (a script that prints one JSON line, e.g. bench/distributedFlood.ts) as a process of
 * its own; resolves with that line parsed. At the lowest CPU priority unless `nice` says otherwise: on a real
 * deployment the attacker's CPU is not the server's, and on this 2-core machine the flood generator must not
 * take the API's core away from it.
 */
export function runFloodScript<T = { requests: number; byStatus: Record<string, number> }>(
  script: string,
  env: Record<string, string>,
  nice = 19,
): Promise<T> {
  const child = spawn("nice", ["-n", String(nice), process.execPath, "--import", "tsx", script], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (c) => {
    out += c;
  });
  return new Promise((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`flood exited ${code}`)))),
  );
}
