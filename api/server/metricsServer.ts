/**
 * The metrics on a listener of their own (METRICS_PORT, at METRICS_HOST: 127.0.0.1 by default), for a scraper
 * beside the process, so the public port need not serve them at all (it answers /api/metrics with 404 then).
 * It serves GET (and HEAD) /metrics and nothing else, in the service's error envelope; METRICS_TOKEN applies
 * here too. Both entry points (api/server/main.ts, and src/api/index.ts with API_PORT) start it through
 * serveMetrics, which also has the open-connection gauge watch their API listener.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { AppConfig } from "../config";
import { type ApiError, InternalError, MethodNotAllowedError, NotFoundError, UnauthorizedError } from "../http/errors";
import { metricsAccess } from "../http/metricsAccess";
import { type Metrics, PROMETHEUS_CONTENT_TYPE } from "../observability/metrics";
import { SERVER_LIMITS } from "./server";

/** Where the scraper asks, as exporters conventionally serve it. */
export const METRICS_LISTENER_PATH = "/metrics";

export type MetricsServer = { server: Server; port: number; host: string; close(): Promise<void> };

export function startMetricsServer(o: {
  metrics: Metrics;
  port: number;
  host: string;
  token: string | null;
}): Promise<MetricsServer> {
  const allowed = metricsAccess(o.token);
  const send = (res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string>) => {
    res.writeHead(status, {
      "content-type": type,
      "cache-control": "no-store",
      "content-length": Buffer.byteLength(body),
      ...headers,
    });
    res.end(res.req.method === "HEAD" ? undefined : body);
  };
  const fail = (res: ServerResponse, error: ApiError, headers: Record<string, string> = {}) =>
    send(res, error.status, "application/json; charset=UTF-8", JSON.stringify(error.toEnvelope()), headers);

  const server = createServer({ maxHeaderSize: SERVER_LIMITS.maxHeaderSize }, (req, res) => {
    const path = (req.url ?? "").split("?", 1)[0];
    if (path !== METRICS_LISTENER_PATH) return fail(res, new NotFoundError());
    if (req.method !== "GET" && req.method !== "HEAD") {
      return fail(res, new MethodNotAllowedError(req.method ?? "?", ["GET", "HEAD"]), { allow: "GET, HEAD" });
    }
    if (allowed && !allowed(req.headers.authorization)) {
      const error = new UnauthorizedError();
      return fail(res, error, { "www-authenticate": error.challenge });
    }
    o.metrics.render().then(
      (text) => send(res, 200, PROMETHEUS_CONTENT_TYPE, text, {}),
      () => fail(res, new InternalError()),
    );
  });
  server.headersTimeout = SERVER_LIMITS.headersTimeoutMs;
  server.requestTimeout = SERVER_LIMITS.requestTimeoutMs;
  server.on("clientError", (_error, socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      const { port } = server.address() as AddressInfo;
      resolve({
        server,
        port,
        host: o.host,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/**
 * What an entry point does once its API listener is up: the open-connection gauge watches it, and with
 * METRICS_PORT the metrics listener starts (null otherwise).
 */
export async function serveMetrics(o: {
  config: AppConfig;
  metrics: Metrics;
  apiServer: Server;
}): Promise<MetricsServer | null> {
  o.metrics.openConnections.watch("api", o.apiServer);
  const { port, host, token } = o.config.metrics;
  if (port === null) return null;
  const listener = await startMetricsServer({ metrics: o.metrics, port, host, token });
  o.metrics.openConnections.watch("metrics", listener.server);
  return listener;
}
