/**
 * What /graphql costs over the same rows read with bare SQL, in one run, on a synthetic index in Postgres laid
 * out by Ponder's own DDL generator (100,000 locks, 300,000 lock events, Ponder's checkpoint table): each query
 * through the app (app.request: transport, limits, yoga, Ponder's resolvers, one REPEATABLE READ snapshot on
 * GraphQL's own pool — api/server/indexDatabase.ts) against the same statement sent to a pool with pg. Queries:
 * an owner's 32 locks; a lock's events with _meta; a page of 100 locks deep in the table by cursor (keyset, so
 * as fast as the first). Prints p50/p99 per query and the ratio of medians; the last line is the worst ratio.
 * Usage: npx tsx bench/graphql-page.ts [requests per query = 400]   (Postgres: DATABASE_URL or 127.0.0.1:5432)
 */
import path from "node:path";
import pg from "pg";
import { createApp } from "../api/app";
import { loadConfig } from "../api/config";
import { createLogger } from "../api/observability/logger";
import { openIndexDatabase } from "../api/server/indexDatabase";
import * as schema from "../ponder.schema";
import { createTestDatabase, REPO_ROOT } from "../test/support/ponder";

const N = Math.min(Math.max(Number(process.argv[2] ?? 400), 50), 5_000);
const LOCKS = 100_000;
const SCHEMA = "gqbench";
const OWNER = `0x${"ab".repeat(20)}`;

const kit = (await import(path.join(REPO_ROOT, "node_modules/ponder/dist/esm/drizzle/kit/index.js"))) as {
  getSql(schema: object): { tables: { sql: string[] }; indexes: { sql: string[] } };
};
const ddl = kit.getSql({ lock: schema.lock, lockEvent: schema.lockEvent });

const q = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

const database = await createTestDatabase(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres");
const url = (database.forPonder(SCHEMA) as { url: string }).url;
const admin = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${SCHEMA}` });
const index = openIndexDatabase({ url, schema: SCHEMA });
try {
  await admin.query(`CREATE SCHEMA ${SCHEMA}`);
  for (const s of ddl.tables.sql.filter((s) => /CREATE TABLE "(lock|lock_event)"/.test(s))) await admin.query(s);
  for (const s of ddl.indexes.sql) await admin.query(s);
  await admin.query(`CREATE TABLE _ponder_checkpoint (chain_name text PRIMARY KEY, chain_id bigint NOT NULL,
    safe_checkpoint varchar(75) NOT NULL, latest_checkpoint varchar(75) NOT NULL)`);
  // Ponder's encodeCheckpoint: 10 digits of timestamp, 16 of chain id, 16 of block number, then the rest.
  const checkpoint = `1800000000${"8453".padStart(16, "0")}${"9000000".padStart(16, "0")}${"0".repeat(33)}`;
  await admin.query("INSERT INTO _ponder_checkpoint VALUES ('base', 8453, $1, $1)", [checkpoint]);
  const t0 = Date.now();
  await admin.query(`INSERT INTO lock (token_id, owner, amount, lock_end, auto_max, listed, burned, created_block,
      created_time, updated_block, updated_time)
    SELECT g,
      CASE WHEN g % 3125 = 0 THEN '${OWNER}' WHEN g % 5 = 0 THEN NULL ELSE '0x' || lpad(to_hex(g % 4099), 40, '0') END,
      (1000 + g % 977)::numeric * 1000000000000000000, 1800000000 + g, g % 7 = 0, false, g % 3125 <> 0 AND g % 5 = 0,
      g / 10, 1700000000 + g, g / 10, 1700000000 + g
    FROM generate_series(1, ${LOCKS}) AS g`);
  await admin.query(`INSERT INTO lock_event (id, kind, token_id, account, amount, lock_end, auto_max, owner,
      lock_amount, listed, burned, block_number, block_time, tx_hash, log_index)
    SELECT g || '-' || k, (ARRAY['create', 'increase', 'extend'])[k], g, '0x' || lpad(to_hex(g % 4099), 40, '0'),
      (1000 + g % 977)::numeric * 1000000000000000000, 1800000000 + g, false, '0x' || lpad(to_hex(g % 4099), 40, '0'),
      (1000 + g % 977)::numeric * 1000000000000000000, false, false,
      g / 10 + k, 1700000000 + g + k, '0x' || lpad(to_hex(g * 3 + k), 64, '0'), k
    FROM generate_series(1, ${LOCKS}) AS g, generate_series(1, 3) AS k`);
  await admin.query("ANALYZE");
  console.log(`${LOCKS} locks and ${3 * LOCKS} events inserted in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const app = createApp({
    config: loadConfig({ NETWORK: "base", RATE_LIMIT_MAX: "1000000" }),
    rpc: null,
    logger: createLogger({ level: "error" }),
    graphql: index.graphql,
  });
  const deepCursor = Buffer.from(
    JSON.stringify({ json: { tokenId: "90000" }, meta: { values: { tokenId: ["bigint"] }, v: 1 } }),
  ).toString("base64");
  const cases = [
    {
      name: "an owner's 32 locks",
      graphql: `{ locks(where: { owner: "${OWNER}" }, orderBy: "tokenId", limit: 32) { items { tokenId owner amount lockEnd autoMax } } }`,
      sql: { text: "SELECT * FROM lock WHERE owner = $1 ORDER BY token_id LIMIT 33", values: [OWNER] },
      list: "locks",
    },
    {
      name: "a lock's events + _meta",
      graphql: `{ _meta { status } lockEvents(where: { tokenId: "4242" }, orderBy: "blockNumber") { items { id kind blockNumber logIndex } } }`,
      sql: {
        text: "SELECT * FROM lock_event WHERE token_id = $1 ORDER BY block_number, id LIMIT 51",
        values: ["4242"],
      },
      list: "lockEvents",
    },
    {
      name: "100 locks after token 90,000",
      graphql: `{ locks(orderBy: "tokenId", limit: 100, after: "${deepCursor}") { items { tokenId amount } pageInfo { endCursor } } }`,
      sql: { text: "SELECT * FROM lock WHERE token_id >= $1 ORDER BY token_id LIMIT 102", values: ["90000"] },
      list: "locks",
    },
  ];
  const ratios: number[] = [];
  for (const c of cases) {
    const body = JSON.stringify({ query: c.graphql });
    const viaGraphql = async () => {
      const res = await app.request("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const answer = (await res.json()) as { data?: unknown; errors?: unknown };
      if (res.status !== 200 || answer.errors) throw new Error(`${c.name}: ${JSON.stringify(answer)}`);
      return answer.data;
    };
    const viaSql = () => admin.query(c.sql);
    const rows = ((await viaGraphql()) as Record<string, { items: unknown[] }>)[c.list]!.items.length;
    for (let i = 0; i < 50; i++) await Promise.all([viaGraphql(), viaSql()]); // warm-up: plans, pools, JIT
    const g: number[] = [];
    const s: number[] = [];
    // Interleaved, so a noisy neighbour hits both alike.
    for (let i = 0; i < N; i++) {
      let t = performance.now();
      await viaGraphql();
      g.push(performance.now() - t);
      t = performance.now();
      await viaSql();
      s.push(performance.now() - t);
    }
    const ratio = q(g, 0.5) / q(s, 0.5);
    ratios.push(ratio);
    console.log(
      `${c.name.padEnd(30)} rows ${String(rows).padStart(3)}  graphql p50 ${q(g, 0.5).toFixed(2)} ms p99 ${q(g, 0.99).toFixed(2)} ms` +
        `  bare SQL p50 ${q(s, 0.5).toFixed(2)} ms p99 ${q(s, 0.99).toFixed(2)} ms  ratio ${ratio.toFixed(2)}`,
    );
  }
  console.log(
    `graphql over bare SQL (Postgres, ${N} requests each): worst median ratio ${Math.max(...ratios).toFixed(2)}`,
  );
} finally {
  await index.close();
  await admin.end();
  await database.drop();
}
