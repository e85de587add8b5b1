#!/usr/bin/env node
// Forgets what Ponder's sync cache (schema ponder_sync) holds of a chain's replaced branch, so that a re-index after
// a reorg below Ponder's finalized block reads the chain as it is now (docs/operations.md, Unrecoverable reorg).
//
// Why: Ponder 0.17.7 back-fills a new schema from ponder_sync. Its rows are keyed by (chain, block number, index)
// and written with ON CONFLICT DO NOTHING, and `intervals` says which block ranges are already fetched; nothing
// there is ever checked against the chain again, and `ponder` has no command to drop part of it. After such a reorg
// the orphaned blocks, logs, transactions, receipts and eth_call results stay, so a re-index with the cache on
// reads the old branch back (the range counts as fetched), and with it off (INDEXER_DISABLE_CACHE=true) the
// refetched canonical rows lose every conflict to the orphaned ones.
//
// What: the stored blocks of the chain are compared with the node's (eth_getBlockByNumber), newest first. The
// lowest one whose hash differs (or that the node does not have) is at or above the fork; the highest stored block
// below it has the node's hash, so the fork is after it. From the block after that one (or the lower
// --from-block given), every row of the chain goes from blocks, logs, transactions, transaction_receipts, traces,
// rpc_request_results and factory_addresses, and that range is cut from `intervals` — in one transaction. The scan
// stops after CONFIRM stored blocks in a row below the lowest difference match the node.
//
// Usage (the indexer's environment: DATABASE_URL or DATABASE_PRIVATE_URL as Ponder reads them, RPC_URL):
//   node scripts/rewind-sync-cache.mjs            # dry run: prints what it found and what it would delete
//   node scripts/rewind-sync-cache.mjs --apply    # deletes it
//   options: --chain-id N (default: the node's eth_chainId), --from-block N (cut from N if lower than found)
// Every indexer on the database must be stopped first (the script refuses while one holds a live lock). It prints
// JSON lines; it never prints a URL (they carry passwords and API keys). Exit 0 done or nothing to do, 1 refused
// or failed (nothing changed).
import pg from "pg";

/** Stored blocks in a row, below the lowest one the chain replaced, that must match before the scan stops. */
const CONFIRM = 256;
/** Blocks asked of the node per JSON-RPC batch. */
const BATCH = 50;
/** Ponder's heartbeat timeout: a schema whose lock is younger than this belongs to a running indexer. */
const HEARTBEAT_TIMEOUT_MS = 25_000;
/** ponder_sync's tables keyed by block number, and that column's name in each. */
const TABLES = [
  ["blocks", "number"],
  ["logs", "block_number"],
  ["transactions", "block_number"],
  ["transaction_receipts", "block_number"],
  ["traces", "block_number"],
  ["rpc_request_results", "block_number"],
  ["factory_addresses", "block_number"],
];

const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
class Refused extends Error {}

function parseArgs(argv) {
  const out = { apply: false, chainId: null, fromBlock: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--apply") out.apply = true;
    else if (arg === "--chain-id" || arg === "--from-block") {
      const value = argv[++i];
      if (value === undefined || !/^\d+$/.test(value)) throw new Refused(`${arg} needs a whole number, got ${value}`);
      if (arg === "--chain-id") out.chainId = BigInt(value);
      else out.fromBlock = BigInt(value);
    } else throw new Refused(`unknown argument ${arg} (use --apply, --chain-id N, --from-block N)`);
  }
  return out;
}

function rpcClient(url) {
  let id = 0;
  return async (calls) => {
    const body = calls.map(([method, params]) => ({ jsonrpc: "2.0", id: ++id, method, params }));
    let res;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      throw new Refused(`RPC_URL: the node did not answer (${error.name})`);
    }
    if (!res.ok) throw new Refused(`RPC_URL: the node answered HTTP ${res.status}`);
    const answers = await res.json().catch(() => null);
    if (!Array.isArray(answers)) throw new Refused("RPC_URL: the node did not answer the batch with a JSON-RPC array");
    const byId = new Map(answers.map((a) => [a?.id, a]));
    return body.map(({ id, method }) => {
      const answer = byId.get(id);
      if (!answer || answer.error || !("result" in answer)) {
        throw new Refused(`RPC_URL: ${method} failed: ${answer?.error?.message ?? "no answer"}`);
      }
      return answer.result;
    });
  };
}

/** Schemas of `ponder start` apps holding a lock younger than Ponder's heartbeat timeout. */
async function activeIndexers(db) {
  const { rows } = await db.query(
    "SELECT table_schema FROM information_schema.tables WHERE table_name = '_ponder_meta' AND table_type = 'BASE TABLE'",
  );
  const active = [];
  for (const { table_schema: schema } of rows) {
    const meta = await db.query(`SELECT value FROM ${pg.escapeIdentifier(schema)}._ponder_meta WHERE key = 'app'`);
    const app = meta.rows[0]?.value;
    if (app?.is_locked === 1 && Number(app.heartbeat_at) + HEARTBEAT_TIMEOUT_MS > Date.now()) active.push(schema);
  }
  return active;
}

/**
 * The lowest stored block the chain no longer has and the highest stored one below it that it has, scanning the
 * stored blocks newest first until CONFIRM in a row below the lowest difference match.
 */
async function findFork(db, rpc, chainId) {
  let lowestReplaced = null;
  let highestKept = null;
  let matchedInRow = 0;
  let scanned = 0;
  let cursor = null;
  for (;;) {
    const { rows } = await db.query(
      `SELECT number::text AS number, hash FROM ponder_sync.blocks
        WHERE chain_id = $1 AND ($2::numeric IS NULL OR number < $2::numeric) ORDER BY number DESC LIMIT ${BATCH}`,
      [chainId.toString(), cursor],
    );
    if (rows.length === 0)
      return { lowestReplaced, highestKept: lowestReplaced === null ? null : highestKept, scanned };
    const chain = await rpc(rows.map((r) => ["eth_getBlockByNumber", [`0x${BigInt(r.number).toString(16)}`, false]]));
    for (const [i, row] of rows.entries()) {
      scanned++;
      const number = BigInt(row.number);
      if (chain[i]?.hash?.toLowerCase() !== row.hash.toLowerCase()) {
        lowestReplaced = number;
        highestKept = null;
        matchedInRow = 0;
      } else if (lowestReplaced !== null) {
        highestKept ??= number;
        if (++matchedInRow >= CONFIRM) return { lowestReplaced, highestKept, scanned };
      }
    }
    cursor = rows[rows.length - 1].number;
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const databaseUrl = process.env.DATABASE_PRIVATE_URL?.trim() || process.env.DATABASE_URL?.trim();
  const rpcUrl = process.env.RPC_URL?.trim();
  if (!databaseUrl) throw new Refused("DATABASE_URL (or DATABASE_PRIVATE_URL) is required: the indexer's database");
  if (!rpcUrl) throw new Refused("RPC_URL is required: a node of the chain, synced to its head");
  const rpc = rpcClient(rpcUrl);
  const [nodeChainId] = await rpc([["eth_chainId", []]]);
  const chainId = args.chainId ?? BigInt(nodeChainId);
  if (BigInt(nodeChainId) !== chainId) {
    throw new Refused(`RPC_URL is a node of chain ${BigInt(nodeChainId)}, not --chain-id ${chainId}`);
  }

  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect().catch((error) => {
    throw new Refused(`DATABASE_URL: cannot connect (${error.code ?? error.name})`);
  });
  try {
    const sync = await db.query("SELECT 1 FROM pg_namespace WHERE nspname = 'ponder_sync'");
    if (sync.rowCount === 0) return say({ msg: "no ponder_sync schema: nothing cached, nothing to do" });
    const active = await activeIndexers(db);
    if (active.length > 0) {
      throw new Refused(
        `an indexer holds schema ${active.join(", ")} (a lock younger than 25 s): stop every indexer first, then wait 25 s`,
      );
    }

    const { lowestReplaced, highestKept, scanned } = await findFork(db, rpc, chainId);
    say({
      msg: "stored blocks compared with the node",
      chainId: chainId.toString(),
      scanned,
      lowestReplaced: lowestReplaced?.toString() ?? null,
      highestKept: highestKept?.toString() ?? null,
    });
    if (lowestReplaced === null && args.fromBlock === null) {
      return say({ msg: "every stored block is the node's: nothing to rewind" });
    }
    // After the highest stored block the chain still has (the fork is above it); 0 when none is below.
    const found = lowestReplaced === null ? null : highestKept === null ? 0n : highestKept + 1n;
    const from = found === null || (args.fromBlock !== null && args.fromBlock < found) ? args.fromBlock : found;

    await db.query("BEGIN");
    const counts = {};
    for (const [table, column] of TABLES) {
      const sql = args.apply
        ? `DELETE FROM ponder_sync.${table} WHERE chain_id = $1 AND ${column} >= $2`
        : `SELECT count(*) FROM ponder_sync.${table} WHERE chain_id = $1 AND ${column} >= $2`;
      const res = await db.query(sql, [chainId.toString(), from.toString()]);
      counts[table] = args.apply ? res.rowCount : Number(res.rows[0].count);
    }
    // Ponder stores an interval [a, b] as numrange(a, b + 1, '[]') and reads it back as [lower, upper - 1]: keeping
    // blocks below `from` is keeping numrange(a, from, '[]'); ranges left empty of blocks (lower = upper) go.
    const trimmed = `(SELECT coalesce(range_agg(r), '{}'::nummultirange)
                        FROM unnest(blocks - nummultirange(numrange($2::numeric, NULL, '()'))) AS r
                       WHERE upper(r) > lower(r))`;
    const intervals = args.apply
      ? await db.query(
          `UPDATE ponder_sync.intervals SET blocks = ${trimmed} WHERE chain_id = $1 AND blocks <> ${trimmed}`,
          [chainId.toString(), from.toString()],
        )
      : await db.query(`SELECT 1 FROM ponder_sync.intervals WHERE chain_id = $1 AND blocks <> ${trimmed}`, [
          chainId.toString(),
          from.toString(),
        ]);
    counts.intervals = intervals.rowCount;
    await db.query("COMMIT");
    say({
      msg: args.apply ? "sync cache rewound" : "dry run: nothing changed (rerun with --apply)",
      chainId: chainId.toString(),
      fromBlock: from.toString(),
      [args.apply ? "deleted" : "wouldDelete"]: counts,
      next: "start the new indexer on a new DATABASE_SCHEMA with the same --views-schema",
    });
  } catch (error) {
    await db.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    await db.end();
  }
}

try {
  await main();
} catch (error) {
  process.stderr.write(`rewind-sync-cache: ${error instanceof Refused ? error.message : error.stack}\n`);
  process.exit(1);
}
