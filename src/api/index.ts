// Ponder's HTTP entry: the Hono app of api/, given Ponder's read-only db as the lock store.
// Served by `ponder start` (indexer + API) and `ponder serve` (API-only replicas).
import { Hono } from "hono";
import { db } from "ponder:api";
import { createApp } from "../../api/app";
import { createLockStore } from "../../api/locks/store";
import { createServiceDeps } from "../../api/service";

const api = createApp(await createServiceDeps({ locks: createLockStore({ db }) }));

// Ponder mounts this app with .route("/"), which would bypass our 404 and error handlers; handing
// every request to `api.fetch` keeps the whole envelope behaviour (c.env carries the socket peer).
const app = new Hono();
app.all("*", (c) => api.fetch(c.req.raw, c.env));

export default app;
