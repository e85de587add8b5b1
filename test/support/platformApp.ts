import { createApp } from "../../api/app";
import { type AppConfig, loadConfig } from "../../api/config";
import type { AppDepsInput } from "../../api/deps";
import { createLogger } from "../../api/observability/logger";
import { createMetrics } from "../../api/observability/metrics";

/**
 * Builds the real app (createApp with its real routes) for the platform tests. The socket peer is
 * supplied the way @hono/node-server supplies it — as `env.incoming.socket.remoteAddress` — so the
 * default peer source is the one under test.
 */

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A base-network config without an RPC: the limited routes answer fast (errors), nothing leaves the host. */
export function platformConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig({ NETWORK: "base", ...env });
}

export type CapturedLogs = { lines: Record<string, unknown>[]; raw: string[] };

export function platformApp(over: Partial<AppDepsInput> & { env?: Record<string, string> } = {}) {
  const { env, ...rest } = over;
  const logs: CapturedLogs = { lines: [], raw: [] };
  const logger = createLogger({
    level: "debug",
    write: (l) => {
      logs.raw.push(l);
      logs.lines.push(JSON.parse(l));
    },
  });
  const metrics = rest.metrics ?? createMetrics();
  const app = createApp({ config: platformConfig(env), rpc: null, logger, metrics, ...rest });
  /** One request as if it came over a socket from `peer`. */
  const request = (path: string, init: RequestInit & { peer?: string } = {}) => {
    const { peer = "203.0.113.10", ...rInit } = init;
    return app.request(path, rInit, { incoming: { socket: { remoteAddress: peer } } });
  };
  return { app, request, logs, metrics };
}

/** Fires `n` requests at once and tallies the statuses. */
export async function burst(n: number, send: (i: number) => Response | Promise<Response>) {
  const responses = await Promise.all(Array.from({ length: n }, (_, i) => send(i)));
  const byStatus = new Map<number, number>();
  for (const r of responses) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
  const limited = responses.filter((r) => r.status === 429);
  return { responses, limited, admitted: responses.length - limited.length, byStatus };
}
