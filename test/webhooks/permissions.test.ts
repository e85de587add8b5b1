/**
 * The webhook routes over a database user without the rights their store needs (api/webhooks/routes.ts), on a real
 * Postgres: a role that may connect and read but not create the webhooks' schema (the topology's "Postgres read"), and
 * one whose schema exists but whose tables it may not write. The database answers — with a permission error — so the
 * routes say 503 INDEX_UNAVAILABLE "not permitted", not "unreachable" (api.md: the database is not answering), which
 * stays what a database that does not answer gets.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { Webhooks } from "../../api/webhooks/service";
import { pgSql, type Sql } from "../../api/webhooks/sql";
import { freePort } from "../../devnet/anvil";
import { createTestDatabase, type TestDatabase } from "../support/ponder";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const TOKEN = "operator-token-0123456789";
const ROLE = `webhooks_ro_${randomUUID().slice(0, 8)}`;
const SETTINGS = {
  operatorToken: TOKEN,
  allowPrivate: "loopback",
  retryScheduleMs: [100],
  timeoutMs: 2_000,
  maxSubscriptions: 10,
} as const;

let database: TestDatabase;
let adminUrl: string;
const opened: Sql[] = [];

async function admin(statements: string[]): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    for (const s of statements) await c.query(s);
  } finally {
    await c.end();
  }
}

/** The app's webhook routes over `url`, in the schema `schema`. */
function appOver(url: string, schema: string) {
  const sql = pgSql(url, 1);
  opened.push(sql);
  return createApp({
    config: loadConfig({ NETWORK: "base", OPERATOR_TOKEN: TOKEN }),
    rpc: null,
    logger: silentLogger,
    webhooks: new Webhooks(sql, schema, SETTINGS, silentLogger),
  });
}

async function listWebhooks(app: ReturnType<typeof appOver>) {
  const res = await app.request("/api/index/v1/webhooks", { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: (await res.json()) as { error?: string; detail?: { reason?: string } } };
}

beforeAll(async () => {
  database = await createTestDatabase(PG_URL);
  adminUrl = (database.forPonder() as { url: string }).url;
  await admin([`CREATE ROLE ${ROLE} LOGIN`]);
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close().catch(() => {})));
  await database?.drop();
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`DROP ROLE IF EXISTS ${ROLE}`).finally(() => c.end());
});

const asRole = () => {
  const url = new URL(adminUrl);
  url.username = ROLE;
  return url.toString();
};

describe("the webhook routes over a database user without the rights", () => {
  it("no CREATE on the database (the schema cannot be made): 503 INDEX_UNAVAILABLE not permitted", async () => {
    const { status, body } = await listWebhooks(appOver(asRole(), "webhooks"));
    expect(status).toBe(503);
    expect(body).toMatchObject({ ok: false, error: "INDEX_UNAVAILABLE", detail: { reason: "not permitted" } });
  });

  it("the schema made by another user, its tables not granted: not permitted too", async () => {
    // The tables as an admin's process makes them, then the role may only look into the schema.
    const made = await listWebhooks(appOver(adminUrl, "webhooks_made"));
    expect(made.status).toBe(200);
    await admin([`GRANT USAGE ON SCHEMA webhooks_made TO ${ROLE}`]);
    const { status, body } = await listWebhooks(appOver(asRole(), "webhooks_made"));
    expect(status).toBe(503);
    expect(body).toMatchObject({ ok: false, error: "INDEX_UNAVAILABLE", detail: { reason: "not permitted" } });
  });

  it("a database that does not answer is still unreachable", async () => {
    const url = new URL(adminUrl);
    url.port = String(await freePort());
    const { status, body } = await listWebhooks(appOver(url.toString(), "webhooks"));
    expect(status).toBe(503);
    expect(body).toMatchObject({ ok: false, error: "INDEX_UNAVAILABLE", detail: { reason: "unreachable" } });
  });
});
