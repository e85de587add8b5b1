/**
 * Outage economy: the node answers HTTP 500 to everything; 50 connections poll /api/supply/total and
 * /api/supply/circulating for 10 s against the API in its own process (test/support/apiChild.ts). Upstream
 * calls are counted at the fault proxy. Target: ≤ 10 per value (the 2 s failure backoff: ~5 reads each),
 * against one per request without a backoff. Every answer must be a 502.
 * Usage: npx tsx bench/abuse-outage.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { childEnv, startApiChild } from "../test/support/apiProcess";
import { supplyBenchSetup } from "./supplyServer";

const setup = await supplyBenchSetup();
const dir = mkdtempSync(path.join(tmpdir(), "bench-outage-"));
const { child, base } = await startApiChild(childEnv(setup, dir));
try {
  setup.proxy.setFault({ kind: "http", status: 500 });
  setup.proxy.reset();
  const result = await autocannon({
    url: base,
    connections: 50,
    duration: 10,
    requests: [{ path: "/api/supply/total" }, { path: "/api/supply/circulating" }],
  });
  const upstream = setup.proxy.count();
  const non502 = result.requests.total - (result.statusCodeStats?.["502"]?.count ?? 0);
  console.log(`requests: ${result.requests.total}, non-502 answers: ${non502}`);
  console.log(`upstream JSON-RPC calls at the proxy: ${upstream} (${setup.proxy.roundTrips()} round trips)`);
  if (non502 !== 0) throw new Error("an outage answer was not a 502");
  console.log(
    `outage: ${upstream} upstream calls for 2 values in 10 s at 50 connections (target ≤ 20; ${result.requests.total} requests answered 502)`,
  );
} finally {
  child.kill("SIGTERM");
  await setup.stop();
  rmSync(dir, { recursive: true, force: true });
}
