/**
 * Two real apps over one synthetic index in PGlite (Base's 2 s blocks, 400 events, finalized 200 blocks back): one
 * listening to a signal the test tells as the NOTIFY would (toldSignal.ts), one without a signal, which makes every
 * answer on request — for tests comparing the first's head answers with the second's at the same block.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import { checkpointOf, generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "./syntheticIndex";
import { commitTold, type ToldSignal, toldSignal } from "./toldSignal";

const SCHEMA = "synthetic";
const START = 46_183_959n;

type App = ReturnType<typeof createApp>;
type LockIndex = ReturnType<typeof createLockIndex>;

export type ToldApps = {
  index: SyntheticIndex;
  told: ToldSignal;
  /** Listens to `told`. */
  listening: App;
  /** No signal. */
  plain: App;
  /**
   * The index's head moved to `block` (Ponder's checkpoint row), then told with `writes` (the write count) and
   * `carried` (the lock events carried: `carriedSince`).
   */
  commit(block: bigint, writes?: string, carried?: string): Promise<void>;
  /**
   * The lock events of the blocks after `from` up to `to` as a notification carries them, "<rewrites>:<from>:<rows>"
   * (api/read/indexSignal.ts), read from the index with a statement of the test's own.
   */
  carriedSince(from: bigint, to: bigint, rewrites: string): Promise<string>;
  /** How many changed-locks statements (veLockDelta) the listening app has sent so far. */
  deltaStatements(): number;
  /** The index's own changed-locks statement, uncounted (the plain app's lock index). */
  statementAt: LockIndex["veLockDelta"];
  /** A statement of the test's own on the index's database (its tables are in schema `synthetic`). */
  query(text: string, params?: unknown[]): Promise<unknown>;
  /** The head moved to `block` without a notification (a trigger gone, a lost NOTIFY). */
  silently(block: bigint): Promise<unknown>;
  close(): Promise<void>;
};

/** `watch` may wrap the listening app's lock index (to count its statements) before the app is made. */
export async function toldApps(seed: number, watch?: (index: LockIndex) => void): Promise<ToldApps> {
  const index = generateSyntheticIndex({ events: 400, owners: 24, seed, startBlock: START, blockSeconds: 2n });
  const client = new PGlite();
  const query = (text: string, params?: unknown[]) => client.query(text, params);
  await writeSyntheticIndex(query, SCHEMA, index, { finalizedLag: 200n });
  const told = toldSignal();
  const make = (lockIndex: LockIndex, signal?: ToldSignal["signal"]) =>
    createApp({
      config: loadConfig({ NETWORK: "base" }),
      rpc: null,
      index: { atBlock: lockIndex, ...(signal ? { signal } : {}) },
      logger: silentLogger,
    });
  const watched = createLockIndex({ db: drizzle(client), schema: SCHEMA });
  let deltaStatements = 0;
  const veLockDelta = watched.veLockDelta;
  watched.veLockDelta = (from, at) => {
    deltaStatements++;
    return veLockDelta(from, at);
  };
  watch?.(watched);
  const plainIndex = createLockIndex({ db: drizzle(client), schema: SCHEMA });
  return {
    index,
    told,
    listening: make(watched, told.signal),
    plain: make(plainIndex),
    deltaStatements: () => deltaStatements,
    statementAt: (from, at) => plainIndex.veLockDelta(from, at),
    commit: (block, writes, carried) => commitTold(told, query, SCHEMA, index, block, undefined, writes, carried),
    carriedSince: async (from, to, rewrites) => {
      const { rows } = await client.query<{
        token_id: string;
        owner: string | null;
        lock_amount: string;
        lock_end: string;
        auto_max: boolean;
        burned: boolean;
        from_token_id: string | null;
        block_number: string;
        log_index: number;
      }>(
        `SELECT token_id::text, owner, lock_amount::text, lock_end::text, auto_max, burned, from_token_id::text,
                block_number::text, log_index FROM ${SCHEMA}.lock_event WHERE block_number > $1 AND block_number <= $2
          ORDER BY block_number, log_index`,
        [from.toString(), to.toString()],
      );
      const lines = rows.map((r) =>
        [
          r.token_id,
          r.owner ?? "",
          r.lock_amount,
          r.lock_end,
          r.auto_max ? "t" : "f",
          r.burned ? "t" : "f",
          r.from_token_id ?? "",
          r.block_number,
          r.log_index,
        ].join(","),
      );
      return `${rewrites}:${from}:${lines.join(";")}`;
    },
    query,
    silently: (block) =>
      query(`UPDATE ${SCHEMA}._ponder_checkpoint SET latest_checkpoint = $1`, [
        checkpointOf(8453, block, index.blockTimes.get(block)!),
      ]),
    close: () => client.close(),
  };
}

/** A counter's value in `app`'s /api/metrics by its full series name (`name{label="v"}`); 0 until it is listed. */
export async function metricOf(app: App, series: string): Promise<number> {
  const text = await (await app.request("/api/metrics")).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}
