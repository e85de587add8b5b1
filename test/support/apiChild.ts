/**
 * The API on @hono/node-server in a process of its own, for tests that must not share an event loop
 * with their load generator: config from the environment like production (NETWORK, MANIFEST_FILE,
 * RPC_URL, …), the connection guard on, 127.0.0.1 on a free port. Prints `{"port":N}` when listening.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createApp } from "../../api/app";
import { guardConnections } from "../../api/http/connectionGuard";
import { createServiceDeps } from "../../api/service";

const deps = await createServiceDeps({ locks: null });
const server = serve({ fetch: createApp(deps).fetch, hostname: "127.0.0.1", port: 0 }, (info: AddressInfo) => {
  process.stdout.write(`${JSON.stringify({ port: info.port })}\n`);
}) as Server;
if (process.env.CONNECTION_GUARD !== "off") guardConnections(server);
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
