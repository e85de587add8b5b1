#!/usr/bin/env node
// The container's HEALTHCHECK: exit 0 when GET /ready on this host answers 200 within 3 s, else 1. A script
// (not curl: the slim image has none) that reads the same PORT the process listens on. As in the configuration
// (api/config.ts), values are trimmed and an empty one counts as unset: `HEALTHCHECK_PORT=` from an env file
// falls back to PORT, then 42069.
// `node scripts/healthcheck.mjs /health` asks /health instead: the process is up, whatever its readiness. compose.yaml
// gives the indexer that one, since Ponder's /ready is 503 for the whole historical backfill (hours on Base), and a
// platform that acts on Docker's health (Swarm, autoheal, ECS) would otherwise kill the indexer mid-backfill.
const port = process.env.HEALTHCHECK_PORT?.trim() || process.env.PORT?.trim() || "42069";
const probe = process.argv[2] ?? "/ready";
if (probe !== "/ready" && probe !== "/health") {
  process.stderr.write(`healthcheck: asks /ready (the default) or /health, not ${probe}\n`);
  process.exit(2);
}
const url = `http://127.0.0.1:${port}${probe}`;
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  await res.body?.cancel();
  process.exit(res.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
