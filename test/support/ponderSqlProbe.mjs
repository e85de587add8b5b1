/**
 * Test-only preload for `ponder start` (node --import): a loopback HTTP endpoint that runs read-only SQL through
 * the same read-only client Ponder's API uses (globalThis.PONDER_DATABASE.readonlyQB, which is what "ponder:api"
 * exports as `db`). A PGlite directory can be opened by one process only, so this is how a test reads the live
 * tables of a PGlite indexer; on Postgres tests connect directly. Enabled only when PONDER_TEST_SQL_PORT is set.
 */
import http from "node:http";

const port = Number(process.env.PONDER_TEST_SQL_PORT);

if (port > 0) {
  const run = async ({ sql, params, method }) => {
    const database = globalThis.PONDER_DATABASE;
    if (database === undefined)
      throw Object.assign(new Error("Ponder has not built its database yet"), { status: 503 });
    if (!/^\s*(select|with)\b/i.test(sql))
      throw Object.assign(new Error("read-only probe: SELECT only"), { status: 400 });
    const client = database.readonlyQB.raw.$client;
    const arrayMode = method === "all" || method === "values";
    // PGlite: query(text, params, { rowMode }); node-postgres Pool: query({ text, values, rowMode }).
    const result =
      typeof client.exec === "function"
        ? await client.query(sql, params, arrayMode ? { rowMode: "array" } : undefined)
        : await client.query({ text: sql, values: params, ...(arrayMode ? { rowMode: "array" } : {}) });
    return result.rows;
  };
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    try {
      const rows = await run(JSON.parse(body));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ rows }, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
    } catch (error) {
      res.writeHead(error.status ?? 500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: String(error?.message ?? error) }));
    }
  });
  server.listen(port, "127.0.0.1");
  // Never keeps the indexer alive on its own: Ponder's shutdown decides when the process ends.
  server.unref();
}
