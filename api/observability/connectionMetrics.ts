import type { Server } from "node:net";
import { renderFamily } from "./exposition";

/**
 * Open TCP connections of the process's HTTP listeners, asked of each server at scrape time
 * (server.getConnections: Node's own count, idle keep-alive connections included), by listener:
 * "api" (the public port) and "metrics" (METRICS_PORT, when set).
 */
export class OpenConnectionMetrics {
  readonly #servers = new Map<string, Server>();

  watch(listener: string, server: Server): void {
    this.#servers.set(listener, server);
  }

  async render(): Promise<string> {
    const samples = await Promise.all(
      [...this.#servers].map(
        ([listener, server]) =>
          new Promise<{ labels: { listener: string }; value: number } | null>((resolve) =>
            server.getConnections((error, count) => resolve(error ? null : { labels: { listener }, value: count })),
          ),
      ),
    );
    return renderFamily(
      "api_http_open_connections",
      "TCP connections open on the API's HTTP listeners now, idle keep-alive ones included, by listener.",
      "gauge",
      samples.filter((s) => s !== null),
    );
  }
}
