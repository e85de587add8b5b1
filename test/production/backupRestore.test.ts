/**
 * docs/operations.md "Backup and restore", its commands as written there (read from the document, with this test's
 * database and file put in): the dump, the in-place restore in one transaction, and the restore into a new, empty
 * database. The database is a small stand-in for the index — a live schema, its views schema, `ponder_sync` — plus
 * the API processes' `webhooks` schema made by the API's own WebhookStore with one registration and a pending
 * delivery. The registration (its signing secret), the outbox and the feed's cursor must come back both ways: the
 * runbook's former three-schema dump left them behind on a move to a new server.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgSql } from "../../api/webhooks/sql";
import { WebhookStore } from "../../api/webhooks/store";
import { createTestDatabase, REPO_ROOT, type TestDatabase } from "../support/ponder";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const doc = readFileSync(path.join(REPO_ROOT, "docs", "operations.md"), "utf8");
const section = doc.slice(doc.indexOf("## Backup and restore"), doc.indexOf("## Pruning old schemas"));
/** The dump command, in one line. */
const dumpCommand = /`(pg_dump [^`]+)`/.exec(section)![1]!;
/** The in-place restore: the sh block of the Restore item. */
const restoreScript = /- \*\*Restore\*\*[\s\S]*?```sh\n([\s\S]*?)```/.exec(section)![1]!;

let source: TestDatabase;
let target: TestDatabase;
let dir: string;
const urlOf = (db: TestDatabase) => (db.forPonder() as { url: string }).url;

async function query<T = Record<string, unknown>>(url: string, text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows as T[];
  } finally {
    await c.end();
  }
}

const sh = (script: string, env: Record<string, string>) =>
  execFileSync("bash", ["-euo", "pipefail", "-c", script], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: "pipe",
  });

/** What a move must keep of the webhooks: registrations with their secrets, the outbox, the cursor. */
const webhooks = (url: string) =>
  Promise.all([
    query(url, "SELECT id, url, secret FROM webhooks.subscription ORDER BY id"),
    query(url, "SELECT id, status, block::text FROM webhooks.delivery ORDER BY seq"),
    query(url, "SELECT block::text FROM webhooks.cursor"),
  ]);

let kept: Awaited<ReturnType<typeof webhooks>>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "backup-"));
  [source, target] = await Promise.all([createTestDatabase(PG_URL), createTestDatabase(PG_URL)]);
  const url = urlOf(source);
  await query(
    url,
    `CREATE SCHEMA asset_v3;
     CREATE TABLE asset_v3.lock (token_id numeric PRIMARY KEY, owner text NOT NULL);
     INSERT INTO asset_v3.lock SELECT i, 'owner' || i FROM generate_series(1, 45) i;
     CREATE SCHEMA asset;
     CREATE VIEW asset.lock AS SELECT * FROM asset_v3.lock;
     CREATE SEQUENCE asset.lock_index_writes;
     CREATE SCHEMA ponder_sync;
     CREATE TABLE ponder_sync.blocks (chain_id bigint, number bigint, hash text, PRIMARY KEY (chain_id, number));
     INSERT INTO ponder_sync.blocks VALUES (8453, 1, '0x01');`,
  );
  const sql = pgSql(url, 2);
  try {
    const store = new WebhookStore(sql, "webhooks");
    await store.migrate();
    const hook = (await store.create("https://receiver.example/hook", ["stats"], "whsec_KEEPME", 10))!;
    await store.startFeedAt(100n);
    await store.feed(async (cursor) => ({
      to: cursor! + 1n,
      rows: [{ subscription: hook.id, block: cursor! + 1n, topic: "stats", type: "index.stats", payload: "{}" }],
    }));
  } finally {
    await sql.close();
  }
  kept = await webhooks(url);
  expect(kept[0]).toHaveLength(1);
  expect(kept[1]).toHaveLength(1);
  sh(dumpCommand, { DATABASE_URL: url });
}, 60_000);

afterAll(async () => {
  await Promise.all([source?.drop(), target?.drop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the backup runbook's commands", () => {
  it("dump the webhooks schema with the index", () => {
    expect(dumpCommand).toContain("--schema=webhooks");
  });

  it("restore in place, in one transaction: registrations, secrets, outbox and cursor back as they were", async () => {
    const url = urlOf(source);
    await query(
      url,
      "DELETE FROM webhooks.subscription; UPDATE webhooks.cursor SET block = 7; DELETE FROM asset_v3.lock",
    );
    sh(restoreScript, { DATABASE_URL: url });
    expect(await webhooks(url)).toEqual(kept);
    expect(await query(url, "SELECT count(*)::int AS n FROM asset.lock")).toEqual([{ n: 45 }]);
  });

  it("move to a new, empty database (the same pipe without the DROP): the webhooks come along", async () => {
    const url = urlOf(target);
    const pipe = restoreScript.replace(/\\\n\s*-c '[^']*'/, "");
    expect(pipe).not.toContain("DROP");
    sh(pipe, { DATABASE_URL: url });
    expect(await webhooks(url)).toEqual(kept);
    expect(await query(url, "SELECT count(*)::int AS n FROM asset.lock")).toEqual([{ n: 45 }]);
  });
});
