/**
 * A synthetic lock index: random but valid VeLockNFT activity, turned into rows by the indexer's own rules
 * (indexer/rules.ts) and written to tables shaped like Ponder's (`lock`, `lock_event`, `_ponder_checkpoint`), so
 * the index API can be tested and benchmarked at sizes no devnet reaches. The rules' own state at chosen blocks is
 * kept as the reference an answer must equal: it is computed row by row, never through the read model's SQL.
 */
import path from "node:path";
import { type Address, getAddress, type Hex, keccak256, toHex } from "viem";
import {
  autoMaxSet,
  type BlockRef,
  type LockEventKind,
  type LockEventRow,
  type LockRow,
  listingSet,
  lockAmountIncreased,
  lockCreated,
  lockEventRow,
  lockExtended,
  lockMerged,
  lockTransferred,
  lockUnlocked,
} from "../../indexer/rules";
import * as ponderSchema from "../../ponder.schema";
import { REPO_ROOT } from "./ponder";

const E18 = 10n ** 18n;
const DAY = 86_400n;
const YEAR = 365n * DAY;

export type SyntheticOptions = {
  /** Lifecycle events to write (rows of lock_event); the generator stops at this count. */
  events: number;
  /** Size of the owner pool (the number of distinct holders approaches it as locks grow). */
  owners: number;
  /** Share of events that create a lock (default 0.2). */
  createShare?: number;
  seed?: number;
  startBlock?: bigint;
  startTime?: bigint;
  /** Seconds between blocks (default 60: a year of activity in ~500k blocks). */
  blockSeconds?: bigint;
  /** Blocks whose end state is kept as the reference (lock rows by token id). */
  snapshotAt?: readonly bigint[];
};

export type SyntheticIndex = {
  events: LockEventRow[];
  /** Final `lock` rows. */
  locks: Map<bigint, LockRow>;
  /** The rules' state at the end of each requested block. */
  snapshots: Map<bigint, Map<bigint, LockRow>>;
  /** Timestamp of every block that was produced, first to head. */
  blockTimes: Map<bigint, bigint>;
  startBlock: bigint;
  head: { block: bigint; time: bigint };
  furnace: Address;
};

/** A small fast PRNG (mulberry32): the same seed gives the same index. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const syntheticOwner = (i: number): Address => getAddress(keccak256(toHex(`owner-${i}`)).slice(0, 42));

export function generateSyntheticIndex(o: SyntheticOptions): SyntheticIndex {
  const rand = prng(o.seed ?? 1);
  const int = (n: number) => Math.floor(rand() * n);
  const createShare = o.createShare ?? 0.2;
  const startBlock = o.startBlock ?? 1_000n;
  const blockSeconds = o.blockSeconds ?? 60n;
  const furnace = syntheticOwner(-1);
  const owners = Array.from({ length: o.owners }, (_, i) => syntheticOwner(i));
  const snapshotAt = new Set(o.snapshotAt ?? []);

  const locks = new Map<bigint, LockRow>();
  /** Live token ids, for picking; and per owner. */
  const live: bigint[] = [];
  const liveIndex = new Map<bigint, number>();
  const byOwner = new Map<string, Set<bigint>>();
  const addLive = (row: LockRow) => {
    liveIndex.set(row.tokenId, live.length);
    live.push(row.tokenId);
    const key = (row.owner as string).toLowerCase();
    if (!byOwner.has(key)) byOwner.set(key, new Set());
    byOwner.get(key)!.add(row.tokenId);
  };
  const dropLive = (tokenId: bigint, owner: string) => {
    const i = liveIndex.get(tokenId)!;
    const last = live[live.length - 1]!;
    live[i] = last;
    liveIndex.set(last, i);
    live.pop();
    liveIndex.delete(tokenId);
    byOwner.get(owner.toLowerCase())?.delete(tokenId);
  };

  const events: LockEventRow[] = [];
  const snapshots = new Map<bigint, Map<bigint, LockRow>>();
  const blockTimes = new Map<bigint, bigint>();
  let nextId = 1n;
  let block: BlockRef = { number: startBlock, timestamp: o.startTime ?? 1_700_000_000n };
  let logIndex = 0;
  const emit = (kind: LockEventKind, after: LockRow, detail: Parameters<typeof lockEventRow>[3]) => {
    const txHash = `0x${block.number.toString(16).padStart(32, "0")}${logIndex.toString(16).padStart(32, "0")}` as Hex;
    events.push(lockEventRow(kind, after, { block, txHash, logIndex }, detail));
    logIndex++;
  };
  const usable = (row: LockRow) => !row.burned && !row.listed && (row.autoMax || row.lockEnd > block.timestamp);

  const step = () => {
    const r = rand();
    if (r < createShare || live.length === 0) {
      const owner = owners[int(owners.length)]!;
      const autoMax = rand() < 0.15;
      const days = autoMax ? 365n : 7n + BigInt(int(359));
      const row = lockCreated(
        {
          user: owner,
          tokenId: nextId++,
          amount: 1_000n * E18 + BigInt(int(1_000_000)) * 10n ** 16n,
          lockEnd: block.timestamp + days * DAY,
          autoMax,
        },
        block,
      );
      locks.set(row.tokenId, row);
      addLive(row);
      emit("create", row, { account: owner, amount: row.amount });
      return;
    }
    const id = live[int(live.length)]!;
    const row = locks.get(id)!;
    const owner = row.owner as Address;
    const op = rand();
    if (op < 0.3 && usable(row)) {
      const added = E18 + BigInt(int(100_000)) * 10n ** 16n;
      const next = lockAmountIncreased(row, { user: owner, amountAdded: added }, block);
      locks.set(id, next);
      emit("topup", next, { account: owner, amount: added });
    } else if (op < 0.45 && usable(row) && !row.autoMax && row.lockEnd < block.timestamp + YEAR) {
      const room = block.timestamp + YEAR - row.lockEnd;
      const newEnd = row.lockEnd + 1n + BigInt(int(Number(room)));
      const next = lockExtended(row, { user: owner, oldEnd: row.lockEnd, newEnd }, block);
      locks.set(id, next);
      emit("extend", next, { account: owner });
    } else if (op < 0.55 && usable(row)) {
      const next = autoMaxSet(row, { user: owner, autoMax: !row.autoMax }, block);
      locks.set(id, next);
      emit("automax", next, { account: owner });
    } else if (op < 0.65 && usable(row)) {
      const mine = [...(byOwner.get(owner.toLowerCase()) ?? [])].filter((t) => t !== id && usable(locks.get(t)!));
      const intoId = mine[int(mine.length)];
      if (intoId === undefined) return;
      const merged = lockMerged(row, locks.get(intoId)!, { user: owner, amountMoved: row.amount }, block);
      locks.set(id, merged.from);
      locks.set(intoId, merged.into);
      dropLive(id, owner);
      emit("merge", merged.into, { account: owner, amount: row.amount, fromTokenId: id });
    } else if (op < 0.8 && !row.listed && !row.autoMax && row.lockEnd <= block.timestamp) {
      const next = lockUnlocked(row, { user: owner, amountReturned: row.amount }, block);
      locks.set(id, next);
      dropLive(id, owner);
      emit("unlock", next, { account: owner, amount: row.amount });
    } else if (op < 0.9 && owner !== furnace) {
      const next = listingSet(row, !row.listed, block);
      if (next === null) return;
      locks.set(id, next);
      emit(next.listed ? "list" : "unlist", next, { account: owner });
    } else if (op < 0.95 && row.listed) {
      // A sale as the published market runs it: delist (MetadataUpdate → unlist), then move the lock to the
      // Furnace (sell-back), which later burns it.
      const unlisted = listingSet(row, false, block)!;
      emit("unlist", unlisted, { account: owner });
      const next = lockTransferred(unlisted, { from: owner, to: furnace }, block)!;
      locks.set(id, next);
      dropLive(id, owner);
      addLive(next);
      emit("transfer", next, { account: owner, recipient: furnace });
    } else if (owner === furnace) {
      const next = lockUnlocked(row, { user: furnace, amountReturned: row.amount }, block);
      locks.set(id, next);
      dropLive(id, furnace);
      emit("unlock", next, { account: furnace, amount: row.amount });
    }
  };

  while (events.length < o.events) {
    blockTimes.set(block.number, block.timestamp);
    logIndex = 0;
    // 0 to 3 events: some blocks are empty, as on a real chain.
    const perBlock = int(4);
    for (let i = 0; i < perBlock && events.length < o.events; i++) step();
    if (snapshotAt.has(block.number)) snapshots.set(block.number, new Map(locks));
    block = { number: block.number + 1n, timestamp: block.timestamp + blockSeconds };
  }
  // A few empty blocks after the last event: the head is a block without events.
  blockTimes.set(block.number, block.timestamp);
  if (snapshotAt.has(block.number)) snapshots.set(block.number, new Map(locks));
  return {
    events,
    locks,
    snapshots,
    blockTimes,
    startBlock,
    head: { block: block.number, time: block.timestamp },
    furnace,
  };
}

/** The rules' state of every lock at the end of `block` (one of `snapshotAt`). */
export function stateAt(index: SyntheticIndex, block: bigint): Map<bigint, LockRow> {
  const kept = index.snapshots.get(block);
  if (!kept) throw new Error(`no snapshot at ${block}`);
  return kept;
}

/** Ponder's checkpoint string (ponder/dist/esm/utils/checkpoint.js) of a block. */
export function checkpointOf(chainId: number, block: bigint, time: bigint): string {
  return `${time.toString().padStart(10, "0")}${String(chainId).padStart(16, "0")}${block.toString().padStart(16, "0")}${"9".repeat(16)}5${"0".repeat(16)}`;
}

/**
 * The DDL `ponder start` runs for ponder.schema.ts (Ponder's own generator; not in the package's exports map),
 * unqualified: run it with search_path set to the schema. Reorg shadow tables are left out.
 */
async function ponderDdl(): Promise<{ tables: string[]; indexes: string[] }> {
  const kit = (await import(path.join(REPO_ROOT, "node_modules/ponder/dist/esm/drizzle/kit/index.js"))) as {
    getSql(schema: object): { tables: { sql: string[] }; indexes: { sql: string[] } };
  };
  const ddl = kit.getSql({ lock: ponderSchema.lock, lockEvent: ponderSchema.lockEvent });
  return { tables: ddl.tables.sql.filter((t) => !t.includes('"_reorg__')), indexes: ddl.indexes.sql };
}

/**
 * The protocol's tables (the activity feed, the duration boards' entries, hours and totals) with their indexes, empty:
 * the synthetic index is of locks only, but the duration boards and the profile read these, so every ranking is still
 * one statement on the whole-index pool (test/index/timeTravelFlood.test.ts floods them).
 */
async function protocolDdl(): Promise<string[]> {
  const kit = (await import(path.join(REPO_ROOT, "node_modules/ponder/dist/esm/drizzle/kit/index.js"))) as {
    getSql(schema: object): { tables: { sql: string[] }; indexes: { sql: string[] } };
  };
  const { protocolEvent, boardEntry, boardHour, boardTotal } = ponderSchema;
  const ddl = kit.getSql({ protocolEvent, boardEntry, boardHour, boardTotal });
  return [...ddl.tables.sql.filter((t) => !t.includes('"_reorg__')), ...ddl.indexes.sql];
}

/** Ponder's checkpoint table (database/index.js creates it beside the app's tables). */
const CHECKPOINT_DDL = `CREATE TABLE "_ponder_checkpoint" ("chain_name" text PRIMARY KEY, "chain_id" bigint NOT NULL,
  "safe_checkpoint" varchar(75) NOT NULL, "latest_checkpoint" varchar(75) NOT NULL,
  "finalized_checkpoint" varchar(75) NOT NULL)`;
/** The build id the synthetic index's meta row names, as Ponder 0.17 writes one (10 hex digits). */
export const SYNTHETIC_BUILD_ID = "5e1f0c0de0";
/**
 * Ponder's meta table, as an app that has finished its backfill leaves it (is_ready 1: index reads trust it), with
 * its build id (the answers' ETag carries a digest of it).
 */
export const META_DDL = [
  `CREATE TABLE "_ponder_meta" ("key" text PRIMARY KEY, "value" jsonb NOT NULL)`,
  `INSERT INTO "_ponder_meta" VALUES ('app', '{"is_ready": 1, "is_locked": 1, "build_id": "${SYNTHETIC_BUILD_ID}"}')`,
];

/** Creates `schema` with the tables (no indexes), on one session (the statements set its search_path). */
export async function createSyntheticTables(exec: Exec, schema: string): Promise<void> {
  await exec(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await exec(`SET search_path TO "${schema}"`);
  for (const ddl of [...(await ponderDdl()).tables, ...(await protocolDdl()), CHECKPOINT_DDL, ...META_DDL]) {
    await exec(ddl);
  }
}

type Exec = (text: string, params?: unknown[]) => Promise<unknown>;
type Query = (text: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/**
 * Whether `schema` already holds `index` (its event count and head checkpoint): a bench may then reuse it instead
 * of writing it again (minutes at 500k events). Its indexes are brought to ponder.schema.ts's (syncSyntheticIndexes).
 */
export async function syntheticIndexPresent(query: Query, schema: string, index: SyntheticIndex): Promise<boolean> {
  const found = await query("SELECT to_regclass($1) IS NOT NULL AS present", [`"${schema}"."_ponder_checkpoint"`]);
  if (found.rows[0]?.present !== true) return false;
  const { rows } = await query(
    `SELECT (SELECT count(*) FROM "${schema}"."lock_event")::text AS events,
            (SELECT latest_checkpoint FROM "${schema}"."_ponder_checkpoint" LIMIT 1) AS latest`,
  );
  const chainId = 8453;
  return (
    rows[0]?.events === String(index.events.length) &&
    rows[0]?.latest === checkpointOf(chainId, index.head.block, index.head.time)
  );
}

/**
 * Makes the secondary indexes of a reused synthetic index those ponder.schema.ts declares now, by name: drops the
 * others, creates the missing ones, then ANALYZE. Returns the names created and dropped.
 */
export async function syncSyntheticIndexes(
  query: Query,
  schema: string,
): Promise<{ created: string[]; dropped: string[] }> {
  const wanted = new Map(
    (await ponderDdl()).indexes.map((ddl) => [/INDEX(?: IF NOT EXISTS)? "([^"]+)"/.exec(ddl)?.[1] as string, ddl]),
  );
  const { rows } = await query(
    `SELECT indexname AS name, indexdef AS def FROM pg_indexes
      WHERE schemaname = $1 AND tablename IN ('lock', 'lock_event') AND indexname NOT LIKE '%_pkey'`,
    [schema],
  );
  const have = new Set(rows.map((r) => String(r.name)));
  const dropped = [...have].filter((name) => !wanted.has(name));
  const created = [...wanted.keys()].filter((name) => !have.has(name));
  for (const name of dropped) await query(`DROP INDEX "${schema}"."${name}"`);
  await query(`SET search_path TO "${schema}"`);
  for (const name of created) await query(wanted.get(name) as string);
  if (created.length + dropped.length > 0) {
    await query(`VACUUM ANALYZE "${schema}"."lock_event"`);
    await query(`VACUUM ANALYZE "${schema}"."lock"`);
  }
  return { created, dropped };
}

/**
 * Writes the index into `schema` (created here), on one session: rows in batches through unnest (one statement per
 * batch), then the indexes, then ANALYZE. `finalizedLag` blocks below the head are "finalized" in the checkpoint.
 * `tables: false` writes into tables already created (createSyntheticTables: a bench that writes other tables beside),
 * `checkpoint: false` leaves Ponder's checkpoint to the caller (a bench whose head is another index's).
 */
export async function writeSyntheticIndex(
  exec: Exec,
  schema: string,
  index: SyntheticIndex,
  options: { chainId?: number; finalizedLag?: bigint; batch?: number; tables?: boolean; checkpoint?: boolean } = {},
): Promise<void> {
  const q = `"${schema}"`;
  if (options.tables !== false) await createSyntheticTables(exec, schema);
  const batch = options.batch ?? 5_000;
  const s = (v: bigint | number | null) => (v === null ? null : v.toString());
  const low = (a: string | null) => (a === null ? null : a.toLowerCase());
  for (let i = 0; i < index.events.length; i += batch) {
    const part = index.events.slice(i, i + batch);
    const col = <T>(f: (e: LockEventRow) => T) => part.map(f);
    await exec(
      `INSERT INTO ${q}."lock_event" SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[], $4::text[],
        $5::numeric[], $6::numeric[], $7::boolean[], $8::numeric[], $9::text[], $10::text[], $11::numeric[],
        $12::boolean[], $13::boolean[], $14::numeric[], $15::numeric[], $16::text[], $17::integer[])`,
      [
        col((e) => e.id),
        col((e) => e.kind),
        col((e) => s(e.tokenId)),
        col((e) => low(e.account)),
        col((e) => s(e.amount)),
        col((e) => s(e.lockEnd)),
        col((e) => e.autoMax),
        col((e) => s(e.fromTokenId)),
        col((e) => low(e.recipient)),
        col((e) => low(e.owner)),
        col((e) => s(e.lockAmount)),
        col((e) => e.listed),
        col((e) => e.burned),
        col((e) => s(e.blockNumber)),
        col((e) => s(e.blockTime)),
        col((e) => e.txHash),
        col((e) => e.logIndex),
      ],
    );
  }
  const rows = [...index.locks.values()];
  for (let i = 0; i < rows.length; i += batch) {
    const part = rows.slice(i, i + batch);
    const col = <T>(f: (r: LockRow) => T) => part.map(f);
    await exec(
      `INSERT INTO ${q}."lock" SELECT * FROM unnest($1::numeric[], $2::text[], $3::numeric[], $4::numeric[],
        $5::boolean[], $6::boolean[], $7::boolean[], $8::numeric[], $9::numeric[], $10::numeric[], $11::numeric[])`,
      [
        col((r) => s(r.tokenId)),
        col((r) => low(r.owner)),
        col((r) => s(r.amount)),
        col((r) => s(r.lockEnd)),
        col((r) => r.autoMax),
        col((r) => r.listed),
        col((r) => r.burned),
        col((r) => s(r.createdBlock)),
        col((r) => s(r.createdTime)),
        col((r) => s(r.updatedBlock)),
        col((r) => s(r.updatedTime)),
      ],
    );
  }
  const chainId = options.chainId ?? 8453;
  // The newest block at least finalizedLag below the head whose time the index knows: Ponder's finalized checkpoint
  // carries its block's own timestamp (the duration boards' anchors are read at it).
  let finalized = index.head.block - (options.finalizedLag ?? 30n);
  while (finalized > 0n && !index.blockTimes.has(finalized)) finalized--;
  const finalizedTime = index.blockTimes.get(finalized) ?? index.head.time;
  if (options.checkpoint !== false) {
    await exec(`INSERT INTO ${q}."_ponder_checkpoint" VALUES ('base', $1, $2, $3, $4)`, [
      chainId,
      checkpointOf(chainId, finalized, finalizedTime),
      checkpointOf(chainId, index.head.block, index.head.time),
      checkpointOf(chainId, finalized, finalizedTime),
    ]);
  }
  // Ponder creates the schema's indexes once the backfill is done, as here after the rows.
  await exec(`SET search_path TO ${q}`);
  for (const ddl of (await ponderDdl()).indexes) await exec(ddl);
  // A live index is vacuumed as it grows (autovacuum): hint bits set, visibility map current.
  await exec(`VACUUM ANALYZE ${q}."lock_event"`);
  await exec(`VACUUM ANALYZE ${q}."lock"`);
}
