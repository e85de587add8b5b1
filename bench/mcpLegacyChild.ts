/**
 * bench/mcp-eras.ts's second process: the real app (createApp over the configured index, as the API process builds
 * it) with two extra MCP endpoints in front, the same in every way but who answers the 2025 era: /sdk1/mcp this
 * service's path (api/mcp/server.ts over SDK 1.x, what /api/mcp runs), /sdk2/mcp SDK v2's stateless fallback.
 * Both call their tools through the same app. Not a test helper: it exists to be measured.
 */
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { appDeps, createApp } from "../api/app";
import { createClientIpResolver } from "../api/http/clientIp";
import type { AppEnv } from "../api/http/env";
import { withInProcessClientIp } from "../api/mcp/inProcess";
import { mcpEndpoint } from "../api/mcp/server";
import { V1_OPERATIONS } from "../api/routes";
import { openIndexDatabase } from "../api/server/indexDatabase";
import { createServiceDeps } from "../api/server/process";

const input = await createServiceDeps({});
const { config } = input;
// The index as the API process opens it (api/server/main.ts).
const {
  readiness,
  close: _close,
  ...source
} = openIndexDatabase({
  url: config.database.url!,
  schema: (config.database.viewsSchema ?? config.database.schema)!,
});
const deps = appDeps({ ...input, index: { ...source, shared: input.index?.shared ?? null }, readiness });
const app = createApp(deps);
const clientIp = createClientIpResolver({
  trustedProxies: deps.config.trustedProxies,
  peerAddress: withInProcessClientIp(),
});
const rateLimit = { limiter: deps.limiter, policy: deps.config.rateLimit, clientIp, metrics: deps.metrics };
const front = new Hono<AppEnv>();
for (const via of ["sdk1", "sdk2"] as const) {
  front.post(`/${via}/mcp`, mcpEndpoint({ app, operations: V1_OPERATIONS, clientIp, rateLimit, legacyVia: via }));
}
front.all("*", (c) => app.fetch(c.req.raw, c.env));
front.onError((error, c) => c.json({ ok: false, message: String(error) }, 500));
const port = Number(process.env.PORT);
serve({ fetch: front.fetch, port, hostname: "127.0.0.1" }, () => {
  process.stdout.write(`${JSON.stringify({ listening: { port, host: "127.0.0.1" } })}\n`);
});
