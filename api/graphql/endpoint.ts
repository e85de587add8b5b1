/**
 * POST /graphql and GET /graphql?query=…: the HTTP face of the GraphQL engine (api/graphql/yoga.ts), behind the same
 * edge as every route (request id, CORS, request log). In order: the `graphql` rate-limit budget; the body (JSON, at
 * most 64 KiB: else 415 / 413 in the API's envelope; UTF-8, as a GET's query string once percent-decoded: else 400
 * BAD_REQUEST in GraphQL's `errors`, the document never run); the overall deadline and hang-up (api/http/cancellation.ts, which
 * cancels the request's index reads); then GraphQL, whose failures are its own `errors` with `extensions.code`; and
 * the answer's size. Statuses follow GraphQL over HTTP as yoga implements it. The process's GraphQL requests share a
 * budget of rows in flight (api/read/admission.ts), and answers of 64 KiB or more are written one per turn of the
 * event loop (api/http/answerTurns.ts), so clients asking for large answers and never reading them bound neither the
 * memory nor another client's wait.
 */
import type { DocumentNode } from "graphql";
import type { Context, Handler, MiddlewareHandler } from "hono";
import type { AppDeps } from "../deps";
import { type AnswerTurns, answerTurns } from "../http/answerTurns";
import { readBoundedBody, utf8Text } from "../http/boundedBody";
import { deadline, extendDeadline, requestDeadline } from "../http/cancellation";
import type { AppContext } from "../http/env";
import { PayloadTooLargeError, ProtocolAnswerError, UnsupportedMediaTypeError } from "../http/errors";
import { chargeRateLimit, type RateLimitOptions } from "../http/rateLimit";
import { type Admission, admission } from "../read/admission";
import { MAX_WAIT_MS } from "../read/atLeast";
import type { IndexRuntime } from "../read/runtime";
import { SingleFlight } from "../read/singleFlight";
import { CompileQueueFull, compileGate } from "./compileGate";
import { ByteBoundedCache, DOORKEEPER_ENTRIES, documentCost } from "./documentCache";
import { graphqlError, timedOut } from "./errors";
import { GRAPHQL_LIMITS } from "./limits";
import { RequestScope } from "./scope";
import { createGraphqlEngine } from "./yoga";

/** The methods /graphql answers (its 405 and its preflight name them). */
/** GraphQL over HTTP's methods (a HEAD would run a query to send nothing: 405, as a PUT). */
export const GRAPHQL_METHODS = ["GET", "POST", "OPTIONS"] as const;

/** How long after the deadline an execution that ignored it is given before the answer is written without it. */
const GRACE_MS = 100;

export type GraphqlEndpointOptions = {
  deps: AppDeps;
  runtime: IndexRuntime;
  rateLimit: RateLimitOptions;
  /** The turns large answers are built and written in (shared with the REST index routes); else its own. */
  turns?: AnswerTurns;
  /** The rows in flight (shared with the REST index routes); else its own budget of GRAPHQL_LIMITS.rowsInFlight. */
  rows?: Admission;
};

/**
 * The middleware (rate limit, deadline) and the handler, to mount at GRAPHQL_PATH; and warm(), which builds the
 * engine (its schema: ~25 ms of a start) before the first request would. The engine is built on first use.
 */
export function graphqlEndpoint(o: GraphqlEndpointOptions): {
  handlers: [MiddlewareHandler, MiddlewareHandler, Handler];
  warm(): void;
} {
  const limits = o.deps.config.graphqlDocuments;
  // A tenth of the bytes for texts that failed to parse: they hold their error, not a compiled query.
  // Each keeps a text on its second sighting (documentCache.ts: a flood of one-off texts is never cached).
  const doorkeeper = { entries: DOORKEEPER_ENTRIES, onDecline: () => o.deps.metrics.graphqlDocumentsDeclined.inc() };
  const documents = new ByteBoundedCache<DocumentNode>(
    limits.cacheBytes - Math.floor(limits.cacheBytes / 10),
    documentCost,
    doorkeeper,
  );
  const parseErrors = new ByteBoundedCache<unknown>(Math.floor(limits.cacheBytes / 10), documentCost, doorkeeper);
  o.deps.metrics.caches.register("graphql_documents", {
    stats: documents.stats,
    entries: () => documents.size,
  });
  let built: ReturnType<typeof createGraphqlEngine> | undefined;
  const engine = () => (built ??= createGraphqlEngine(o.deps.logger, { documents, errors: parseErrors }));
  const compiles = compileGate({
    inFlight: limits.compilesInFlight,
    queue: limits.compileQueue,
    waitMs: COMPILE_WAIT_MS,
  });
  const limited: MiddlewareHandler = async (c, next) => {
    await chargeRateLimit(c, "graphql", o.rateLimit);
    await next();
  };
  // Its signal is what the reads listen to. Its late answer (graceMs after the deadline, when the handler still waits — its body, a compile permit, its turn to
  // write) is GraphQL's EXECUTION_TIMEOUT, as the handler's own (afterDeadline), never the REST envelope.
  const overall = deadline({
    ms: GRAPHQL_LIMITS.timeMs,
    timeoutError: (c) =>
      new ProtocolAnswerError(
        JSON.stringify({ data: null, errors: [timedOut(GRAPHQL_LIMITS.timeMs).toJSON()] }),
        200,
        typeOf(c),
      ),
    graceMs: 1000,
  });
  // Rows in flight across this process's GraphQL requests, and large answers written one per turn.
  const rows = o.rows ?? admission(GRAPHQL_LIMITS.rowsInFlight);
  const turns = o.turns ?? answerTurns();
  /** Executions running now, by the request's text (sharing them: see answerOf). */
  const running = new SingleFlight<Encoded>();

  const execute = async (c: Context, request: Request, source: string | null): Promise<Encoded> => {
    const scope = new RequestScope(o.runtime, c, rows, turns);
    try {
      // A document the cache holds (or its failed parse) runs at once; a new one waits for a compile permit.
      if (source !== null && !documents.has(source) && !parseErrors.has(source)) {
        try {
          scope.compiled = await compiles.enter(scope.signal);
        } catch (error) {
          if (!(error instanceof CompileQueueFull)) throw error;
          o.deps.metrics.graphqlCompilesRefused.inc();
          const body = JSON.stringify({ errors: [graphqlError("COMPILE_QUEUE_FULL", error.message).toJSON()] });
          return {
            status: 503,
            type: typeOf(c),
            ...answerText(body),
            shareable: false,
            retryAfterSec: error.retryAfterSec,
          };
        }
      }
      const res = await engine().fetch(request, { scope });
      // The answer's text as yoga made it: its Response holds the JSON string itself, which text() hands over as it
      // is. Its bytes (arrayBuffer()) were a copy of the whole answer made for nothing: the socket encodes the text.
      const text = await res.text();
      // Only a 405's: yoga names its methods on some 400s too (a `query` that is not a string), where no header is due.
      const allow = res.status === 405 ? (res.headers.get("allow") ?? undefined) : undefined;
      const type = res.headers.get("content-type");
      return { status: res.status, type, ...answerText(text), shareable: !scope.failed, allow };
    } finally {
      scope.compiled();
      scope.release();
    }
  };

  /**
   * The answer to `request`: that of an identical request (same method, answer type and text) already executing,
   * if it succeeds — it is of the block it names, read after this request arrived or just before — else its own.
   * Identical requests arriving together (many clients polling one query, or one client's flood) cost one
   * execution and share one copy of its text, as graph-node shares a query's result between concurrent callers.
   * An execution that met an error (a read failed, its own client hung up) is shared with no one.
   */
  const answerOf = async (c: Context, request: Request, key: string, source: string | null): Promise<Encoded> => {
    const theirsRunning = running.running(key);
    // Checked and claimed in one synchronous step: an `await` between (even of nothing) would let every identical
    // request started in the same tick find no execution running and start its own.
    if (theirsRunning) {
      // Theirs may wait for a `number_gte` block (its own deadline pushed out by its waitMs, which this request's
      // plan, never made, would have asked for too): this request waits as long, at most the longest wait.
      if (key.includes("number_gte")) extendDeadline(c as AppContext, MAX_WAIT_MS);
      const since = performance.now();
      const theirs = await theirsRunning.catch(() => undefined);
      if (theirs?.shareable) {
        o.deps.metrics.graphqlAnswers.inc({ made: "shared" });
        return theirs;
      }
      // Not shared (theirs met an error: an INDEX_BEHIND after its whole wait, most often): this request's own
      // execution waits only what is left of its waitMs, not all of it again (which took up to 2 × waitMs).
      (c as AppContext).set("waitedForOthersMs", performance.now() - since);
    }
    o.deps.metrics.graphqlAnswers.inc({ made: "own" });
    return running.start(key, () => execute(c, request, source));
  };

  const handler: Handler = async (c) => {
    // Neither JSON type acceptable: refused before the body is read or anything runs (GraphQL over HTTP lets a server
    // refuse then; yoga chose the type after executing, so a careless client's every query ran in full for nothing).
    if (answerType(c.req.header("accept")) === null) {
      c.header("cache-control", "no-store");
      return c.body(null, 406);
    }
    if (c.req.method === "GET") {
      const url = new URL(c.req.url);
      // Decoded leniently (URLSearchParams, as yoga reads it), an escape that is not UTF-8 became U+FFFD and the
      // document ran as one its client never wrote.
      if (!percentDecodesToUtf8(url.search))
        return badRequest(c, "The query string is not valid UTF-8 once percent-decoded.");
      const malformed = malformedJsonParam(url.searchParams);
      // yoga's GET parser would throw JSON.parse's SyntaxError as an internal error (and log it with its stack): the
      // client's mistake is answered as yoga answers `variables=5`, 400 BAD_REQUEST.
      if (malformed !== null) return badRequest(c, `The "${malformed}" parameter is not valid JSON.`);
    }
    const engineRequest = await forEngine(c);
    if ("refused" in engineRequest) return badRequest(c, engineRequest.refused);
    const { request, key, source } = engineRequest;
    const late = afterDeadline(c);
    const res = await Promise.race([answerOf(c, request, key, source), late.promise]).finally(late.cancel);
    if (res === null) return json(c, { data: null, errors: [timedOut(GRAPHQL_LIMITS.timeMs).toJSON()] }, 200);
    if (res.retryAfterSec !== undefined) c.header("retry-after", String(res.retryAfterSec));
    if (res.allow !== undefined) c.header("allow", res.allow);
    if (res.bytes > GRAPHQL_LIMITS.responseBytes) {
      const error = graphqlError(
        "RESPONSE_TOO_LARGE",
        `The answer is larger than ${GRAPHQL_LIMITS.responseBytes} bytes; ask for fewer rows or fields.`,
      );
      return json(c, { data: null, errors: [error.toJSON()] }, 200);
    }
    await turns.turnFor(res.bytes);
    c.header("cache-control", "no-store");
    return c.body(res.text, res.status as 200, { "content-type": res.type ?? "application/json" });
  };
  return { handlers: [limited, overall, handler], warm: () => void engine() };
}

/** A GET's `variables` or `extensions` given and not JSON (the name of the first), or null. */
function malformedJsonParam(search: URLSearchParams): "variables" | "extensions" | null {
  for (const name of ["variables", "extensions"] as const) {
    const text = search.get(name);
    if (!text) continue;
    try {
      JSON.parse(text);
    } catch {
      return name;
    }
  }
  return null;
}

/**
 * Whether a query string's percent-escapes decode to UTF-8. A `%` not followed by two hex digits is itself, as the URL
 * standard's percent-decode (and URLSearchParams) read it; decodeURIComponent then refuses only bytes that are not
 * UTF-8.
 */
export function percentDecodesToUtf8(search: string): boolean {
  if (!search.includes("%")) return true;
  try {
    decodeURIComponent(search.replace(/%(?![0-9A-Fa-f]{2})/g, "%25"));
    return true;
  } catch {
    return false;
  }
}

/** A request that is not well-formed GraphQL over HTTP, refused before GraphQL sees it: 400 BAD_REQUEST to every client. */
function badRequest(c: Context, message: string) {
  return json(c, { errors: [graphqlError("BAD_REQUEST", message).toJSON()] }, 400);
}

/** An answer of the endpoint's own (not yoga's), in the media type yoga would have answered the client with. */
function json(c: Context, body: unknown, status: 200 | 400) {
  c.header("cache-control", "no-store");
  return c.body(JSON.stringify(body), status, { "content-type": typeOf(c) });
}

const JSON_TYPE = "application/json";
const SPEC_TYPE = "application/graphql-response+json";

/**
 * The media type a client is answered in (with `; charset=utf-8`), by its Accept header's q-values (RFC 9110
 * §12.5.1): each of application/json and application/graphql-response+json takes the q of the most specific range
 * that matches it (the type itself, then application's wildcard, then the wildcard of all; a range with a charset
 * other than utf-8 matches neither, other parameters are ignored, as yoga ignores them); q=0 is "not acceptable".
 * The higher q wins; on a tie, the type whose range comes first, and application/json when one wildcard covers both
 * (or there is no Accept). Null when neither is acceptable (`text/html`, `text/event-stream`, `multipart/mixed`
 * alone: nothing here streams): answered 406 before anything runs.
 */
export function answerType(accept: string | undefined): string | null {
  const ranges: { type: string; q: number }[] = [];
  for (const entry of (accept?.trim() ? accept : "*/*").replace(/\s/g, "").toLowerCase().split(",")) {
    if (entry === "") continue;
    const [type = "", ...params] = entry.split(";");
    const charset = params.find((p) => p.startsWith("charset="));
    if (charset !== undefined && charset !== "charset=utf-8") continue;
    const q = params.find((p) => p.startsWith("q="))?.slice(2);
    // RFC 9110's qvalue: 0 to 1, at most three decimals; a range with another is malformed, and left out.
    if (q !== undefined && !/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(q)) continue;
    ranges.push({ type, q: q === undefined ? 1 : Number(q) });
  }
  const best = (media: string) => {
    for (const type of [media, "application/*", "*/*"]) {
      const at = ranges.findIndex((r) => r.type === type);
      if (at >= 0) return { q: ranges[at]!.q, at };
    }
    return { q: 0, at: ranges.length };
  };
  const json = best(JSON_TYPE);
  const spec = best(SPEC_TYPE);
  if (json.q === 0 && spec.q === 0) return null;
  const isSpec = spec.q > json.q || (spec.q === json.q && spec.at < json.at);
  return `${isSpec ? SPEC_TYPE : JSON_TYPE}; charset=utf-8`;
}

/** The type a client is answered in, for the endpoint's own answers (a 406 was answered before they are made). */
const typeOf = (c: Context) => answerType(c.req.header("accept")) ?? `${JSON_TYPE}; charset=utf-8`;

/** An execution's answer, its JSON text as written, and whether an identical request may take it as its own. */
type Encoded = {
  status: number;
  type: string | null;
  /** The answer's JSON. */
  text: string;
  /** Its length in UTF-8 (what is written: the limit on an answer's size and its turn are of these). */
  bytes: number;
  shareable: boolean;
  /** A refusal's Retry-After (a new document found no compile permit in time). */
  retryAfterSec?: number;
  /**
   * yoga's 405 to a mutation over GET names the method that runs it (`Allow: POST`): RFC 9110 §15.5.6 requires the
   * header on every 405, as the method policy's 405s at /graphql carry theirs (api/http/methods.ts).
   */
  allow?: string;
};

/** An answer's text and its length in UTF-8. */
const answerText = (text: string) => ({ text, bytes: Buffer.byteLength(text) });

/** How long a new document may wait for a compile permit (api/graphql/compileGate.ts). */
const COMPILE_WAIT_MS = 1000;

/** The document's text as yoga's cache keys it (a POST body's `query`, a GET's `query` parameter); null if none. */
function documentOf(search: URLSearchParams, body: unknown): string | null {
  if (body !== undefined) {
    const query = (body as { query?: unknown } | null)?.query;
    return typeof query === "string" ? query : null;
  }
  return search.get("query");
}

/**
 * The request yoga reads (a GET as it came; a POST's body read here, bounded, and checked to be JSON), and its key:
 * what decides its answer (method, accept header, query string or body).
 */
async function forEngine(
  c: Context,
): Promise<{ request: Request; key: string; source: string | null } | { refused: string }> {
  // yoga is told only the type chosen here (answerType): it neither reads q-values nor refuses its own event-stream
  // and multipart answers, and identical requests in other words share one execution.
  const accept = (answerType(c.req.header("accept")) ?? JSON_TYPE).split(";", 1)[0]!;
  const headers: Record<string, string> = { accept };
  const url = new URL(c.req.url);
  const search = url.search;
  if (c.req.method !== "POST") {
    const request = new Request(c.req.url, { method: c.req.method, headers });
    return {
      request,
      key: `${c.req.method}\n${accept}\n${search}`,
      source: documentOf(url.searchParams, undefined),
    };
  }
  const type = (c.req.header("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type !== "application/json") throw new UnsupportedMediaTypeError("application/json");
  const bytes = await readBoundedBody(c, GRAPHQL_LIMITS.bodyBytes);
  if (bytes === null) throw new PayloadTooLargeError(GRAPHQL_LIMITS.bodyBytes);
  // Decoded leniently, a byte that is not UTF-8 became U+FFFD and the document ran as one its client never wrote.
  const body = utf8Text(bytes);
  if (body === null) return { refused: "The request body is not valid UTF-8." };
  // The body is parsed once, here: yoga's POST parser takes it from json(). One that is not JSON is refused here, as
  // yoga would refuse it but without its `extensions.originalError` (the parser's own message: an internal).
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { refused: "The request body is not JSON." };
  }
  const source = documentOf(url.searchParams, value);
  const parsed = Promise.resolve(value);
  const request = new Request(c.req.url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
  });
  Object.defineProperty(request, "json", { value: () => parsed });
  return { request, key: `POST\n${accept}\n${search}\n${body}`, source };
}

/** Resolves null GRACE_MS after the request's deadline signal fires (never, without one). */
function afterDeadline(c: Context): { promise: Promise<null>; cancel: () => void } {
  const signal = requestDeadline(c);
  let timer: NodeJS.Timeout | undefined;
  let listener = () => {};
  const promise = new Promise<null>((resolve) => {
    listener = () => {
      timer = setTimeout(() => resolve(null), GRACE_MS);
    };
    signal?.addEventListener("abort", listener, { once: true });
  });
  return {
    promise,
    cancel: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", listener);
    },
  };
}
