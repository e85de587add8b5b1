/**
 * Our counters, rendered in the Prometheus text format (0.0.4) at /api/metrics.
 *
 * Why not Ponder's /metrics: Ponder 0.16 keeps its prom-client Registry private to its
 * MetricsService (ponder/dist/esm/internal/metrics.js: `this.registry = new prometheus.Registry()`,
 * not the default registry) and reserves the /metrics path, so nothing registered from api/ can appear
 * there. Ponder's /metrics still reports indexing and its own per-path HTTP histograms; scrape both.
 * Counters are all we need, so a small registry here avoids a direct prom-client dependency.
 */
import type { RpcOutcome } from "../chain/rpc";
import { createIndexLagGauges, type IndexLagGauges } from "./gauge";

type Labels = Record<string, string>;

/** A monotonically increasing counter family: one series per distinct label set. */
export class Counter {
  readonly #series = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = this.#key(labels);
    const series = this.#series.get(key);
    if (series) series.value += by;
    else this.#series.set(key, { labels: { ...labels }, value: by });
  }

  /** The current value of one series (0 when never incremented). */
  get(labels: Labels = {}): number {
    return this.#series.get(this.#key(labels))?.value ?? 0;
  }

  /** The series key: label values in labelNames order, NUL-separated. A loop, not map+join: inc runs per request. */
  #key(labels: Labels): string {
    const names = this.labelNames;
    let key = "";
    for (let i = 0; i < names.length; i++)
      key += i === 0 ? (labels[names[0]!] ?? "") : `\u0000${labels[names[i]!] ?? ""}`;
    return key;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.#series.values()) {
      const pairs = this.labelNames.map((n) => `${n}="${escapeLabelValue(labels[n] ?? "")}"`);
      lines.push(`${this.name}${pairs.length ? `{${pairs.join(",")}}` : ""} ${value}`);
    }
    return lines.join("\n");
  }
}

/** Request-duration buckets in seconds: a cached supply answer sits in the first, a slow node's read in the last. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** A histogram family (Prometheus cumulative buckets, _sum and _count): one series per distinct label set. */
export class Histogram {
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[] = DURATION_BUCKETS,
  ) {}

  /** Records one observation (seconds). */
  observe(labels: Labels, value: number): void {
    this.series(labels).observe(value);
  }

  /** One series, resolved once: a hot path keeps the handle instead of building a label key per request. */
  series(labels: Labels): { observe(value: number): void } {
    let key = "";
    for (let i = 0; i < this.labelNames.length; i++)
      key += `${i === 0 ? "" : "\u0000"}${labels[this.labelNames[i]!] ?? ""}`;
    let series = this.#series.get(key);
    if (series === undefined) {
      series = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    const s = series;
    const buckets = this.buckets;
    return {
      observe(value: number) {
        for (let i = 0; i < buckets.length; i++) if (value <= buckets[i]!) s.counts[i]!++;
        s.sum += value;
        s.count++;
      },
    };
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      const pairs = this.labelNames.map((n) => `${n}="${escapeLabelValue(labels[n] ?? "")}"`);
      const at = (extra: string) => `{${[...pairs, ...(extra ? [extra] : [])].join(",")}}`;
      for (let i = 0; i < this.buckets.length; i++)
        lines.push(`${this.name}_bucket${at(`le="${this.buckets[i]}"`)} ${counts[i]}`);
      lines.push(`${this.name}_bucket${at('le="+Inf"')} ${count}`);
      lines.push(`${this.name}_sum${pairs.length ? `{${pairs.join(",")}}` : ""} ${sum}`);
      lines.push(`${this.name}_count${pairs.length ? `{${pairs.join(",")}}` : ""} ${count}`);
    }
    return lines.join("\n");
  }
}

const escapeHelp = (s: string) => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const escapeLabelValue = (s: string) => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type Metrics = {
  /** Our routes: `route` is the matched pattern (never a raw path, so cardinality stays bounded). */
  httpRequests: Counter;
  /** How long our routes took, by the same labels: the rate / errors / duration an operator alerts on. */
  httpDuration: Histogram;
  /** Upstream JSON-RPC calls; `method` is bounded by the RPC read allowlist. */
  rpcCalls: Counter;
  /** Requests refused with 429, by limited prefix. */
  rateLimited: Counter;
  /** Requests decided by the in-process limiter because the shared (Redis) store failed. */
  rateLimitStoreFallbacks: Counter;
  /** Index lag gauges, set by state reads. */
  indexLag: IndexLagGauges;
  /** ve rankings computed (at most one per indexed block per process: api/index/veBoard.ts). */
  veBoardComputations: Counter;
  /** Pass as `onCall` to createRpcClient so every upstream call is counted. */
  onRpcCall: (method: string, outcome: RpcOutcome) => void;
  /** The whole registry in the Prometheus text format. */
  render(): string;
};

export function createMetrics(): Metrics {
  const httpRequests = new Counter(
    "api_http_requests_total",
    "HTTP requests answered by the API, by route pattern and status.",
    ["method", "route", "status"],
  );
  const httpDuration = new Histogram(
    "api_http_request_duration_seconds",
    "Time from a request's arrival to its answer, by route pattern and status.",
    ["method", "route", "status"],
  );
  const rpcCalls = new Counter("api_rpc_calls_total", "Upstream JSON-RPC calls by method and outcome.", [
    "method",
    "outcome",
  ]);
  const rateLimited = new Counter(
    "api_rate_limited_total",
    "Requests refused with 429 RATE_LIMITED, by route prefix.",
    ["prefix"],
  );
  const rateLimitStoreFallbacks = new Counter(
    "api_rate_limit_store_fallback_total",
    "Rate-limit decisions taken by the in-process limiter because the shared store (Redis) failed.",
    ["reason"],
  );
  const indexLag = createIndexLagGauges();
  const veBoardComputations = new Counter(
    "api_index_ve_board_computations_total",
    "ve rankings computed from the index; at most one per indexed block per process, shared by every reader.",
    [],
  );
  const all = [
    veBoardComputations,
    httpRequests,
    httpDuration,
    rpcCalls,
    rateLimited,
    rateLimitStoreFallbacks,
    indexLag.indexedBlock,
    indexLag.chainHead,
    indexLag.lagBlocks,
    indexLag.observedAt,
  ];
  return {
    indexLag,
    veBoardComputations,
    httpRequests,
    httpDuration,
    rpcCalls,
    rateLimited,
    rateLimitStoreFallbacks,
    onRpcCall: (method, outcome) => rpcCalls.inc({ method, outcome }),
    render: () => `${all.map((c) => c.render()).join("\n")}\n`,
  };
}
