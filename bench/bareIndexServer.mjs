// The bare baseline of bench/index-http.ts: node:http and pg, no framework, in a process of its own. For each path it
// was given (PLAN_FILE: { path: { statements: [{ sql, params, name }], body } }), it sends the same statements the API
// process sent for that path (recorded from the read model itself: bench/recordedIndex.ts), prepared under the same
// names, on a pool of the same size and session settings, one after another as the route does; then it answers the
// API's own answer for that path (parsed once at start, serialised per request, so the bytes and the JSON work match).
// Whatever a route does beyond its statements and its JSON — parsing, routing, middleware, checks — is the
// difference the bench measures. Prints {"listening":{"port":N}} once up.
import { readFileSync } from "node:fs";
import http from "node:http";
import pg from "pg";

const plan = JSON.parse(readFileSync(process.env.PLAN_FILE, "utf8"));
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 10),
  options: process.env.PG_OPTIONS,
});
const entries = new Map(
  Object.entries(plan).map(([path, p]) => [
    path,
    {
      statements: p.statements.map((s) =>
        s.name ? { name: s.name, text: s.sql, values: s.params } : { text: s.sql, values: s.params },
      ),
      body: JSON.parse(p.body),
    },
  ]),
);

const server = http.createServer(async (req, res) => {
  const entry = entries.get(req.url);
  if (!entry) {
    res.writeHead(404).end();
    return;
  }
  try {
    for (const statement of entry.statements) await pool.query(statement);
    const text = JSON.stringify(entry.body);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  } catch (error) {
    res.writeHead(500).end(String(error));
  }
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ listening: { port: server.address().port } })}\n`);
});
// A clean exit on the bench's SIGTERM, so `--cpu-prof` (PROFILE_DIR) writes its profile.
process.on("SIGTERM", () => process.exit(0));
