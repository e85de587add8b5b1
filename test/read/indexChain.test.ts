/**
 * An index of another chain than the API's (api/read/indexChain.ts). Every statement reads Ponder's checkpoint row,
 * whose chain_id names the chain the index was built for; before this check an API with NETWORK=base over a devnet's
 * index answered every index route 200, `chainId: 8453`, with the devnet's locks (only `/ready` said so). Now:
 *
 * - in the production topology (anvil 31337, `ponder start` on Postgres with a views schema, dist/server/main.js): an
 *   API configured for Base (its node says 8453: a proxy in front of the devnet answers eth_chainId) refuses every
 *   index answer — REST, GraphQL, a stream — 503 INDEX_UNAVAILABLE "another chain" naming both chains, `/ready` 503,
 *   a warning, `api_index_other_chain 1`; the supply routes (the node's) still answer; the devnet's own API serves
 *   the same index 200;
 * - over a synthetic index (PGlite): the verdict follows the index — once its checkpoint names this chain (the views
 *   switched to the right index), `/ready` and the answers are 200 again and the gauge 0, with no restart.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createMetrics } from "../../api/observability/metrics";
import { createLockIndex } from "../../api/read/atBlock";
import { type LiveTopology, startLiveTopology } from "../support/liveTopology";
import type { ServiceChild } from "../support/replica";
import { type RpcProxy, startRpcProxy } from "../support/rpcProxy";
import { generateSyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";

const BASE = "/api/index/v1";
const BASE_CHAIN = 8453;
const DEVNET_CHAIN = 31337;

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by the test.
type Json = Record<string, any>;
async function get(url: string, init?: RequestInit): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Json };
}
const graphql = (url: string) =>
  get(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: "{ _meta { block } }" }),
  });

describe("an API configured for Base over a devnet's index (ponder start, the API process)", () => {
  let topology: LiveTopology;
  let proxy: RpcProxy;
  let manifestDir: string;
  let devnetApi: ServiceChild;
  let baseApi: ServiceChild;

  beforeAll(async () => {
    topology = await startLiveTopology({
      apis: 1,
      env: { REDIS_URL: "", LOG_LEVEL: "warn", INDEXER_POLLING_MS: "200", RATE_LIMIT_MAX: "1000000" },
    });
    devnetApi = topology.apis[0]!;
    // Base's deployment as the API reads it: the devnet's addresses under chain 8453, and a node that says 8453 (the
    // API refuses to start on a node of another chain than its manifest's: api/chain/chainId.ts).
    const manifest = JSON.parse(readFileSync(topology.chain.manifestFile, "utf8"));
    manifestDir = mkdtempSync(path.join(os.tmpdir(), "manifest-base-"));
    const manifestFile = path.join(manifestDir, "base.json");
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, chain: "base", chainId: BASE_CHAIN }));
    proxy = await startRpcProxy({ upstream: topology.chain.devnet.rpcUrl });
    proxy.setFault({ kind: "result", value: `0x${BASE_CHAIN.toString(16)}`, match: (m) => m === "eth_chainId" });
    baseApi = await topology.spawnApi({ NETWORK: "base", MANIFEST_FILE: manifestFile, RPC_URL: proxy.url });
    await baseApi.waitFor200("/health", 60_000);
  }, 300_000);

  afterAll(async () => {
    await topology?.stop();
    await proxy?.stop();
    if (manifestDir) rmSync(manifestDir, { recursive: true, force: true });
  });

  it("refuses every index answer 503 INDEX_UNAVAILABLE 'another chain', /ready 503; the devnet's API serves it", async () => {
    // The devnet's own API over the same index: 200, the devnet's chain.
    const right = await get(`${devnetApi.url}${BASE}/stats`);
    expect([right.status, right.body.chainId]).toEqual([200, DEVNET_CHAIN]);
    expect((await fetch(`${devnetApi.url}/ready`)).status).toBe(200);

    const stats = await get(`${baseApi.url}${BASE}/stats`);
    expect(stats.status).toBe(503);
    expect(stats.body).toEqual({
      ok: false,
      error: "INDEX_UNAVAILABLE",
      message: `The lock index is of chain ${DEVNET_CHAIN}; this API serves chain ${BASE_CHAIN}.`,
      detail: { reason: "another chain", indexChainId: DEVNET_CHAIN, chainId: BASE_CHAIN },
    });
    // Every index answer: the head, a past block, a lock, the activity feed, a board, a new stream, GraphQL.
    for (const p of [`${BASE}/stats?block=5`, `${BASE}/locks/1`, `${BASE}/activity`, `${BASE}/leaderboards/ve`]) {
      const res = await get(`${baseApi.url}${p}`);
      expect([p, res.status, res.body.detail?.reason]).toEqual([p, 503, "another chain"]);
    }
    const stream = await get(`${baseApi.url}${BASE}/stream?stats`);
    expect([stream.status, stream.body.detail?.reason]).toEqual([503, "another chain"]);
    const meta = await graphql(baseApi.url);
    expect(meta.body.data ?? null).toBeNull();
    expect(meta.body.errors?.[0]?.extensions).toMatchObject({
      code: "INDEX_UNAVAILABLE",
      reason: "another chain",
      indexChainId: DEVNET_CHAIN,
      chainId: BASE_CHAIN,
    });

    // Readiness takes the replica out; the operator has a warning and a gauge; the node's routes still answer.
    const ready = await get(`${baseApi.url}/ready`);
    expect([ready.status, ready.body.reason]).toEqual([503, "index of another chain"]);
    expect(baseApi.log()).toContain("the index is of another chain: index answers refused");
    const metrics = await (await fetch(`${baseApi.url}/api/metrics`)).text();
    expect(metrics).toMatch(/^api_index_other_chain 1$/m);
    expect((await fetch(`${baseApi.url}/api/supply/total`)).status).toBe(200);
    // The devnet's API is untouched by its neighbour's configuration.
    expect((await get(`${devnetApi.url}${BASE}/locks/1`)).status).toBe(200);
    const devnetMetrics = await (await fetch(`${devnetApi.url}/api/metrics`)).text();
    expect(devnetMetrics).toMatch(/^api_index_other_chain 0$/m);
  }, 120_000);
});

describe("the verdict follows the index (a synthetic index on PGlite)", () => {
  const SCHEMA = "synthetic";
  let client: PGlite;
  let app: ReturnType<typeof createApp>;
  const metrics = createMetrics();
  const gauge = async () => (await metrics.render()).match(/^api_index_other_chain (\d)$/m)?.[1];

  beforeAll(async () => {
    const index = generateSyntheticIndex({ events: 200, owners: 10, seed: 5, startBlock: 46_183_959n });
    client = new PGlite();
    await writeSyntheticIndex((text, params) => client.query(text, params), SCHEMA, index, {
      chainId: DEVNET_CHAIN,
    });
    app = createApp({
      config: loadConfig({ NETWORK: "base" }),
      rpc: null,
      index: { atBlock: createLockIndex({ db: drizzle(client), schema: SCHEMA, chainId: BASE_CHAIN }) },
      logger: silentLogger,
      metrics,
    });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
  });

  it("is refused while its checkpoint names another chain, and served once it names this one", async () => {
    const refused = await app.request(`${BASE}/stats`);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as Json).detail).toEqual({
      reason: "another chain",
      indexChainId: DEVNET_CHAIN,
      chainId: BASE_CHAIN,
    });
    const ready = await app.request("/ready");
    expect([ready.status, ((await ready.json()) as Json).reason]).toEqual([503, "index of another chain"]);
    expect(await gauge()).toBe("1");

    // The views now show Base's index: /ready's own read finds it (no other traffic), then the answers are served.
    await client.query(`UPDATE "${SCHEMA}"."_ponder_checkpoint" SET chain_id = ${BASE_CHAIN}`);
    expect((await app.request("/ready")).status).toBe(200);
    expect(await gauge()).toBe("0");
    const served = await app.request(`${BASE}/stats`);
    expect([served.status, ((await served.json()) as Json).chainId]).toEqual([200, BASE_CHAIN]);

    // And back: the next statement refuses it again.
    await client.query(`UPDATE "${SCHEMA}"."_ponder_checkpoint" SET chain_id = ${DEVNET_CHAIN}`);
    expect((await app.request(`${BASE}/stats`)).status).toBe(503);
    expect(await gauge()).toBe("1");
  }, 60_000);
});
