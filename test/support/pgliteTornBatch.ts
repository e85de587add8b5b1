/**
 * Whether a SIGKILLed PGlite indexer died in the middle of a backfill batch, leaving rows past its checkpoint.
 *
 * Why this exists: on PGlite, Ponder 0.17.7 runs no transaction at all. Its query builder replaces
 * `transaction(cb)` with `cb(db)` for PGlite (node_modules/ponder/src/database/queryBuilder.ts, the `else` of
 * `if (dialect === "postgres")`), so a batch's row flushes and its `_ponder_checkpoint` upsert each commit on
 * their own, in that order. A kill between them leaves the batch's first tables written and the checkpoint at
 * the batch before; crash recovery resumes from that checkpoint and replays the batch over its own rows: an
 * insert meets its row again (UniqueConstraintError) or an update is applied twice (a silently wrong index).
 *
 * Every statement having its own transaction id, the rows such a kill leaves are exactly the user-table rows
 * newer (by xmin) than the checkpoint row: the checkpoint upsert is a batch's last statement, and our
 * handlers never delete (a delete would leave no row to see). Postgres runs the batch in one transaction and
 * needs none of this.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";

export interface TornBatch {
  /** Rows per user table written after the checkpoint row (empty: the folder is at a batch boundary). */
  rowsPastCheckpoint: Record<string, number>;
}

/**
 * Reads a copy of a stopped indexer's PGlite folder (opening the folder itself would run PGlite's recovery
 * in this process, not in the indexer that restarts on it). `schema` is Ponder's `--schema`.
 */
export async function findTornBatch(dir: string, schema: string): Promise<TornBatch> {
  const copy = mkdtempSync(path.join(os.tmpdir(), "pglite-torn-"));
  cpSync(dir, copy, { recursive: true });
  const db = new PGlite(copy);
  try {
    const checkpoint = await db.query<{ xmin: string }>(
      `SELECT max(xmin::text::bigint)::text AS xmin FROM "${schema}"."_ponder_checkpoint"`,
    );
    // No checkpoint yet: every user row is past it.
    const since = checkpoint.rows[0]?.xmin ?? "0";
    // User tables only: Ponder's own (_ponder_meta, _ponder_checkpoint, _reorg__*) start with an underscore.
    const tables = await db.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
       WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND left(table_name, 1) <> '_' ORDER BY 1`,
      [schema],
    );
    const rowsPastCheckpoint: Record<string, number> = {};
    for (const { name } of tables.rows) {
      const past = await db.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM "${schema}"."${name}" WHERE xmin::text::bigint > $1`,
        [since],
      );
      const n = Number(past.rows[0]?.n ?? 0);
      if (n > 0) rowsPastCheckpoint[name] = n;
    }
    return { rowsPastCheckpoint };
  } finally {
    await db.close();
    rmSync(copy, { recursive: true, force: true });
  }
}
