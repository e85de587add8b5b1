/**
 * Cached-hit throughput of GET /api/supply/circulating on the API process operators run (api/server/main.ts,
 * `npm run serve:api`, its own process) against a bare Hono route returning a constant string on
 * @hono/node-server (bench/bareServer.ts, also its own process), driven by autocannon from a worker thread
 * of this process, same connections and pipelining, same run.
 * Each round measures the two compared routes back to back, alternating which goes first; the figure
 * is the median of the per-round ratios (a shared 2-core machine is noisy: read the rounds too).
 * Target ≥ 0.9 (issue 33, item 5).
 *
 * Two more targets of the same app put the figure in context: /api/supply/max (a constant: the hot
 * path without a cache lookup), so circulating/max near 1 means the cache lookup and formatting cost
 * next to nothing; and /api/supply/circulating?cb=1, a cached hit that a cache-buster parameter sends
 * through @hono/node-server, routing and the middleware chain (the hot path, which the API process asks
 * at the Node HTTP level before @hono/node-server, only answers the plain and ?format= forms).
 * The upstream calls are checked: every measured request must be a cache hit (the figures read at most once per
 * 300 s window; the background branch check at most once per SUPPLY_BRANCH_CHECK_MS).
 * Each serving process's CPU per request (/proc/<pid>/stat, all threads, around every run) is printed beside the
 * req/s: on a slow machine autocannon, on the same cores, sets the pace of req/s, not of the servers' CPU.
 *
 * FLAGS="--a --b": a second API process under these Node flags in place of serve:api's (the young generation's
 * trade, docs/operations.md), its cached circulating measured in the same rounds right after the compared pair:
 * its ratio to the bare route and to the serve:api process, with each process's RSS after the rounds.
 * Usage: [FLAGS="…"] npx tsx bench/supply-hit.ts [secondsPerRound=2]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { SUPPLY_BRANCH_CHECK_MS } from "../api/supply/branchWatch";
import { freePort } from "../devnet/anvil";
import { childEnv, startApiChild } from "../test/support/apiProcess";
import { cpuTicks, rssMb } from "./processMemory";
import { supplyBenchSetup } from "./supplyServer";

const SECONDS = Math.min(Math.max(Number(process.argv[2] ?? 2), 1), 5);
const ROUNDS = 9;
const CONNECTIONS = 50;
/** Between runs: the previous run's 50 connections close before the next run opens its own. */
const SETTLE_MS = 200;
/** Node's flags of the optional second API process (FLAGS). */
const ALT_FLAGS = process.env.FLAGS?.trim() ? process.env.FLAGS.trim().split(/\s+/) : null;

function run(url: string, duration: number): Promise<autocannon.Result> {
  return autocannon({ url, connections: CONNECTIONS, duration, pipelining: 1, workers: 1 });
}

/** One list of figures per name, a value per round. */
const series = <K extends string>(...names: K[]) =>
  Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function startBare(): Promise<{ url: string; pid: number; close(): void }> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "bareServer.ts")], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve) => child.stdout!.on("data", () => resolve()));
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, close: () => child.kill("SIGKILL") };
}

const setup = await supplyBenchSetup();
const dir = mkdtempSync(path.join(tmpdir(), "bench-hit-"));
const apiProcess = await startApiChild({ ...childEnv(setup, dir), LOG_LEVEL: "warn" });
const supply = { url: apiProcess.base, close: () => apiProcess.child.kill("SIGKILL") };
const altProcess = ALT_FLAGS ? await startApiChild({ ...childEnv(setup, dir), LOG_LEVEL: "warn" }, ALT_FLAGS) : null;
const bare = await startBare();
try {
  const targets = {
    bare: `${bare.url}/`,
    max: `${supply.url}/api/supply/max`,
    circulating: `${supply.url}/api/supply/circulating`,
    routed: `${supply.url}/api/supply/circulating?cb=1`,
    ...(altProcess ? { alt: `${altProcess.base}/api/supply/circulating` } : {}),
  };
  // Fill the cache (the only upstream read of the run), then warm every server up.
  const first = await fetch(targets.circulating);
  if (first.status !== 200) throw new Error(`warm-up read failed: ${first.status} ${await first.text()}`);
  console.log(`circulating = ${await first.text()} (upstream reads to fill the cache: ${setup.proxy.count()})`);
  for (const url of Object.values(targets)) await run(url, 1);
  setup.proxy.reset();
  const measuredFrom = performance.now();

  // Which process serves each target: its CPU per request is read around every run (a figure the load generator,
  // sharing the machine's two cores, does not set the pace of, as it does req/s on a slow machine).
  const pidOf: Partial<Record<keyof typeof targets, number>> = {
    bare: bare.pid,
    max: apiProcess.child.pid!,
    circulating: apiProcess.child.pid!,
    routed: apiProcess.child.pid!,
    ...(altProcess ? { alt: altProcess.child.pid! } : {}),
  };
  const cpuPerHit = series("bare", "circulating", "alt");
  const ratio = series("circulating", "max", "circVsMax", "routed", "alt", "altVsShipped");
  const rps = series("bare", "max", "circulating", "routed", "alt");
  for (let round = 1; round <= ROUNDS; round++) {
    const r: Record<string, number> = {};
    // The compared pair back to back, first one then the other first, so both see the same machine
    // state and neither always pays for the other's closing sockets and garbage; the others after them.
    const pair: (keyof typeof rps)[] = round % 2 ? ["bare", "circulating"] : ["circulating", "bare"];
    for (const name of [...pair, ...(altProcess ? ["alt" as const] : []), "max" as const, "routed" as const]) {
      const url = targets[name]!;
      await new Promise((done) => setTimeout(done, SETTLE_MS));
      const ticks = cpuTicks(pidOf[name]!);
      const res = await run(url, SECONDS);
      if (name in cpuPerHit) {
        cpuPerHit[name as keyof typeof cpuPerHit].push(
          ((cpuTicks(pidOf[name]!) - ticks) * 10_000) / res.requests.total,
        );
      }
      if (res.non2xx || res.errors || res.timeouts) {
        throw new Error(`${name}: ${res.non2xx} non-2xx, ${res.errors} errors, ${res.timeouts} timeouts`);
      }
      r[name] = res.requests.average;
      rps[name].push(res.requests.average);
    }
    ratio.circulating.push(r.circulating! / r.bare!);
    ratio.max.push(r.max! / r.bare!);
    ratio.circVsMax.push(r.circulating! / r.max!);
    ratio.routed.push(r.routed! / r.bare!);
    if (altProcess) {
      ratio.alt.push(r.alt! / r.bare!);
      ratio.altVsShipped.push(r.alt! / r.circulating!);
    }
    console.log(
      `round ${round}: bare ${Math.round(r.bare!)} req/s, max ${Math.round(r.max!)} req/s, ` +
        `routed ${Math.round(r.routed!)} req/s, circulating ${Math.round(r.circulating!)} req/s → ratio ${(r.circulating! / r.bare!).toFixed(2)}` +
        (altProcess ? `; FLAGS' circulating ${Math.round(r.alt!)} req/s → ${(r.alt! / r.bare!).toFixed(2)}` : ""),
    );
  }
  // The figures are read once per window (eth_blockNumber + the batch of eth_call); besides them, while hits come in,
  // the branch check asks for the block read at most once per SUPPLY_BRANCH_CHECK_MS (eth_getBlockByNumber, in the
  // background: no hit waits for it), and a window that ends mid-run reads the figures again once.
  const branchChecks = setup.proxy.count("eth_getBlockByNumber");
  const figureReads = setup.proxy.count("eth_call");
  const elapsedS = (performance.now() - measuredFrom) / 1000;
  const windows = Math.ceil(elapsedS / 300) + 1;
  if (branchChecks > Math.ceil((elapsedS * 1000) / SUPPLY_BRANCH_CHECK_MS) + 1 || figureReads > 2 * windows) {
    throw new Error(
      `cached hits reached the node: ${figureReads} eth_call, ${branchChecks} branch checks in ${elapsedS.toFixed(0)} s`,
    );
  }
  console.log(
    `medians: bare ${Math.round(median(rps.bare))}, max ${Math.round(median(rps.max))}, ` +
      `circulating ${Math.round(median(rps.circulating))}, circulating?cb=1 ${Math.round(median(rps.routed))} req/s; ` +
      `max/bare ${median(ratio.max).toFixed(2)}, circulating/max ${median(ratio.circVsMax).toFixed(2)} (the cache lookup), ` +
      `routed hit/bare ${median(ratio.routed).toFixed(2)} (a cache-buster takes the middleware chain); upstream while measuring: ${figureReads} eth_call, ${branchChecks} branch checks (one per ${SUPPLY_BRANCH_CHECK_MS / 1000} s at most)`,
  );
  console.log(
    `CPU per request (the serving process, all threads): bare ${median(cpuPerHit.bare).toFixed(1)} µs, ` +
      `serve:api ${median(cpuPerHit.circulating).toFixed(1)} µs (${(median(cpuPerHit.circulating) / median(cpuPerHit.bare)).toFixed(2)}×)` +
      (altProcess
        ? `, FLAGS ${median(cpuPerHit.alt).toFixed(1)} µs (${(median(cpuPerHit.alt) / median(cpuPerHit.bare)).toFixed(2)}×)`
        : ""),
  );
  console.log(
    `supply-hit: the API process (serve:api), cached /api/supply/circulating vs a bare Hono route process: ratio ${median(ratio.circulating).toFixed(2)} (target ≥ 0.90); RSS ${rssMb(apiProcess.child.pid!).toFixed(0)} MB`,
  );
  if (altProcess) {
    console.log(
      `FLAGS ${ALT_FLAGS!.join(" ")}: cached circulating vs the bare route ${median(ratio.alt).toFixed(2)} (rounds ${ratio.alt.map((x) => x.toFixed(2)).join(" ")}), vs serve:api's flags ${median(ratio.altVsShipped).toFixed(2)}; RSS ${rssMb(altProcess.child.pid!).toFixed(0)} MB`,
    );
  }
} finally {
  altProcess?.child.kill("SIGKILL");
  supply.close();
  bare.close();
  await setup.stop();
  rmSync(dir, { recursive: true, force: true });
}
