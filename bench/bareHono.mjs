// The start-up baseline of bench/lean-process.ts: a bare Hono route on @hono/node-server, plain JavaScript (no transpiler),
// in a process of its own. Prints one JSON line when it listens.
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const app = new Hono();
app.get("/", (c) => c.text("ok"));
serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(process.env.PORT) }, (info) => {
  process.stdout.write(`${JSON.stringify({ listening: { port: info.port } })}\n`);
});
