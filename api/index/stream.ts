import type { Hono } from "hono";
import type { AppContext, AppEnv } from "../http/env";
import { BadParamsError, IndexUnavailableError, RateLimitedError } from "../http/errors";
import type { StreamMetrics } from "../observability/streamMetrics";
import type { IndexRuntime } from "../read/runtime";
import { StreamHub, type StreamLimits } from "./streamHub";
import { parseTopics } from "./streamTopics";

/**
 * GET /stream — Server-Sent Events of what changed in the index, per topic and per indexed block (api/index/streamHub.ts).
 * The topics are judged before the stream opens (400 in the envelope), and so are the limits (429, Retry-After).
 */
export const STREAM_PATH = "/stream";

export type StreamRouteOptions = {
  limits: StreamLimits;
  clientIp: (c: AppContext) => string | null;
  metrics?: StreamMetrics;
};

/** `Last-Event-ID`: a block number, as this route's ids are; anything else is a 400 (a client's bug, not a resume). */
function lastEventId(c: AppContext): bigint | null {
  const raw = c.req.header("last-event-id") ?? new URL(c.req.url).searchParams.get("lastEventId");
  if (raw === undefined || raw === null || raw === "") return null;
  if (!/^(0|[1-9]\d{0,19})$/.test(raw)) {
    throw new BadParamsError("Last-Event-ID must be a block number, as this stream's event ids are.", {
      param: "Last-Event-ID",
    });
  }
  return BigInt(raw);
}

export function registerStreamRoute(
  router: Hono<AppEnv>,
  rt: IndexRuntime,
  options: StreamRouteOptions,
): StreamHub | null {
  if (rt.signal === null) {
    router.get(STREAM_PATH, (c) => {
      const url = new URL(c.req.url);
      url.searchParams.delete("lastEventId");
      parseTopics(url.toString());
      throw new IndexUnavailableError("unconfigured");
    });
    return null;
  }
  const hub = new StreamHub(
    rt,
    async (path) => {
      const res = await router.request(path);
      if (res.status === 404) return null;
      const text = await res.text();
      if (res.status !== 200) throw new Error(`stream answer ${path}: ${res.status} ${text.slice(0, 200)}`);
      return text;
    },
    options.limits,
    options.metrics,
  );
  router.get(STREAM_PATH, (c) => {
    const url = new URL(c.req.url);
    const last = lastEventId(c);
    url.searchParams.delete("lastEventId");
    const topics = parseTopics(url.toString());
    const ip = options.clientIp(c) ?? "unknown";
    const refused = hub.refusal(ip);
    if (refused !== null) {
      options.metrics?.refused.inc({ reason: refused });
      throw new RateLimitedError(refused === "total" ? 5 : 1);
    }
    const stream = hub.open(topics, ip, last);
    c.env?.outgoing?.once("close", () => stream.close());
    return c.body(stream.body, 200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    });
  });
  return hub;
}
