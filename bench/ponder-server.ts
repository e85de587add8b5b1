/**
 * What Ponder's own HTTP server costs, measured now: the figure issue 14 asked to report beside supply-hit.
 * Our app is no longer mounted on Ponder's server, so the comparable route is Ponder's own `/health` on the
 * indexer (`ponder start`, PGlite, over a devnet) — the route the issue measured at 0.21 of a bare Hono route
 * on `ponder serve`. Beside it, the API process's own `/health` (`npm run serve:api`): the same kind of
 * constant answer through our server and middleware. Baseline: a bare Hono route on @hono/node-server in its
 * own process (bench/bareServer.ts). autocannon from a worker thread, 50 connections, 7 rounds × 2 s, the
 * three targets in a rotating order each round; the figure is the median of the per-round ratios.
 * Usage: npx tsx bench/ponder-server.ts [secondsPerRound=2]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { freePort } from "../devnet/anvil";
import { childEnv, startApiChild } from "../test/support/apiProcess";
import { startPonder, writeManifest } from "../test/support/ponder";
import { supplyBenchSetup } from "./supplyServer";

const SECONDS = Math.min(Math.max(Number(process.argv[2] ?? 2), 1), 5);
const ROUNDS = 7;
const run = (url: string, duration: number) =>
  autocannon({ url, connections: 50, duration, pipelining: 1, workers: 1 });
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const setup = await supplyBenchSetup();
const dir = mkdtempSync(path.join(tmpdir(), "bench-ponder-server-"));
const ponder = await startPonder({
  rpcUrl: setup.anvil.rpcUrl,
  manifestFile: writeManifest(setup.deployment.manifest, dir),
  database: { kind: "pglite", dir: path.join(dir, "pglite") },
});
await ponder.waitForReady(120_000);
const api = await startApiChild({ ...childEnv(setup, dir), LOG_LEVEL: "warn" });
const barePort = await freePort();
const bare = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "bareServer.ts")], {
  env: { ...process.env, PORT: String(barePort) },
  stdio: ["ignore", "pipe", "inherit"],
});
await new Promise<void>((resolve) => bare.stdout!.on("data", () => resolve()));
try {
  const targets = {
    bare: `http://127.0.0.1:${barePort}/`,
    ponder: `${ponder.url}/health`,
    api: `${api.base}/health`,
  };
  for (const [name, url] of Object.entries(targets)) {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`${name} ${url} → ${res.status}`);
    await res.text();
    await run(url, 1);
  }
  const names = Object.keys(targets) as (keyof typeof targets)[];
  const ratios = { ponder: [] as number[], api: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const r = {} as Record<keyof typeof targets, number>;
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length]!;
      await new Promise((done) => setTimeout(done, 200));
      const res = await run(targets[name], SECONDS);
      if (res.non2xx || res.errors || res.timeouts) throw new Error(`${name}: failures under load`);
      r[name] = res.requests.average;
    }
    ratios.ponder.push(r.ponder / r.bare);
    ratios.api.push(r.api / r.bare);
    console.log(
      `round ${round + 1}: bare ${Math.round(r.bare)}, ponder /health ${Math.round(r.ponder)}, api /health ${Math.round(r.api)} req/s`,
    );
  }
  console.log(
    `ponder-server: Ponder's own server (ponder start, its /health) vs a bare Hono route: ${median(ratios.ponder).toFixed(2)}; ` +
      `the API process's /health: ${median(ratios.api).toFixed(2)}`,
  );
} finally {
  bare.kill("SIGKILL");
  api.child.kill("SIGKILL");
  await ponder.stop();
  await setup.stop();
  rmSync(dir, { recursive: true, force: true });
}
