/**
 * The only way the service talks to a node: raw JSON-RPC over HTTP with a per-call timeout,
 * a read-method allowlist (no code path can send a write), and typed failures.
 */
import http from "node:http";
import https from "node:https";
import { urlToHttpOptions } from "node:url";
import { redactUrl } from "../redact";

/** Methods the service may send. Anything else is refused before it leaves the process. */
export const READ_METHODS = new Set([
  "eth_call",
  // Runs calls against a copy of the state and discards it: a read, nothing is signed or broadcast.
  "eth_simulateV1",
  "eth_chainId",
  "eth_blockNumber",
  "eth_getBlockByNumber",
  "eth_getBlockByHash",
  "eth_getLogs",
  "eth_getCode",
  "eth_getBalance",
  "eth_getTransactionReceipt",
  "net_version",
]);

export type RpcRequest = { method: string; params: readonly unknown[] };

export type RpcFailureKind =
  /**
   * connection refused, DNS, reset, or an HTTP 2xx answer whose body is not JSON (an HTML page, a truncated text:
   * then `info.notJson` is set, since something did answer)
   */
  | "unreachable"
  /** no answer within the timeout */
  | "timeout"
  /** the caller gave up first (its AbortSignal fired): the request was cancelled, not answered */
  | "aborted"
  /** a non-2xx HTTP status */
  | "http"
  /** a JSON-RPC error object (a revert carries `data`) */
  | "rpc"
  /** a response that is not the answer to the call (another id, no result) or whose result the caller refuses */
  | "invalid";

export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly kind: RpcFailureKind,
    message: string,
    /** `reverted`: a JSON-RPC error that is the contract reverting (isRevert), not the node failing. */
    readonly info: {
      method?: string;
      status?: number;
      code?: number;
      data?: string;
      reverted?: boolean;
      /** An HTTP 2xx answer whose body is not JSON (kind "unreachable"): answered, but not in JSON-RPC. */
      notJson?: boolean;
    } = {},
  ) {
    super(message);
  }
}

/**
 * Whether a JSON-RPC error object is an execution revert: code 3 is what anvil, geth and reth answer for a
 * revert (with its data; anvil even for a bare `revert()`: `{code: 3, message: "execution reverted", data:
 * "0x"}`); nodes that answer a revert without data use -32000 with "execution reverted" in the message.
 */
export function isRevert(code: number | undefined, message: unknown): boolean {
  return code === 3 || (typeof message === "string" && /\brevert/i.test(message));
}

export class RpcMethodNotAllowedError extends Error {
  override name = "RpcMethodNotAllowedError";
  constructor(readonly method: string) {
    super(`RPC method ${method} is not in the read allowlist`);
  }
}

/**
 * How one upstream call ended, for the metrics: "revert" is the contract refusing (an answer, like "ok"),
 * unlike "rpc" (any other JSON-RPC error: the node failing); "invalid" is an answer the client or its
 * caller could not accept (not JSON-RPC, a missing result, a result that does not decode).
 */
export type RpcOutcome = "ok" | "revert" | RpcFailureKind;

/** The outcome an error ended a call with: a decoder's own error (not an RpcError) means the answer was invalid. */
export function outcomeOf(error: unknown): RpcOutcome {
  if (!(error instanceof RpcError)) return "invalid";
  return error.kind === "rpc" && error.info.reverted === true ? "revert" : error.kind;
}

export type RpcClientOptions = {
  url: string;
  /** Upper bound for one HTTP round trip; a hung node never holds a caller longer. */
  timeoutMs?: number;
  /** Called once per JSON-RPC method sent (a batch reports each member), for metrics. */
  onCall?: (method: string, outcome: RpcOutcome) => void;
  /**
   * Called once per JSON-RPC method that a call's `deadline` stopped (the request it served passed its deadline or
   * its client hung up): cut off in flight, or never sent because the deadline had already fired. For metrics.
   */
  onCancelled?: (method: string) => void;
};

/** Per-call options. */
export type RpcCallOptions = {
  /**
   * The caller's own deadline or cancellation: when it fires, the HTTP request is cancelled (the
   * connection to the node is closed, nothing keeps running) and the call fails with kind "aborted".
   * The client's timeout still applies, and so does `deadline`.
   */
  signal?: AbortSignal;
  /**
   * The deadline of the HTTP request the call is made for (api/http/cancellation.ts; boundToDeadline below adds it
   * to every call of a route): when it fires the call is cancelled the same way and fails with kind "timeout",
   * or "aborted" when it fired because the request's client hung up (reason HANG_UP).
   */
  deadline?: CancelSignal;
};

/**
 * A call's options with the caller's decoder: `decode` turns the result into what the caller accepts, or throws
 * (its error is the call's). Run by the client before it counts the call, so an answer the caller rejects is
 * counted "invalid", never "ok". Every RpcClient must apply it (decodeWith).
 */
export type RpcRequestOptions<T> = RpcCallOptions & { decode?: (result: unknown) => T };

/**
 * A batch's options: one decoder per member (or none), applied as RpcRequestOptions.decode is. `settle` marks the
 * members whose failure (an error object, a decoder that throws) does not fail the batch: such a member's result is
 * its error, counted as that call's failure (the supply read: totalLockedClaim() failing leaves totalSupply() a figure).
 */
export type RpcBatchOptions = RpcCallOptions & {
  decode?: readonly (((result: unknown) => unknown) | undefined)[];
  settle?: readonly boolean[];
};

/** `result` through `decode`, if any: for RpcClient implementations (a fake chain, a coalescing view). */
export function decodeWith<T>(result: unknown, decode: ((result: unknown) => T) | undefined): T {
  return decode ? decode(result) : (result as T);
}
/** The reason a request's deadline signal carries when it fired because the client closed the connection. */
export const HANG_UP = "hang-up";

/** The reason a request's deadline signal carries when its deadline passed (api/http/cancellation.ts deadline()). */
export const DEADLINE_REASON = "deadline";

/**
 * What work rejects with when a CancelSignal it took fired: the cancellation itself, not a failure (an index query's
 * QueryCancelledError). The one error handler tells it from an error that only came after the signal fired.
 */
export class CancelledError extends Error {
  override name = "CancelledError";
}

/** What can cancel a call besides its own signal: an AbortSignal, or the request's deadline (api/http/cancellation.ts). */
export interface CancelSignal {
  readonly aborted: boolean;
  /** Why it fired: HANG_UP when the request's client went away; anything else is a deadline passing. */
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

export interface RpcClient {
  /** One JSON-RPC call; resolves with `result` exactly as the node sent it (never coerced), or as `decode` made it. */
  request<T = unknown>(req: RpcRequest, options?: RpcRequestOptions<T>): Promise<T>;
  /**
   * Several calls in one HTTP round trip; results in request order. Any member's error fails the batch, but one that
   * `options.settle` marks (its result is then the error).
   */
  batch(reqs: readonly RpcRequest[], options?: RpcBatchOptions): Promise<unknown[]>;
  /** The URL with credentials, path and query removed — the only form that may be logged or shown. */
  readonly redactedUrl: string;
  /** For a view of another client (boundToDeadline, a coalescing view): that client, whose node this is. */
  readonly origin?: RpcClient;
}

/** The client a view was made of (itself when it is not a view): what facts about its node are kept by. */
export const originOf = (rpc: RpcClient): RpcClient => rpc.origin ?? rpc;

export const DEFAULT_RPC_TIMEOUT_MS = 15_000;

type JsonRpcResponse = {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
};

/**
 * node:http(s) with a keep-alive agent, not fetch (viem's http transport and our earlier client both use
 * fetch: undici's WHATWG Request/Response and body streams). Measured by bench/rpc-transport.ts, the same
 * eth_call to the same anvil, interleaved, p50, on this 2-core machine under load: this client 0.475 ms vs
 * viem's http transport 0.666 ms (0.71×; raw fetch 0.589 ms), and in a second run 0.723 vs 1.040 ms (0.70×).
 * That is the measured reason to keep our own client rather than viem's transport (issue 17 point 4).
 * Idle connections close after 4 s (undici's default; a node's own keep-alive hint, when shorter, wins).
 * A URL that is not http(s) fails every call as unreachable, as fetch did.
 */
function nodeTransport(raw: string) {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  const transport = url.protocol === "https:" ? https : url.protocol === "http:" ? http : null;
  if (!transport) return null;
  const agent = new transport.Agent({ keepAlive: true, timeout: 4_000 });
  // The URL's parts resolved once (credentials included, as http.request takes them from a URL), not per call.
  const target = { ...urlToHttpOptions(url), method: "POST", agent };
  return { transport, target };
}

export function createRpcClient(options: RpcClientOptions): RpcClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const redactedUrl = redactUrl(options.url);
  const node = nodeTransport(options.url);
  let nextId = 1;

  const report = (methods: readonly string[], outcome: RpcOutcome) => {
    if (options.onCall) for (const m of methods) options.onCall(m, outcome);
  };
  const cancelled = (methods: readonly string[]) => {
    if (options.onCancelled) for (const m of methods) options.onCancelled(m);
  };

  async function post(body: unknown, methods: readonly string[], options?: RpcCallOptions): Promise<unknown> {
    // The caller's own signal and the deadline of the request this call is made for: either cancels it.
    const own = options?.signal;
    const ambient = options?.deadline;
    const method = methods.length === 1 ? methods[0] : "batch";
    let request: http.ClientRequest | undefined;
    let timedOut = false;
    // Destroying the request closes its connection to the node: nothing keeps running.
    const stop = () => request?.destroy(new Error("RPC call stopped"));
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    own?.addEventListener("abort", stop, { once: true });
    ambient?.addEventListener("abort", stop, { once: true });
    // Which ended the call, for the error's kind: the caller's own signal wins; the request's deadline
    // passing is a timeout, as is this call's own; the request's client hanging up is a cancellation.
    const stopped = () =>
      own?.aborted
        ? new RpcError("aborted", `RPC ${method} cancelled by the caller`, { method })
        : ambient?.aborted
          ? ambient.reason === HANG_UP
            ? new RpcError("aborted", `RPC ${method} cancelled: the request's client hung up`, { method })
            : new RpcError("timeout", `RPC ${method} stopped at the request's deadline`, { method })
          : timedOut
            ? new RpcError("timeout", `RPC ${method} timed out after ${timeoutMs} ms`, { method })
            : undefined;
    try {
      if (own?.aborted || ambient?.aborted) throw stopped();
      let reply: { status: number; text: string };
      try {
        if (!node) throw new Error("not an http(s) URL");
        const { transport, target } = node;
        const payload = JSON.stringify(body);
        const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(payload) };
        const send = () =>
          new Promise<{ status: number; text: string }>((resolve, reject) => {
            request = transport.request({ ...target, headers }, (res) => {
              const status = res.statusCode ?? 0;
              if (status < 200 || status > 299) {
                res.resume(); // drained, so the connection can be reused
                resolve({ status, text: "" });
                return;
              }
              res.setEncoding("utf8");
              let text = "";
              res.on("data", (chunk: string) => {
                text += chunk;
              });
              res.on("end", () => resolve({ status, text }));
              res.on("error", reject);
              res.on("close", () => {
                if (!res.complete) reject(new Error("the answer was cut off"));
              });
            });
            request.on("error", reject);
            request.end(payload);
          });
        try {
          reply = await send();
        } catch (error) {
          // A pooled keep-alive connection the node (or a load balancer in front of it) closed while idle fails
          // the moment it is reused, before the node saw the request. Every method here is a read, so sending it
          // once more on a new connection is safe; only that case is retried, and never after a stop.
          if (!request?.reusedSocket || stopped()) throw error;
          reply = await send();
        }
      } catch {
        throw stopped() ?? new RpcError("unreachable", `RPC ${method}: node unreachable`, { method });
      }
      if (reply.status < 200 || reply.status > 299) {
        throw new RpcError("http", `RPC ${method}: HTTP ${reply.status}`, { method, status: reply.status });
      }
      try {
        return JSON.parse(reply.text);
      } catch {
        throw (
          stopped() ?? new RpcError("unreachable", `RPC ${method}: response is not JSON`, { method, notJson: true })
        );
      }
    } catch (error) {
      report(methods, error instanceof RpcError ? outcomeOf(error) : "unreachable");
      if (ambient?.aborted && !own?.aborted) cancelled(methods);
      throw error;
    } finally {
      clearTimeout(timer);
      own?.removeEventListener("abort", stop);
      ambient?.removeEventListener("abort", stop);
    }
  }

  /**
   * The result of one response, or its error. `id`, when given, is the id the call was sent with: a response
   * under another id answers another request (a desynchronised keep-alive connection, a caching proxy mixing up
   * answers; JSON-RPC 2.0 §5 requires the request's id), so it is no answer to this call, whatever it says.
   */
  function unwrap(res: unknown, method: string, id?: number): unknown {
    if (typeof res !== "object" || res === null)
      throw new RpcError("invalid", `RPC ${method}: malformed response`, { method });
    const r = res as JsonRpcResponse;
    if (id !== undefined && r.id !== id)
      throw new RpcError("invalid", `RPC ${method}: response id is not the request's (${id})`, { method });
    if (r.error !== undefined && r.error !== null) {
      const code = typeof r.error.code === "number" ? r.error.code : undefined;
      const data = typeof r.error.data === "string" ? r.error.data : undefined;
      const reverted = isRevert(code, r.error.message);
      throw new RpcError("rpc", `RPC ${method}: ${reverted ? "reverted" : "error"} ${code ?? "?"}`, {
        method,
        code,
        data,
        reverted,
      });
    }
    if (!("result" in r)) throw new RpcError("invalid", `RPC ${method}: response has no result`, { method });
    return r.result;
  }

  function guard(reqs: readonly RpcRequest[]) {
    for (const r of reqs) if (!READ_METHODS.has(r.method)) throw new RpcMethodNotAllowedError(r.method);
  }

  return {
    redactedUrl,
    async request(req, callOptions) {
      guard([req]);
      const id = nextId++;
      const res = await post({ jsonrpc: "2.0", id, method: req.method, params: req.params }, [req.method], callOptions);
      try {
        const result = decodeWith(unwrap(res, req.method, id), callOptions?.decode);
        report([req.method], "ok");
        return result;
      } catch (error) {
        report([req.method], outcomeOf(error));
        throw error;
      }
    },
    async batch(reqs, callOptions) {
      guard(reqs);
      if (reqs.length === 0) return [];
      const methods = reqs.map((r) => r.method);
      const ids = reqs.map(() => nextId++);
      const res = await post(
        reqs.map((r, i) => ({ jsonrpc: "2.0", id: ids[i], method: r.method, params: r.params })),
        methods,
        callOptions,
      );
      if (!Array.isArray(res)) {
        let error: unknown;
        try {
          // Some nodes answer a whole batch with one error object.
          unwrap(res, "batch");
          error = new RpcError("invalid", "RPC batch: response is not an array", { method: "batch" });
        } catch (e) {
          error = e;
        }
        report(methods, outcomeOf(error));
        throw error;
      }
      // Each member is counted by its own outcome (a revert beside an ok); the first failure fails the batch.
      // A member answered twice (a proxy or load balancer merging two answers) is ambiguous: no answer, whatever
      // either says — taking one of them served the total supply as the circulating one.
      const byId = new Map<unknown, unknown>();
      const twice = new Set<unknown>();
      const sent = new Set<unknown>(ids);
      for (const member of res) {
        const id = (member as JsonRpcResponse)?.id;
        // A member under an id this batch did not send is another request's answer mixed into ours (a proxy or a
        // desynchronised connection): the whole answer is suspect, so no member of it is taken, whatever it says.
        if (!sent.has(id)) {
          const error = new RpcError("invalid", "RPC batch: an answer under an id the batch did not send", {
            method: "batch",
          });
          report(methods, "invalid");
          throw error;
        }
        if (byId.has(id)) twice.add(id);
        else byId.set(id, member);
      }
      let failure: { error: unknown } | undefined;
      const results = reqs.map((r, i) => {
        // A settled member's own answer (its error object, or what its decoder refused) is its result; a batch answer
        // that lost or doubled a member is malformed as a whole, whichever member it is.
        let settles = false;
        try {
          const member = byId.get(ids[i]);
          if (member === undefined)
            throw new RpcError("invalid", `RPC ${r.method}: missing from batch response`, { method: r.method });
          if (twice.has(ids[i]))
            throw new RpcError("invalid", `RPC ${r.method}: answered twice in the batch response`, {
              method: r.method,
            });
          settles = callOptions?.settle?.[i] === true;
          const result = decodeWith(unwrap(member, r.method), callOptions?.decode?.[i]);
          report([r.method], "ok");
          return result;
        } catch (error) {
          report([r.method], outcomeOf(error));
          if (settles) return error;
          failure ??= { error };
          return undefined;
        }
      });
      if (failure) throw failure.error;
      return results;
    },
  };
}

/**
 * `rpc` with every call also bound to `deadline`, the deadline of the HTTP request it serves: a route gives
 * this view to everything it reads through, so all its reads end together when the deadline passes. Passed
 * explicitly rather than carried by an AsyncLocalStorage: on Node 20 that turns on a promise hook for every
 * promise of the process once used (≈0.3 µs each, measured), supply hits included.
 */
export function boundToDeadline(rpc: RpcClient, deadline: CancelSignal): RpcClient {
  return {
    redactedUrl: rpc.redactedUrl,
    origin: originOf(rpc),
    request: (req, options) => rpc.request(req, { ...options, deadline }),
    batch: (reqs, options) => rpc.batch(reqs, { ...options, deadline }),
  };
}
