/**
 * A JSON-RPC fault proxy for tests: sits on 127.0.0.1 (free port) in front of a real node (anvil) and
 * forwards everything unchanged until told to misbehave. It counts what it receives, so tests can
 * assert how many upstream reads the service made.
 *
 * Faults apply to the calls their `match` selects (all calls when `match` is absent):
 * - `down`, `delay`, `http`, `body` act on the whole HTTP round trip (a batch is hit when any member matches);
 * - `rpcError`, `result` replace the answer of each matching member only; the other members of a batch
 *   still go to the upstream node, in one round trip.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** `batch`: whether the call came as a member of a batch. */
export type RpcCallMatcher = (method: string, params: unknown[], batch: boolean) => boolean;

export type RpcFault = (
  | /** The connection is destroyed without an answer (the client sees a reset / transport error). */
  { kind: "down" }
  /** The answer is held back `ms` milliseconds, then forwarded. */
  | { kind: "delay"; ms: number }
  /** The round trip answers this HTTP status with a short non-JSON body. */
  | { kind: "http"; status: number }
  /** Matching calls get a JSON-RPC error object instead of a result. */
  | { kind: "rpcError"; code?: number; message?: string; data?: unknown }
  /**
   * Matching calls get `result: value` (any JSON: null, "0x", short, long, non-hex, objects…), under the call's
   * own id, or under `id` when given (another request's answer: a desynchronised connection, a mixed-up cache).
   */
  | { kind: "result"; value: unknown; id?: unknown }
  /**
   * Matching calls are answered by the node as usual, and the batch answer gets one member more: `result: value`
   * under `id`, an id the client did not send (another request's answer mixed into this one by a proxy).
   */
  | { kind: "extraMember"; value: unknown; id: unknown }
  /** The round trip answers HTTP 200 with this body as it is (an HTML page, a truncated JSON text…). */
  | { kind: "body"; text: string; contentType?: string }
) & { match?: RpcCallMatcher };

export type RpcProxyCall = {
  method: string;
  params: unknown[];
  /** Index of the HTTP round trip that carried it (1-based). */
  roundTrip: number;
  batch: boolean;
  /** The fault kind applied to this call, if any. */
  fault: RpcFault["kind"] | null;
};

export type RpcProxy = {
  url: string;
  /** Replaces the active fault(s); null restores plain forwarding. Several faults: first match wins. */
  setFault(fault: RpcFault | readonly RpcFault[] | null): void;
  /** JSON-RPC requests received (batch members counted one by one), optionally only for one method. */
  count(method?: string): number;
  /** HTTP requests received (a batch is one round trip). */
  roundTrips(): number;
  /** Round trips whose client closed the connection before the proxy answered (a cancelled call). */
  abandoned(): number;
  /** Every call received, in order. */
  readonly calls: readonly RpcProxyCall[];
  /** Forwards to another node from now on (a load balancer switching nodes); null: back to the first. */
  setUpstream(url: string | null): void;
  /** Clears the log and counters (not the fault). */
  reset(): void;
  stop(): Promise<void>;
};

type JsonRpcRequest = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };

/** The 4-byte selector of an eth_call (for `match`), or null for any other call. */
export function ethCallSelector(method: string, params: unknown[]): string | null {
  if (method !== "eth_call") return null;
  const tx = params[0] as { data?: unknown; input?: unknown } | undefined;
  const data = typeof tx?.data === "string" ? tx.data : typeof tx?.input === "string" ? tx.input : null;
  return data ? data.slice(0, 10).toLowerCase() : null;
}

export async function startRpcProxy(options: { upstream: string }): Promise<RpcProxy> {
  let faults: readonly RpcFault[] = [];
  const calls: RpcProxyCall[] = [];
  let trips = 0;
  let abandoned = 0;
  const sockets = new Set<Socket>();
  const downed = new WeakSet<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const faultFor = (method: string, params: unknown[], batch: boolean): RpcFault | null =>
    faults.find((f) => !f.match || f.match(method, params, batch)) ?? null;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  let upstream = options.upstream;
  async function forward(body: string): Promise<{ status: number; text: string; contentType: string }> {
    const res = await fetch(upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    return {
      status: res.status,
      text: await res.text(),
      contentType: res.headers.get("content-type") ?? "application/json",
    };
  }

  function replacement(fault: RpcFault, id: unknown): unknown {
    if (fault.kind === "result") return { jsonrpc: "2.0", id: "id" in fault ? fault.id : id, result: fault.value };
    if (fault.kind === "rpcError") {
      const error: Record<string, unknown> = {
        code: fault.code ?? -32000,
        message: fault.message ?? "injected error",
      };
      if (fault.data !== undefined) error.data = fault.data;
      return { jsonrpc: "2.0", id, error };
    }
    throw new Error(`fault ${fault.kind} is not a per-call fault`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: string) {
    trips++;
    const trip = trips;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // Not JSON: let the upstream node answer it as it would.
      const up = await forward(raw);
      res.writeHead(up.status, { "content-type": up.contentType }).end(up.text);
      return;
    }
    const isBatch = Array.isArray(parsed);
    const members = (isBatch ? parsed : [parsed]) as JsonRpcRequest[];
    const perMember = members.map((m) => {
      const method = typeof m?.method === "string" ? m.method : "";
      const params = Array.isArray(m?.params) ? (m.params as unknown[]) : [];
      const fault = faultFor(method, params, isBatch);
      calls.push({ method, params, roundTrip: trip, batch: isBatch, fault: fault?.kind ?? null });
      return { m, fault };
    });

    // Round-trip faults: the first member that selects one decides for the whole request.
    const tripFault = perMember.find((p) => p.fault && ["down", "delay", "http", "body"].includes(p.fault.kind))?.fault;
    if (tripFault?.kind === "down") {
      downed.add(req.socket);
      req.socket.destroy();
      return;
    }
    if (tripFault?.kind === "http") {
      res.writeHead(tripFault.status, { "content-type": "text/plain" }).end(`injected HTTP ${tripFault.status}`);
      return;
    }
    if (tripFault?.kind === "body") {
      res.writeHead(200, { "content-type": tripFault.contentType ?? "application/json" }).end(tripFault.text);
      return;
    }
    if (tripFault?.kind === "delay") {
      await sleep(tripFault.ms);
      if (res.destroyed || req.socket.destroyed) return;
    }

    const forwarded = (f: RpcFault | null) => !f || f.kind === "delay" || f.kind === "extraMember";
    const passThrough = perMember.filter((p) => forwarded(p.fault));
    const extra = perMember.flatMap((p) =>
      p.fault?.kind === "extraMember" ? [{ jsonrpc: "2.0", id: p.fault.id, result: p.fault.value }] : [],
    );
    let upstream: unknown[] = [];
    if (passThrough.length > 0) {
      const body = isBatch ? JSON.stringify(passThrough.map((p) => p.m)) : raw;
      const up = await forward(body);
      if (up.status < 200 || up.status >= 300 || (passThrough.length === perMember.length && extra.length === 0)) {
        // Nothing to merge: hand the node's answer over byte for byte.
        if (!res.destroyed) res.writeHead(up.status, { "content-type": up.contentType }).end(up.text);
        return;
      }
      const answer = JSON.parse(up.text) as unknown;
      upstream = Array.isArray(answer) ? answer : [answer];
    }
    const byId = new Map(upstream.map((r) => [(r as { id?: unknown })?.id, r]));
    const out = [
      ...perMember.map((p) => (forwarded(p.fault) ? byId.get(p.m?.id) : replacement(p.fault as RpcFault, p.m?.id))),
      ...extra,
    ];
    if (!res.destroyed) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(isBatch ? out : out[0]));
    }
  }

  const server = createServer((req, res) => {
    // Closed before an answer was written, and not by an injected "down" (which destroys it itself).
    res.on("close", () => {
      if (!res.writableFinished && !downed.has(req.socket)) abandoned++;
    });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      handle(req, res, Buffer.concat(chunks).toString("utf8")).catch((error: unknown) => {
        // The upstream itself failed (e.g. anvil stopped): answer like a broken gateway would.
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(502, { "content-type": "text/plain" }).end(`proxy upstream failure: ${String(error)}`);
        } else {
          res.destroy();
        }
      });
    });
  });
  server.keepAliveTimeout = 5_000;
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setFault(fault) {
      faults = fault === null ? [] : Array.isArray(fault) ? [...fault] : [fault as RpcFault];
    },
    count(method) {
      return method === undefined ? calls.length : calls.filter((c) => c.method === method).length;
    },
    roundTrips: () => trips,
    calls,
    abandoned: () => abandoned,
    setUpstream(url) {
      upstream = url ?? options.upstream;
    },
    reset() {
      calls.length = 0;
      trips = 0;
      abandoned = 0;
    },
    async stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
