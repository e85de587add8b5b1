/**
 * The two figures an aggregator polls, from the API process as operators run it (`npm run serve:api`,
 * dist/server/main.js, no index) over a seeded devnet: whatever /total and /circulating answer within a window
 * name ONE block, even when the supply changes on the chain between the two requests — in one process (its own
 * cache) and across two processes sharing Redis. Read and cached apart, circulating was read at the later block
 * and exceeded the total just served (api/supply/figures.ts).
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { formatWei2 } from "../../api/supply/wei";
import { DEVNET_ABIS, sendTx } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { chainSupplyAt } from "../support/chainTruth";
import { writeManifest } from "../support/ponder";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";
import { type ServiceChild, spawnService } from "../support/replica";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const PREFIX = `servedpair:${process.pid}:${randomUUID().slice(0, 8)}:`;

let d: ReadsDevnet;
let manifestFile: string;
const apis: ServiceChild[] = [];

/** An API process over the devnet's fault proxy, without an index; `redisUrl` "" caches in-process. */
async function api(redisUrl: string): Promise<ServiceChild> {
  const p = await spawnService({
    command: "api",
    rpcUrl: d.proxy.url,
    manifestFile,
    schema: "asset_v1",
    env: { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: PREFIX, LOG_LEVEL: "warn" },
  });
  apis.push(p);
  await p.waitFor200("/health", 30_000);
  return p;
}

async function figure(p: ServiceChild, path: string): Promise<string> {
  const res = await fetch(`${p.url}${path}`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  expect([path, res.status]).toEqual([path, 200]);
  return path.endsWith("format=bare") ? text : JSON.parse(text).result;
}

/** Mints more than is locked: circulating read after it exceeds the total read before it. */
async function mintPastLocked(): Promise<void> {
  const { locked } = await chainSupplyAt(d);
  const { deployer } = DEVNET_ACCOUNTS;
  await sendTx(d.chain, deployer.privateKey, {
    address: d.deployment.addresses.AssetToken,
    abi: DEVNET_ABIS.AssetToken,
    functionName: "mint",
    args: [deployer.address, locked + 10n ** 21n],
  });
}

const cents = (figure: string) => BigInt(figure.replace(".", ""));

beforeAll(async () => {
  d = await startReadsDevnet();
  manifestFile = writeManifest(d.deployment.manifest);
});
afterEach(async () => {
  await Promise.all(apis.splice(0).map((p) => p.stop("SIGKILL")));
});
afterAll(async () => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await d?.stop();
});

describe("total and circulating name one block", () => {
  it("one process: a mint between the two requests does not reach circulating before the window ends", async () => {
    const a = await api("");
    const before = await chainSupplyAt(d);
    const total = await figure(a, "/api/supply/total");
    expect(total).toBe(formatWei2(before.total));
    await mintPastLocked();
    expect((await chainSupplyAt(d)).circulating).toBeGreaterThan(before.total);
    for (const path of ["/api/supply/circulating", "/api/supply/circulating?format=bare"]) {
      const circulating = await figure(a, path);
      expect([path, circulating]).toEqual([path, formatWei2(before.circulating)]);
      expect(cents(circulating)).toBeLessThanOrEqual(cents(total));
    }
    expect(await figure(a, "/api/supply/total?format=bare")).toBe(total);
  });

  it("two processes sharing Redis: the total from one and circulating from the other are one read at one block", async () => {
    const [b, c] = [await api(REDIS_URL), await api(REDIS_URL)];
    const before = await chainSupplyAt(d);
    d.proxy.reset();
    const total = await figure(b, "/api/supply/total?format=bare");
    expect(total).toBe(formatWei2(before.total));
    await mintPastLocked();
    const circulating = await figure(c, "/api/supply/circulating?format=bare");
    expect(circulating).toBe(formatWei2(before.circulating));
    expect(cents(circulating)).toBeLessThanOrEqual(cents(total));
    expect(await figure(c, "/api/supply/total")).toBe(total);
    expect(await figure(b, "/api/supply/circulating")).toBe(circulating);
    // One read served both figures on both processes.
    expect([d.proxy.count("eth_blockNumber"), d.proxy.count("eth_call")]).toEqual([1, 2]);
  });
});
