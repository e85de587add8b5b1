/**
 * Upstream economy of the supply cache: 10,000 requests from 200 concurrent connections, all inside
 * one cache window and starting on a cold cache, mixed over /total, /circulating (JSON and bare) and
 * /max, served over HTTP by @hono/node-server and driven by autocannon in this process. Upstream reads
 * are counted at the JSON-RPC proxy in front of anvil. Expected: exactly one read for both figures (one
 * entry: api/supply/figures.ts) — one eth_blockNumber + one batch (totalSupply(), totalLockedClaim()); nothing
 * for max.
 * With REDIS_URL set, a second phase splits the same load over two app instances sharing Redis.
 * Usage: npx tsx bench/supply-economy.ts
 */
import { randomUUID } from "node:crypto";
import autocannon from "autocannon";
import { Redis } from "ioredis";
import type { TtlCache } from "../api/cache/ttlCache";
import { TOTAL_LOCKED_CLAIM_CALLDATA, TOTAL_SUPPLY_CALLDATA } from "../api/supply/reads";
import { createSupplyCache } from "../api/supply/supplyCache";
import { ethCallSelector } from "../test/support/rpcProxy";
import { type Served, serveApp, supplyBenchSetup } from "./supplyServer";

const REQUESTS = 10_000;
const CONNECTIONS = 200;
const PATHS = [
  "/api/supply/circulating",
  "/api/supply/total",
  "/api/supply/circulating?format=bare",
  "/api/supply/total?format=bare",
  "/api/supply/max",
];

const setup = await supplyBenchSetup();
const counts = () => ({
  blockNumber: setup.proxy.count("eth_blockNumber"),
  totalSupply: setup.proxy.calls.filter((c) => ethCallSelector(c.method, c.params) === TOTAL_SUPPLY_CALLDATA).length,
  totalLockedClaim: setup.proxy.calls.filter((c) => ethCallSelector(c.method, c.params) === TOTAL_LOCKED_CLAIM_CALLDATA)
    .length,
  roundTrips: setup.proxy.roundTrips(),
});

/** Fires REQUESTS over CONNECTIONS, the connections spread over `servers`; throws on any non-200. */
async function load(servers: Served[]) {
  const started = performance.now();
  const perServer = REQUESTS / servers.length;
  const results = await Promise.all(
    servers.map((s) =>
      autocannon({
        url: s.url,
        connections: CONNECTIONS / servers.length,
        amount: perServer,
        requests: PATHS.map((path) => ({ method: "GET", path })),
      }),
    ),
  );
  const sent = results.reduce((a, r) => a + r.requests.sent, 0);
  const non2xx = results.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0);
  if (non2xx) throw new Error(`${non2xx} requests failed`);
  return { sent, seconds: (performance.now() - started) / 1000 };
}

function check(label: string, sent: number, seconds: number) {
  const c = counts();
  const ok = c.blockNumber === 1 && c.totalSupply === 1 && c.totalLockedClaim === 1 && c.roundTrips === 2;
  console.log(
    `${label}: ${sent} requests over ${CONNECTIONS} connections in ${seconds.toFixed(1)} s → upstream: ` +
      `total and circulating ${c.blockNumber} eth_blockNumber + ${c.totalLockedClaim} batch ` +
      `(${c.totalSupply + c.totalLockedClaim} eth_call); max 0; ${c.roundTrips} HTTP round trips`,
  );
  if (!ok) throw new Error(`${label}: expected one read for both figures, proxy saw ${JSON.stringify(c)}`);
  return c;
}

const servers: Served[] = [];
const caches: TtlCache[] = [];
let redisPhase = "skipped (REDIS_URL not set)";
try {
  // Phase 1: one process, in-process cache, cold start under the full concurrency.
  const one = await serveApp(setup.app());
  servers.push(one);
  const p1 = await load([one]);
  const c1 = check("in-process cache", p1.sent, p1.seconds);

  // Phase 2: two replicas sharing one Redis (unique key prefix, removed afterwards).
  const redisUrl = process.env.REDIS_URL;
  if (redisUrl) {
    setup.proxy.reset();
    const prefix = `bench-supply-${randomUUID().slice(0, 8)}:`;
    const replicas: Served[] = [];
    for (let i = 0; i < 2; i++) {
      const cache = await createSupplyCache({ ...setup.config, redisUrl }, { keyPrefix: prefix });
      caches.push(cache);
      const s = await serveApp(setup.app({ supply: { cache } }));
      servers.push(s);
      replicas.push(s);
    }
    try {
      const p2 = await load(replicas);
      check("two replicas sharing Redis", p2.sent, p2.seconds);
      redisPhase = "1 read for both figures between both replicas";
    } finally {
      const admin = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length) await admin.del(...keys);
      admin.disconnect();
    }
  }
  console.log(`Redis phase: ${redisPhase}`);
  // Reads: one batch (pinned by one eth_blockNumber) answers both figures.
  const reads = Math.max(c1.blockNumber, c1.totalLockedClaim);
  console.log(
    `supply-economy: ${p1.sent} requests / ${CONNECTIONS} connections in one cache window → upstream reads for total and circulating: ${reads} (${c1.totalSupply + c1.totalLockedClaim} eth_call + ${c1.blockNumber} eth_blockNumber in all)`,
  );
} finally {
  for (const s of servers) await s.close();
  for (const c of caches) await c.close();
  await setup.stop();
}
