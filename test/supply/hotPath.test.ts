/**
 * The supply hot path (api/supply/router.ts): a cached figure answered before routing, at the Node level
 * in the served processes (startApiServer asks it before @hono/node-server) and in front of app.fetch.
 * It must be the routed answer byte for byte and be counted the same, and it must decline everything it
 * does not own (a miss, a failure, HEAD, another query, a target or Host @hono/node-server would read
 * otherwise, a logger that would log the success), so those are routed with their full behaviour. The
 * parity checks run over a real socket against the real server (startApiServer: raw headers, names and
 * order included, drain included) and through app.request.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { appDeps, createApp } from "../../api/app";
import { MemoryTtlCache } from "../../api/cache/ttlCache";
import { createLogger, type Logger } from "../../api/observability/logger";
import { createMetrics, type Metrics } from "../../api/observability/metrics";
import { type ApiServer, startApiServer } from "../../api/server/server";
import { supplyApi } from "../../api/supply/router";
import { type RawAnswer, rawExchange, sendRaw } from "../support/rawHttp";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const AGE = /^(0|[1-9][0-9]*)$/;
const PATHS = ["/api/supply/total", "/api/supply/circulating", "/api/supply/max"] as const;
const QUERIES = ["", "?", "?format=json", "?format=bare"] as const;

let d: ReadsDevnet;
let cache: MemoryTtlCache;

type Side = {
  app: ReturnType<typeof createApp>;
  metrics: Metrics;
  lines: Record<string, unknown>[];
  base: string;
  api: ApiServer;
  /** Requests that reached app.fetch (not answered at the Node level). */
  fetched(): number;
  close(): Promise<void>;
};

/** An app over the shared cache, served by startApiServer; `level` decides whether the hot path may answer. */
async function side(level: "info" | "debug"): Promise<Side> {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level, write: (l) => lines.push(JSON.parse(l)) });
  const metrics = createMetrics();
  // No failure backoff: the failure test below wants the very next request to read again.
  const app = d.app({ logger, metrics, supply: { cache, failureBackoffMs: 0 } });
  let fetched = 0;
  const fetch = app.fetch;
  app.fetch = (request, env, executionCtx) => {
    fetched++;
    return fetch(request, env, executionCtx);
  };
  const api = await startApiServer(app, { port: 0, hostname: "127.0.0.1" });
  return {
    app,
    metrics,
    lines,
    base: `http://127.0.0.1:${api.port}`,
    api,
    fetched: () => fetched,
    close: () => api.close(0),
  };
}

const send = (base: string, path: string, headers: Record<string, string> = {}) =>
  sendRaw(`${base}${path}`, "GET", headers);

/**
 * An answer with the per-response values (date, a generated request id, a figure's Age: the two answers compared may
 * fall either side of a second) replaced by their shape; the headers as they came on the wire, in order and with their
 * names as spelled. test/supply/age.test.ts holds the Age's value to the read.
 */
function normalized(a: RawAnswer) {
  const headers: [string, string][] = [];
  for (let i = 0; i < a.rawHeaders.length; i += 2) {
    const [name, value] = [a.rawHeaders[i]!, a.rawHeaders[i + 1]!];
    if (name.toLowerCase() === "date") headers.push([name, "<date>"]);
    else if (name.toLowerCase() === "x-request-id" && UUID.test(value)) headers.push([name, "<uuid>"]);
    else if (name.toLowerCase() === "age" && AGE.test(value)) headers.push([name, "<age>"]);
    else headers.push([name, value]);
  }
  return { status: a.status, headers, body: a.body };
}

/** A raw HTTP exchange with its date and generated ids replaced by their shape. */
const normalizedRaw = (answer: string) =>
  answer
    .replace(/\r\ndate: [^\r]*/i, "\r\ndate: <date>")
    .replace(/\r\nage: (0|[1-9][0-9]*)\r\n/i, "\r\nage: <age>\r\n")
    .replace(UUIDS, "<uuid>");

function headerObject(h: Headers): Record<string, string> {
  const all: Record<string, string> = {};
  h.forEach((value, key) => {
    all[key] = key === "age" && AGE.test(value) ? "<age>" : value;
  });
  return all;
}

/** The supply lines of the Prometheus request counter. */
const supplySeries = async (m: Metrics) =>
  (await m.render()).split("\n").filter((l) => l.startsWith("api_http_requests_total{") && l.includes("/api/supply/"));

let hot: Side;
let routed: Side;

beforeAll(async () => {
  d = await startReadsDevnet();
});
afterAll(async () => {
  await hot?.close();
  await routed?.close();
  await d?.stop();
});
beforeEach(async () => {
  await hot?.close();
  await routed?.close();
  cache = new MemoryTtlCache();
  d.proxy.setFault(null);
  d.proxy.reset();
  hot = await side("info");
  routed = await side("debug");
});

/** The hot path of an app built like `hot`, to ask it directly. */
function hotPathOf(logger: Logger = createLogger({ level: "info", write: () => {} })) {
  return supplyApi(appDeps({ config: d.config, rpc: d.rpc, logger, supply: { cache } })).hotPath;
}
const req = (path: string, init?: RequestInit) => new Request(`http://127.0.0.1${path}`, init);

describe("supply hot path", () => {
  it("answers only cached figures: a miss is routed (and fills the cache), then the hit is answered", async () => {
    const hotPath = hotPathOf();
    expect(hotPath(req("/api/supply/total"), undefined)).toBeUndefined();
    expect(hotPath(req("/api/supply/circulating"), undefined)).toBeUndefined();
    expect(hotPath(req("/api/supply/max"), undefined)?.status).toBe(200); // a constant: never a miss
    expect((await send(hot.base, "/api/supply/total")).status).toBe(200);
    // One entry holds both figures: the read for total (eth_blockNumber, then the block's header + 2 eth_calls) answers
    // circulating too.
    expect(hotPath(req("/api/supply/circulating"), undefined)?.status).toBe(200);
    expect((await send(hot.base, "/api/supply/circulating")).status).toBe(200);
    // (By method: a reorg check of the block, due every 4 s while figures are served, is not a read.)
    expect([d.proxy.count("eth_blockNumber"), d.proxy.count("eth_call"), hot.fetched()]).toEqual([1, 2, 1]);
    for (const path of PATHS) {
      const res = hotPath(req(path), undefined);
      expect(res?.status, path).toBe(200);
      expect(await res?.text()).toBe((await send(routed.base, path)).body);
    }
    expect([d.proxy.count("eth_blockNumber"), d.proxy.count("eth_call")]).toEqual([1, 2]);
  });

  it("declines what it does not own: other methods, queries, paths, and a logger that logs successes", async () => {
    await send(hot.base, "/api/supply/circulating");
    const hotPath = hotPathOf();
    expect(hotPath(req("/api/supply/circulating"), undefined)).toBeDefined();
    for (const [path, init] of [
      ["/api/supply/circulating", { method: "HEAD" }],
      ["/api/supply/circulating", { method: "POST", body: "x" }],
      ["/api/supply/circulating", { method: "OPTIONS" }],
      ["/api/supply/circulating?format=bare&cb=1", undefined],
      ["/api/supply/circulating?cb=1", undefined],
      ["/api/supply/circulating?format=BARE", undefined],
      ["/api/supply/circulating?format=constructor", undefined],
      ["/api/supply/circulating?format=bare&format=bare", undefined],
      ["/api/supply/circulating/", undefined],
      ["/api/supply/circulating%2F", undefined],
      ["/api/supply/Circulating", undefined],
      ["/api/supply/constructor", undefined],
      ["/api/supply", undefined],
    ] as const) {
      expect(hotPath(req(path, init), undefined), `${init?.method ?? "GET"} ${path}`).toBeUndefined();
    }
    expect(hotPathOf(createLogger({ level: "debug", write: () => {} }))(req("/api/supply/max"), undefined)).toBe(
      undefined,
    );
    // A logger that cannot say what it drops is assumed to log everything.
    const opaque: Logger = { debug() {}, info() {}, warn() {}, error() {} };
    expect(hotPathOf(opaque)(req("/api/supply/max"), undefined)).toBeUndefined();
  });

  it("a hot answer equals the routed one over a socket: status, body, every header", async () => {
    await send(hot.base, "/api/supply/total");
    await send(hot.base, "/api/supply/circulating");
    let compared = 0;
    for (const path of PATHS) {
      for (const query of QUERIES) {
        const variants: Record<string, string>[] = [
          {},
          { "x-request-id": "agg-42" },
          { "x-request-id": "bad id\u00e9" },
        ];
        for (const headers of variants) {
          const [a, b] = [await send(hot.base, path + query, headers), await send(routed.base, path + query, headers)];
          expect(normalized(a), `${path}${query} ${JSON.stringify(headers)}`).toEqual(normalized(b));
          expect(a.status).toBe(200);
          expect(a.headers["access-control-allow-origin"]).toBe("*");
          if (headers["x-request-id"] === "agg-42") expect(a.headers["x-request-id"]).toBe("agg-42");
          else expect(a.headers["x-request-id"]).toMatch(UUID);
          compared++;
        }
      }
    }
    expect(compared).toBe(36);
    // The hot side answered every one at the Node level (app.fetch never ran); the routed side routed all.
    expect([hot.fetched(), routed.fetched()]).toEqual([1, 36]);
    // The routed side logged every success at debug; the hot side, at info, logged none (as routed would).
    expect(routed.lines.filter((l) => l.msg === "request").length).toBe(36);
    expect(hot.lines.filter((l) => l.msg === "request")).toEqual([]);
    expect([d.proxy.count("eth_blockNumber"), d.proxy.count("eth_call")]).toEqual([1, 2]);
  });

  it("at the Node level, declines what it does not own: each such request reaches app.fetch and is answered as routed", async () => {
    await send(hot.base, "/api/supply/circulating");
    const before = hot.fetched();
    const requests: [string, string][] = [
      ["HEAD", "/api/supply/circulating"],
      ["POST", "/api/supply/circulating"],
      ["OPTIONS", "/api/supply/circulating"],
      ["GET", "/api/supply/circulating?format=bare&cb=1"],
      ["GET", "/api/supply/circulating?cb=1"],
      ["GET", "/api/supply/circulating?format=BARE"],
      ["GET", "/api/supply/circulating?format=bare&format=bare"],
      ["GET", "/api/supply/circulating/"],
      ["GET", "/api/supply/circulating%2F"],
      ["GET", "/api/supply/constructor"],
      ["GET", "/api/supply"],
    ];
    for (const [method, path] of requests) {
      const [a, b] = [await sendRaw(hot.base + path, method), await sendRaw(routed.base + path, method)];
      expect(normalized(a), `${method} ${path}`).toEqual(normalized(b));
    }
    // Targets and Hosts @hono/node-server reads otherwise than as they are: absolute form, a dot segment,
    // no Host (it substitutes the server's hostname), then Hosts it rejects itself with a 400 before
    // app.fetch ("1.2.3" is the IPv4 1.2.0.3, a port out of range, userinfo).
    const exchanges: [string, 200 | 400][] = [
      [`GET ${hot.base}/api/supply/circulating HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, 200],
      ["GET /api/supply/./circulating HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 200],
      ["GET /api/supply/circulating HTTP/1.0\r\n\r\n", 200],
      ["GET /api/supply/circulating HTTP/1.1\r\nHost: 1.2.3\r\nConnection: close\r\n\r\n", 400],
      ["GET /api/supply/circulating HTTP/1.1\r\nHost: a:99999\r\nConnection: close\r\n\r\n", 400],
      ["GET /api/supply/circulating HTTP/1.1\r\nHost: a@b\r\nConnection: close\r\n\r\n", 400],
    ];
    for (const [bytes, status] of exchanges) {
      const [a, b] = [await rawExchange(hot.base, bytes), await rawExchange(routed.base, bytes)];
      expect(a, bytes).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(normalizedRaw(a), bytes).toBe(normalizedRaw(b).replace(routed.base, hot.base));
    }
    const passedOn = requests.length + exchanges.filter(([, status]) => status === 200).length;
    expect(hot.fetched() - before).toBe(passedOn);
    // A Host in another spelling it keeps is still hot.
    await rawExchange(hot.base, "GET /api/supply/circulating HTTP/1.1\r\nHost: LOCALHOST\r\nConnection: close\r\n\r\n");
    expect(hot.fetched() - before).toBe(passedOn);
  });

  it("a drain's `connection: close` reaches a hot answer, which still equals the routed one", async () => {
    await send(hot.base, "/api/supply/circulating");
    const answers: string[] = [];
    for (const s of [hot, routed]) {
      // A request arriving when the drain starts: its first bytes keep the connection from being idle.
      const { hostname, port } = new URL(s.base);
      const socket = connect({ host: hostname, port: Number(port) });
      let answer = "";
      socket.on("data", (chunk) => {
        answer += chunk;
      });
      const closed = new Promise((done) => socket.on("close", done));
      await new Promise((done) => socket.once("connect", done));
      socket.write("GET /api/supply/circulating HTTP/1.1\r\n");
      await new Promise((done) => setTimeout(done, 50));
      const drained = s.api.close(5_000);
      socket.write("Host: 127.0.0.1\r\nx-request-id: drain-1\r\n\r\n");
      await Promise.all([closed, drained]);
      answers.push(answer);
    }
    expect(hot.fetched()).toBe(1); // the warm-up; the drained request was answered at the Node level
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answers[0]).toMatch(/\r\nconnection: close\r\n/);
    expect(normalizedRaw(answers[0]!)).toBe(normalizedRaw(answers[1]!));
  });

  it("a hot path that throws (a bug) costs the process nothing: the request is served as usual", async () => {
    const app = d.app({ logger: createLogger({ level: "info", write: () => {} }), supply: { cache } });
    app.nodeHotPath = () => {
      throw new Error("a bug in the hot path");
    };
    const api = await startApiServer(app, { port: 0, hostname: "127.0.0.1" });
    try {
      const [a, b] = [
        await send(`http://127.0.0.1:${api.port}`, "/api/supply/max"),
        await send(routed.base, "/api/supply/max"),
      ];
      expect(a.status).toBe(200);
      expect(normalized(a)).toEqual(normalized(b));
    } finally {
      await api.close(0);
    }
  });

  it("a hot answer equals the routed one through app.request, and both count under the same route label", async () => {
    await send(hot.base, "/api/supply/circulating");
    const freshHot = createApp({
      config: d.config,
      rpc: d.rpc,
      logger: createLogger({ level: "warn", write: () => {} }),
      supply: { cache },
    });
    for (const path of PATHS) {
      for (const query of QUERIES) {
        const a = await freshHot.request(path + query, { headers: { "x-request-id": "r1" } });
        const b = await routed.app.request(path + query, { headers: { "x-request-id": "r1" } });
        expect([a.status, await a.text(), headerObject(a.headers)]).toEqual([
          b.status,
          await b.text(),
          headerObject(b.headers),
        ]);
      }
    }
    // The routed side has now counted 4 of each path (app.request above); then the same socket
    // requests on both sides. The hot side's series carry the routed side's labels exactly.
    for (let i = 0; i < 5; i++) {
      for (const path of ["/api/supply/circulating", "/api/supply/max"]) {
        await send(hot.base, path);
        await send(routed.base, path);
      }
    }
    const series = (route: string, n: number) =>
      `api_http_requests_total{method="GET",route="/api/supply/${route}",status="200"} ${n}`;
    expect(await supplySeries(hot.metrics)).toEqual([series("circulating", 6), series("max", 5)]);
    expect((await supplySeries(routed.metrics)).sort()).toEqual(
      [series("circulating", 9), series("max", 9), series("total", 4)].sort(),
    );
  });

  it("a failed read leaves nothing for the hot path: the next request is routed, fails closed, then recovers", async () => {
    d.proxy.setFault({ kind: "down" });
    const failed = await send(hot.base, "/api/supply/total?format=bare");
    expect([failed.status, failed.body, failed.headers["x-supply-error"]]).toEqual([502, "", "SUPPLY_RPC_UNREACHABLE"]);
    expect(hotPathOf()(req("/api/supply/total"), undefined)).toBeUndefined();
    d.proxy.setFault(null);
    const good = await send(hot.base, "/api/supply/total?format=bare");
    expect(good.status).toBe(200);
    expect(hotPathOf()(req("/api/supply/total?format=bare"), undefined)?.status).toBe(200);
  });
});
