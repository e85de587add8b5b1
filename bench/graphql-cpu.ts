/**
 * CPU per request of the GraphQL pipeline vs the REST route for the same page, in one process: the app in-process
 * (createApp, app.request) over a read model that answers fixed rows at once, so the figure is the JavaScript each
 * pipeline spends (routing, parsing, execution, encoding), without the database or the sockets. The served process
 * with its database is bench/graphql-page.ts; this one says where its difference comes from.
 * 1. an account's 100-event page: GraphQL (one document, compiled once) vs REST, interleaved in rounds;
 * 2. every request a new document (a comment makes the text differ): parse, validate and compile each time.
 * Usage: npx tsx bench/graphql-cpu.ts [requests per round=2000]
 */
import { createApp } from "../api/app";
import { loadConfig } from "../api/config";
import { silentLogger } from "../api/observability/logger";
import type { LockEventState, LockIndex } from "../api/read/contract";

const N = Number(process.argv[2] ?? 2000);
const ROUNDS = 5;
const ACCOUNT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const head = { block: 1000n, time: 1_800_000_000n, finalized: 990n };
const rows: LockEventState[] = Array.from({ length: 101 }, (_, i) => ({
  kind: "topup",
  tokenId: BigInt(1000 + i),
  account: ACCOUNT.toLowerCase() as `0x${string}`,
  amount: 10n ** 21n + BigInt(i),
  lockEnd: 1_830_000_000n,
  autoMax: false,
  fromTokenId: null,
  recipient: null,
  owner: ACCOUNT.toLowerCase() as `0x${string}`,
  lockAmount: 10n ** 22n,
  listed: false,
  burned: false,
  blockNumber: 900n - BigInt(i),
  blockTime: 1_799_000_000n,
  txHash: `0x${"ab".repeat(32)}`,
  logIndex: i,
}));
const at = <T>(value: T) => ({ head, block: head.block, time: head.time, inRange: true, value });
const index = {
  probe: async () => ({ head, eventTime: null }),
  events: async (_of: unknown, _at: unknown, o: { limit: number }) => at(rows.slice(0, o.limit)),
} as unknown as LockIndex;
const app = createApp({
  config: { ...loadConfig({ NETWORK: "base" }), rateLimit: { max: 1e9, windowSec: 60 } },
  rpc: null,
  index: { atBlock: index },
  logger: silentLogger,
});

const FIELDS =
  "kind tokenId account amountWei lockEnd autoMax fromTokenId recipient owner lockAmountWei listed blockNumber blockTimestamp txHash logIndex";
const query = `{ lockEvents(where: { account: "${ACCOUNT}" }, limit: 100) { items { ${FIELDS} } } }`;
const post = async (text: string) => {
  const res = await app.request("/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: text }),
  });
  const body = await res.text();
  if (res.status !== 200 || body.includes('"errors"')) throw new Error(body);
};
const rest = async () => {
  const res = await app.request(`/api/index/v1/accounts/${ACCOUNT}/events?limit=100`);
  const body = await res.text();
  if (res.status !== 200) throw new Error(body);
};
let n = 0;
const calls = { graphql: () => post(query), rest, "graphql, new document": () => post(`${query} # ${n++}`) };

/** CPU milliseconds per call of `f` over `count` calls (user + system of this process). */
async function cpuPer(f: () => Promise<void>, count: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) await f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / count;
}

for (const f of Object.values(calls)) await cpuPer(f, 300); // warm-up
const per: Record<string, number[]> = { graphql: [], rest: [], "graphql, new document": [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, f] of Object.entries(calls))
    per[name]!.push(await cpuPer(f, name === "graphql, new document" ? N / 4 : N));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, xs] of Object.entries(per)) {
  console.log(`${name}: ${median(xs).toFixed(3)} ms CPU per 100-event page (median of ${ROUNDS} rounds)`);
}
console.log(
  `load average ${(await import("node:os"))
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
console.log(`\nfigure: GraphQL / REST CPU per page = ${(median(per.graphql!) / median(per.rest!)).toFixed(2)}×`);
