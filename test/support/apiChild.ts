/**
 * The API server without its connection guard, for the one test that shows what the guard prevents
 * (test/server/connectionGuard.test.ts). Every other test runs the real entry, api/server/main.ts.
 */
import { createApp } from "../../api/app";
import { createServiceDeps } from "../../api/server/process";
import { startApiServer } from "../../api/server/server";

const deps = await createServiceDeps({});
const api = await startApiServer(createApp(deps), { port: deps.config.port ?? 0, hostname: "127.0.0.1", guard: false });
process.stdout.write(`${JSON.stringify({ listening: { port: api.port, host: "127.0.0.1" } })}\n`);
process.on("SIGTERM", () => api.close(0).then(() => process.exit(0)));
