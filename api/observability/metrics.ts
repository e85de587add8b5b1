/**
 * Our metrics, rendered in the Prometheus text format (0.0.4) at /api/metrics (or on METRICS_PORT).
 *
 * Why not Ponder's /metrics: Ponder (0.16, 0.17) keeps its prom-client Registry private to its
 * MetricsService (ponder/dist/esm/internal/metrics.js: `this.registry = new prometheus.Registry()`,
 * not the default registry) and reserves the /metrics path, so nothing registered from api/ can appear
 * there. Ponder's /metrics still reports indexing and its own per-path HTTP histograms; scrape both.
 *
 * Two kinds of series: those counted per request (HTTP, RPC, rate limit) are our own small counters and
 * histograms (api/observability/counter.ts, histogram.ts), cheap enough for a cached supply hit; everything
 * else is read at scrape time — caches, the index database's pool, open connections, and prom-client's
 * default process metrics (api/observability/processMetrics.ts) — so no prom-client object is on a
 * request's path.
 */

import { buildInfo } from "../buildInfo";
import type { RpcOutcome } from "../chain/rpc";
import { CacheMetrics } from "./cacheMetrics";
import { OpenConnectionMetrics } from "./connectionMetrics";
import { Counter } from "./counter";
import { renderFamily } from "./exposition";
import { createIndexLagGauges, Gauge, type IndexLagGauges } from "./gauge";
import { Histogram } from "./histogram";
import { IndexDbMetrics } from "./indexDbMetrics";
import { processMetrics } from "./processMetrics";
import { createStreamMetrics, type StreamMetrics } from "./streamMetrics";
import { createWebhookMetrics, type WebhookMetrics } from "./webhookMetrics";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type Metrics = {
  /** Our routes: `route` is the matched pattern (never a raw path, so cardinality stays bounded). */
  httpRequests: Counter;
  /** How long our routes took, by the same labels: the rate / errors / duration an operator alerts on. */
  httpDuration: Histogram;
  /** Upstream JSON-RPC calls; `method` is bounded by the RPC read allowlist. */
  rpcCalls: Counter;
  /**
   * Work cut short because the request it served was abandoned (its client hung up, or its deadline passed): RPC
   * calls, simulations (eth_simulateV1) and index queries cancelled in flight or never started. `kind`: rpc,
   * simulation, db.
   */
  abortedWork: Counter;
  /** Requests refused with 429, by limited prefix. */
  rateLimited: Counter;
  /** Requests decided by the in-process limiter because the shared (Redis) store failed. */
  rateLimitStoreFallbacks: Counter;
  /** Supply reads that found the node's head behind (api/supply/router.ts), by reason: `behind`, `head_age`. */
  supplyNodeLagging: Counter;
  /** Index lag gauges, set by state reads. */
  indexLag: IndexLagGauges;
  /** 1 while the index's rows are on a branch the chain replaced (api/read/branchCheck.ts), else 0. */
  indexReplacedBranch: Gauge;
  /** 1 while the index's checkpoint names another chain than NETWORK's (api/read/indexChain.ts), else 0. */
  indexOtherChain: Gauge;
  /** Whether the node answers eth_simulateV1 (api/chain/simulate.ts simulationSupported; the app samples it). */
  simulationSupported: Gauge;
  /** What the API server's connection limits do (createConnectionMetrics). */
  connections: ConnectionMetrics;
  /** ve rankings computed (at most one per indexed block per process: api/read/veBoard.ts). */
  veBoardComputations: Counter;
  veBoardDerivations: Counter;
  veBoardTakenAhead: Counter;
  veBoardPatchedAhead: Counter;
  headPins: Counter;
  quietBlocks: Counter;
  veBoardAnchors: Counter;
  /** Whole-index computations (api/read/computeGate.ts): running, waiting, and refused by lane and why. */
  indexComputations: { inFlight: Gauge; queued: Gauge; refused: Counter };
  /** Duration board rankings computed (one per block, board and window per process, or for all with Redis). */
  durationBoardComputations: Counter;
  durationBoardDerivations: Counter;
  durationBoardAnchors: Counter;
  /** A new head's ve board or stats asked for ahead of its first reader (api/read/computeAhead.ts), by outcome. */
  computedAhead: Counter;
  /** GraphQL answers by how they were made: `own` execution, or `shared` with an identical request's. */
  graphqlAnswers: Counter;
  /** Requests that waited for their `minBlock`, by what they waited on and how the wait ended (api/read/headWatch.ts). */
  minBlockWaits: Counter;
  /** GraphQL requests with a new document refused 503 COMPILE_QUEUE_FULL (api/graphql/compileGate.ts). */
  graphqlCompilesRefused: Counter;
  /** GraphQL documents run on their first request and not cached (the doorkeeper, api/graphql/documentCache.ts). */
  graphqlDocumentsDeclined: Counter;
  /** Pass as `onCall` to createRpcClient so every upstream call is counted. */
  onRpcCall: (method: string, outcome: RpcOutcome) => void;
  /** Hits, misses and entries of every cache that registers itself. */
  caches: CacheMetrics;
  /** The index database: its pool (API process) and statement durations. */
  indexDb: IndexDbMetrics;
  /** Open connections of the HTTP listeners the entry point watches. */
  openConnections: OpenConnectionMetrics;
  /** The index's event streams and the signal behind them (api/observability/streamMetrics.ts). */
  streams: StreamMetrics;
  /** The webhooks' attempts and outbox (api/observability/webhookMetrics.ts). */
  webhooks: WebhookMetrics;
  /** Everything in the Prometheus text format, prom-client's process metrics last. */
  render(): Promise<string>;
  /** Pass as `onCancelled` to createRpcClient: an upstream call a request's deadline or hang-up stopped. */
  onRpcCancelled: (method: string) => void;
};

export function createMetrics(): Metrics {
  // prom-client counts CPU time from when its metrics are made: make them with the first app, at start-up.
  processMetrics();
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
  const rpcCalls = new Counter(
    "api_rpc_calls_total",
    "Upstream JSON-RPC calls by method and outcome: ok, revert (the contract refused: an answer), invalid (an " +
      "answer that is not what was asked for), rpc (any other JSON-RPC error), http, timeout, aborted, unreachable.",
    ["method", "outcome"],
  );
  const abortedWork = new Counter(
    "api_aborted_work_total",
    "Upstream work cancelled because its request was abandoned (client hung up or deadline passed), by kind.",
    ["kind"],
  );
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
  const supplyNodeLagging = new Counter(
    "api_supply_node_lagging_total",
    "Times the supply figures' node was found lagging, by reason: behind (its head below the block of the figures " +
      "served: never published) or head_age (its head older than SUPPLY_MAX_HEAD_AGE_SECONDS).",
    ["reason"],
  );
  const indexLag = createIndexLagGauges();
  const indexReplacedBranch = new Gauge(
    "api_index_replaced_branch",
    "1 while the index's rows are on a branch the chain replaced (a reorg below Ponder's finalized checkpoint): " +
      'every index answer is refused 503 INDEX_UNAVAILABLE "replaced branch" until it is re-indexed; else 0.',
  );
  indexReplacedBranch.set(0);
  const indexOtherChain = new Gauge(
    "api_index_other_chain",
    "1 while the index's statements find it built for another chain than NETWORK's (Ponder's checkpoint names it): " +
      'every index answer is refused 503 INDEX_UNAVAILABLE "another chain" and /ready is 503; else 0.',
  );
  indexOtherChain.set(0);
  const simulationSupported = new Gauge(
    "api_simulation_supported",
    "1 when the node's last answer to eth_simulateV1 was a simulation; 0 after it answered -32601/-32004 (method not " +
      "found): prepares are answered unsimulated and requireSimulationOk is 503 until a probe, at most one a minute, " +
      "finds it; absent before the node answered a simulation.",
  );
  const veBoardComputations = new Counter(
    "api_index_ve_board_computations_total",
    "ve rankings this process computed whole from the index (the statement over every lock: a block far from the " +
      "anchor), and reads of the anchor's live locks a reader waited for; none for one shared through Redis.",
    [],
  );
  const veBoardDerivations = new Counter(
    "api_index_ve_board_derivations_total",
    "ve rankings a reader's block needed that this process derived from the anchor: one statement over the locks " +
      "changed between the two blocks, then a pass over the anchor's locks here (none for changes shared through Redis).",
    [],
  );
  const veBoardTakenAhead = new Counter(
    "api_index_ve_board_taken_ahead_total",
    "Head blocks whose ve ranking (with its stats and first page) this process had made ahead, between heads, and " +
      "took as it was: the block changed no lock and came at the expected time. The rest of the derivations made theirs.",
    [],
  );
  const veBoardPatchedAhead = new Counter(
    "api_index_ve_board_patched_ahead_total",
    "Head blocks whose own events changed a few locks and whose ve ranking this process made from the one made ahead " +
      "for them, with those locks' owners summed again (no pass over every live lock at the commit).",
    [],
  );
  const headPins = new Counter(
    "api_index_head_pins_total",
    "Requests naming no block for an answer computed once per block (the ve board, its rank lookups, the stats, the " +
      "duration boards, GraphQL), by how their head was learnt: notified (the commit's NOTIFY, no statement) or probed.",
    ["how"],
  );
  const quietBlocks = new Counter(
    "api_index_ve_quiet_blocks_total",
    "Head blocks whose changed locks this process made without waiting for the statement: a block that wrote no lock " +
      "event (the commit's NOTIFY said so) from the head before (reused), a block whose few lock events the NOTIFY " +
      "carried from the head before with them applied (carried); and the statement's check after: confirmed, or " +
      "differed (what was made of the block forgotten, the count not trusted again; should stay 0).",
    ["outcome"],
  );
  const veBoardAnchors = new Counter(
    "api_index_ve_board_anchor_moves_total",
    "Reads this process made in the background to move the ve board's anchor to a finalized block (the locks changed " +
      "since, or every live lock when far behind; none for one shared through Redis).",
    [],
  );
  const indexComputations = {
    inFlight: new Gauge(
      "api_index_computations_in_flight",
      "Whole-index computations (a block's ve ranking or stats) running now, both lanes (head and past blocks).",
    ),
    queued: new Gauge("api_index_computations_queued", "Whole-index computations waiting for a slot now."),
    refused: new Counter(
      "api_index_computations_refused_total",
      "Whole-index computations refused with 503 INDEX_UNAVAILABLE busy, by lane (head, past) and why (queue full, " +
        "wait expired).",
      ["lane", "why"],
    ),
  };
  const computedAhead = new Counter(
    "api_index_computed_ahead_total",
    "A new head's whole-index answer (answer: board, stats) asked for as the index committed it, ahead of its first " +
      "reader, while it is read at the head, with the pages read of it there; by outcome (ok; error: its first reader " +
      "computes it, or makes its page).",
    ["answer", "outcome"],
  );
  const durationBoardComputations = new Counter(
    "api_index_duration_board_computations_total",
    "Official duration board rankings a reader's block needed that this process computed whole from the index (no " +
      "anchor yet, or a block far from it; none for a ranking another replica computed and shared through Redis).",
    [],
  );
  const durationBoardDerivations = new Counter(
    "api_index_duration_board_derivations_total",
    "Official duration board rankings a reader's block needed that this process derived from the board's anchor: " +
      "one statement over the accounts that changed between the two blocks (none for one shared through Redis).",
    [],
  );
  const durationBoardAnchors = new Counter(
    "api_index_duration_board_anchor_moves_total",
    "Rankings this process made in the background to set or move a duration board's anchor to a finalized block " +
      "(computed whole the first time, derived after; none for one shared through Redis).",
    [],
  );
  const graphqlAnswers = new Counter(
    "api_graphql_answers_total",
    "GraphQL answers by how they were made: own (an execution of its own) or shared (the answer of an identical " +
      "request already executing, api/graphql/endpoint.ts).",
    ["made"],
  );
  const graphqlCompilesRefused = new Counter(
    "api_graphql_compiles_refused_total",
    "GraphQL requests with a new document answered 503 COMPILE_QUEUE_FULL: no compile permit within 1 s, or the " +
      "queue for one was full (api/graphql/compileGate.ts).",
    [],
  );
  const graphqlDocumentsDeclined = new Counter(
    "api_graphql_documents_declined_total",
    "GraphQL documents (or texts that failed to parse) run on their first request and not cached: a document is kept " +
      "from its second request on (api/graphql/documentCache.ts, the doorkeeper).",
    [],
  );
  const minBlockWaits = new Counter(
    "api_min_block_waits_total",
    "Requests whose minBlock was ahead of the index (of=index) or the node (of=node), by how the wait ended: " +
      "reached, timeout, full (too many waiting: answered at once), cancelled (deadline or hang-up).",
    ["of", "outcome"],
  );
  const connections = createConnectionMetrics();
  const streams = createStreamMetrics();
  const webhooks = createWebhookMetrics();
  const all = [
    minBlockWaits,
    graphqlCompilesRefused,
    graphqlDocumentsDeclined,
    ...streams.all,
    ...webhooks.all,
    ...connections.all,
    veBoardComputations,
    veBoardDerivations,
    veBoardTakenAhead,
    veBoardPatchedAhead,
    headPins,
    quietBlocks,
    veBoardAnchors,
    indexComputations.inFlight,
    indexComputations.queued,
    indexComputations.refused,
    durationBoardComputations,
    durationBoardDerivations,
    durationBoardAnchors,
    computedAhead,
    graphqlAnswers,
    httpRequests,
    httpDuration,
    rpcCalls,
    abortedWork,
    rateLimited,
    rateLimitStoreFallbacks,
    supplyNodeLagging,
    indexLag.indexedBlock,
    indexLag.chainHead,
    indexLag.lagBlocks,
    indexLag.observedAt,
    indexReplacedBranch,
    indexOtherChain,
    simulationSupported,
  ];
  const caches = new CacheMetrics();
  const indexDb = new IndexDbMetrics();
  const openConnections = new OpenConnectionMetrics();
  return {
    indexLag,
    indexReplacedBranch,
    indexOtherChain,
    simulationSupported,
    minBlockWaits,
    veBoardComputations,
    veBoardDerivations,
    veBoardTakenAhead,
    veBoardPatchedAhead,
    headPins,
    quietBlocks,
    veBoardAnchors,
    indexComputations,
    durationBoardComputations,
    durationBoardDerivations,
    durationBoardAnchors,
    computedAhead,
    graphqlAnswers,
    graphqlCompilesRefused,
    graphqlDocumentsDeclined,
    httpRequests,
    httpDuration,
    rpcCalls,
    rateLimited,
    rateLimitStoreFallbacks,
    supplyNodeLagging,
    caches,
    indexDb,
    openConnections,
    connections,
    streams,
    webhooks,
    abortedWork,
    onRpcCall: (method, outcome) => rpcCalls.inc({ method, outcome }),
    onRpcCancelled: (method) => abortedWork.inc({ kind: method === "eth_simulateV1" ? "simulation" : "rpc" }),
    render: async () => {
      const ours = [
        renderBuildInfo(),
        ...all.map((c) => c.render()),
        caches.render(),
        indexDb.render(),
        await openConnections.render(),
      ];
      // prom-client's text ends with a newline of its own.
      return `${ours.join("\n")}\n${await processMetrics().metrics()}`;
    },
  };
}

/** `api_build_info{version,commit,node} 1`: what runs, as Prometheus joins it onto other series (`* on(instance)`). */
function renderBuildInfo(): string {
  const { version, commit, node } = buildInfo();
  return renderFamily(
    "api_build_info",
    "The release (package.json's version), the git commit it was built from (unknown when the build could not " +
      "tell; -dirty when the tree differed) and Node's version; always 1.",
    "gauge",
    [{ labels: { version, commit, node }, value: 1 }],
  );
}

/**
 * What the API server's connection limits do (api/server/connectionLimit.ts, api/server/connectionGuard.ts,
 * api/server/protocolErrors.ts): connections open, answer bytes waiting for slow readers, and every
 * connection or request refused before it reached a route, by reason.
 */
export type ConnectionMetrics = {
  /** Connections refused on arrival (answered 429, api/server/refusal.ts): `reason` per_ip (MAX_CONNECTIONS_PER_IP) or total (MAX_CONNECTIONS). */
  refused: Counter;
  /**
   * Open connections the server closed: `reason` pipelined (too many requests queued behind an unsent answer),
   * pending_connection / pending_ip / pending_total (unsent answer bytes over PENDING_RESPONSE_BYTES_*),
   * send_timeout (no progress for SEND_TIMEOUT_MS).
   */
  shed: Counter;
  /** Requests the HTTP layer rejects before any route, answered with the envelope: `reason` says why. */
  protocolErrors: Counter;
  /** Requests held for their Retry-After: their connection had been refused twice in a row (api/server/refusalHold.ts). */
  held: Counter;
  pendingBytes: Gauge;
  all: readonly { render(): string }[];
};

function createConnectionMetrics(): ConnectionMetrics {
  const refused = new Counter(
    "api_connections_refused_total",
    "Connections refused as they arrived (answered 429, then closed), over the per-IP or the total connection cap.",
    ["reason"],
  );
  const shed = new Counter(
    "api_connections_shed_total",
    "Open connections the server closed to bound what it holds for them, by reason.",
    ["reason"],
  );
  const protocolErrors = new Counter(
    "api_http_protocol_errors_total",
    "Requests rejected by the HTTP layer before any route (framing, Host, target, Expect, CONNECT), by reason.",
    ["reason"],
  );
  const held = new Counter(
    "api_requests_held_total",
    "Requests held until their connection's last Retry-After had passed: it had been refused twice in a row.",
    [],
  );
  const pendingBytes = new Gauge("api_pending_response_bytes", "Bytes of answers written, not yet taken by clients.");
  pendingBytes.set(0);
  return {
    refused,
    shed,
    protocolErrors,
    held,
    pendingBytes,
    all: [refused, shed, protocolErrors, held, pendingBytes],
  };
}
