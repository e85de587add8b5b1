/** A bare Hono route on @hono/node-server in a process of its own: the baseline of bench/supply-hit.ts. */
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const app = new Hono();
app.get("/", (c) => c.text("10000000.00"));
serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(process.env.PORT) }, (info) => {
  process.stdout.write(`${JSON.stringify({ listening: { port: info.port } })}\n`);
});
