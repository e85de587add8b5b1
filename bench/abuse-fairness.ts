/**
 * Fairness under abuse: another client's cached /api/supply/circulating p99 while one client floods the API
 * (MCP batches, state, prepare, supply cache-busters; test/support/flood.ts at the lowest CPU priority), ÷ its
 * p99 on the idle API, same run. The API runs as its own process (test/support/apiChild.ts: @hono/node-server,
 * connection guard, default budgets) over a devnet behind the fault proxy.
 * Usage: npx tsx bench/abuse-fairness.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { childEnv, flood, sampleP99, startApiChild } from "../test/support/apiProcess";
import { supplyBenchSetup } from "./supplyServer";

const setup = await supplyBenchSetup();
const dir = mkdtempSync(path.join(tmpdir(), "bench-fair-"));
const { child, base } = await startApiChild(childEnv(setup, dir));
try {
  const url = `${base}/api/supply/circulating`;
  await fetch(url).then((r) => r.text());
  const idle = await sampleP99(url, 3_000);
  const attack = flood(base, 15_000);
  await new Promise((r) => setTimeout(r, 300));
  const loaded = await sampleP99(url, 1_000, attack);
  const { requests, byStatus } = await attack;
  console.log(`idle:    p50 ${idle.p50.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms (${idle.n} requests)`);
  console.log(`flooded: p50 ${loaded.p50.toFixed(2)} ms, p99 ${loaded.p99.toFixed(2)} ms (${loaded.n} requests)`);
  console.log(`flood:   ${requests} requests ${JSON.stringify(byStatus)}`);
  console.log(
    `fairness: cached supply p99 under flood ${loaded.p99.toFixed(1)} ms ÷ idle ${idle.p99.toFixed(1)} ms = ${(loaded.p99 / idle.p99).toFixed(2)}× (bound 50 ms)`,
  );
} finally {
  child.kill("SIGTERM");
  await setup.stop();
  rmSync(dir, { recursive: true, force: true });
}
