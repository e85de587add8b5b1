/**
 * What one cached GraphQL document retains: the parsed document, its validation result and graphql-jit's compiled
 * query (the code it generates, its closures, V8's bytecode once run), measured as the heap's growth over N distinct
 * documents each executed once, through the app in-process (createApp, app.request) with the document cache
 * (api/graphql/documentCache.ts) large enough to keep them all. Two shapes: a typical page document, and one at the
 * limits (30 aliases, ~1,000 tokens). The cache's per-document estimate (documentCost) is printed beside each.
 * Usage: npx tsx bench/graphql-document-bytes.ts [documents per shape=300]
 */
import { createApp } from "../api/app";
import { loadConfig } from "../api/config";
import { documentCost } from "../api/graphql/documentCache";
import { silentLogger } from "../api/observability/logger";
import type { LockIndex } from "../api/read/contract";
import { heapAfterCollection } from "../test/support/heap";

const N = Number(process.argv[2] ?? 300);
const ACCOUNT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const head = { block: 1000n, time: 1_800_000_000n, finalized: 990n };
const at = <T>(value: T) => ({ head, block: head.block, time: head.time, inRange: true, value });
const index = {
  probe: async () => ({ head, eventTime: null }),
  events: async () => at([]),
  locksOf: async () => at([]),
  lock: async () => at(null),
} as unknown as LockIndex;
const app = createApp({
  config: {
    ...loadConfig({ NETWORK: "base", GRAPHQL_DOCUMENT_CACHE_MB: "4096" }),
    rateLimit: { max: 1e9, windowSec: 60 },
  },
  rpc: null,
  index: { atBlock: index },
  logger: silentLogger,
});

const FIELDS =
  "kind tokenId account amountWei lockEnd autoMax fromTokenId recipient owner lockAmountWei listed blockNumber blockTimestamp txHash logIndex";
const typical = (i: number) =>
  `{ lockEvents(where: { account: "${ACCOUNT}" }, limit: ${1 + (i % 1000)}) { items { ${FIELDS} } pageInfo { endCursor } } }`;
/** 30 aliased pages of a few fields each: near the token (1,000) and alias (30) limits. */
const atLimits = (i: number) =>
  `{ ${Array.from(
    { length: 30 },
    (_, a) => `a${a}: lockEvents(where: { tokenId: "${i * 30 + a}" }, limit: 1) { items { kind tokenId owner } }`,
  ).join(" ")} }`;
/** The same without a space it could spare: the most compiled code per character. */
const dense = (i: number) =>
  `{${Array.from({ length: 30 }, (_, a) => `a${a}:lockEvents(where:{tokenId:"${i * 30 + a}"},limit:1){items{kind tokenId owner}}`).join(" ")}}`;

const post = async (text: string) => {
  const res = await app.request("/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: text }),
  });
  const body = await res.text();
  if (res.status !== 200 || body.includes('"errors"')) throw new Error(body.slice(0, 500));
};

const heap = heapAfterCollection;

for (let i = 0; i < 50; i++) await post(typical(1_000_000 + i)); // warm-up: the schema's and yoga's own first costs
for (const [name, make] of [
  ["typical page document", typical],
  ["document at the limits", atLimits],
  ["dense document at the limits", dense],
] as const) {
  const before = heap();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await post(make(i));
  const ms = (performance.now() - t0) / N;
  const per = (heap() - before) / N;
  const sample = make(7);
  console.log(
    `${name}: ${(per / 1024).toFixed(0)} kB retained per document (${N} distinct), ${ms.toFixed(2)} ms per new ` +
      `document; ${sample.length} characters; estimate documentCost = ${(documentCost(sample) / 1024).toFixed(0)} kB`,
  );
}
