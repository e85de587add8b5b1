// Ponder's HTTP entry: the Hono app of api/, given Ponder's read-only db as the lock store.
// Served by `ponder start` (indexer + API) and `ponder serve` (API-only replicas).
import { db } from "ponder:api";
import { createApp } from "../../api/app";
import { createLockStore } from "../../api/locks/store";
import { createServiceDeps } from "../../api/service";

const deps = await createServiceDeps({ locks: createLockStore({ db }) });

export default createApp(deps);
