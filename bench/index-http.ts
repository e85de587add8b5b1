/**
 * The index routes over HTTP against a bare server (issue 33, item 3): the API process as operators run it (the built
 * dist/server/main.js over a synthetic index of Base's size in Postgres: test/support/servedIndex.ts) beside a bare
 * `node:http` + `pg` server (bench/bareIndexServer.mjs, its own process, no framework) that, for each request, sends
 * exactly the statements the read model sent for that request (recorded from the read model itself, in this process:
 * bench/recordedIndex.ts), prepared under the same names on a pool of the same size and session, then writes the API's
 * own answer for it (serialised per request). So the difference is everything the API process does beyond its SQL and
 * its JSON: parsing, routing, middleware, checks, Response handling.
 *
 * Routes, each over many keys (autocannon cycles through them: a new account or lock per request): an account's
 * events page (100), an account's locks, the ve board's first page (100), a rank lookup, a lock, the stats; at 8 and
 * 50 connections; ROUNDS interleaved rounds (API, bare; then bare, API), DURATION_S each; the figure per route and
 * connection count is the median over rounds of req/s (API over bare), p50 and p99 (API over bare). Then GraphQL's
 * page of the same accounts' 100 events (`POST /graphql`, the REST row's fields, its rows checked equal to REST's)
 * against the REST route's page on the same process, the same way (item 3: ≤ 1.3× REST). Beside the load,
 * 20 sockets that send requests and never read them; the API process's RSS and descriptors before and after (the
 * descriptors also once the load's connections have closed: back to where they were, beside the 20); each side's
 * CPU time per request (from /proc, the median over rounds).
 *
 * Usage: npx tsx bench/index-http.ts [events=520000] [rounds=3] [durationS=3]
 * Env: PROFILE_DIR — the API process writes a CPU profile (.cpuprofile) there at the end, the bare server in its
 * `bare` folder; ROUTES — a comma-separated subset of the routes' names to load (e.g. `lock,stats`, `graphql page`;
 * an unknown name is refused), to profile one route alone.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { createApp } from "../api/app";
import { loadConfig } from "../api/config";
import { silentLogger } from "../api/observability/logger";
import { INDEX_DB_SESSION } from "../api/server/indexDatabase";
import { freePort } from "../devnet/anvil";
import { buildOnce } from "../test/support/build";
import { writeManifest } from "../test/support/ponder";
import { startServedIndex } from "../test/support/servedIndex";
import { collectNow } from "./benchHeap";
import { BENCH_PG_URL } from "./productionTopology";
import { createRecordedIndex, type RecordedStatement } from "./recordedIndex";
import { neverReading } from "./unreadClient";

const EVENTS = Number(process.argv[2] ?? 520_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const DURATION_S = Number(process.argv[4] ?? 3);
const SCHEMA = "bench_index_http";
const BASE = "/api/index/v1";
const KEYS = 200;
/** ROUTES: the routes to load (their names, comma-separated); the account events' paths are kept for the unread sockets. */
const ONLY = process.env.ROUTES?.split(",").map((r) => r.trim());
const ROUTE_NAMES = ["account events", "account locks", "ve board page", "rank lookup", "lock", "stats"];
/** GraphQL's page of an account's 100 events, against the REST route's same page on the same process (item 3: ≤ 1.3×). */
const GRAPHQL_PAGE = "graphql page";
/** The fields of a REST event row, asked of GraphQL (so both answers carry the same rows). */
const EVENT_FIELDS =
  "kind tokenId account amountWei lockEnd autoMax fromTokenId recipient owner lockAmountWei listed blockNumber blockTimestamp txHash logIndex";
// A name matching no route would leave nothing measured and print a figure of nothing: refused before the index is
// built.
const unknownRoutes = ONLY?.filter((name) => !ROUTE_NAMES.includes(name) && name !== GRAPHQL_PAGE) ?? [];
if (unknownRoutes.length > 0) {
  console.error(
    `ROUTES: no route named ${unknownRoutes.map((n) => `"${n}"`).join(", ")}; the routes: ` +
      [...ROUTE_NAMES, GRAPHQL_PAGE].join(", "),
  );
  process.exit(2);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ")[0];
/** The process's CPU time so far (user + system), in ms: /proc/<pid>/stat's utime and stime, in clock ticks of 10 ms. */
/** The process's read and write system calls so far (/proc/<pid>/io's syscr + syscw). */
const syscalls = (pid: number) => {
  const io = readFileSync(`/proc/${pid}/io`, "utf8");
  return Number(/syscr: (\d+)/.exec(io)![1]) + Number(/syscw: (\d+)/.exec(io)![1]);
};
/** The sockets that send requests and never read their answers, beside the load. */
const NEVER_READING = 20;
/** Descriptors the process may open or close by itself meanwhile (a pool connection, the signal's, a log file). */
const FDS_SLACK = 4;
/** `count()` once it has not fallen for 500 ms (at most 5 s): what is left once the closing connections are closed. */
async function settledCount(count: () => number): Promise<number> {
  let last = count();
  for (let waited = 0, still = 0; waited < 5_000 && still < 500; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = count();
    still = now < last ? 0 : still + 100;
    last = now;
  }
  return last;
}
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};

/**
 * The paths of each route, and what the read model sends for each (recorded in this process, written to a plan file
 * for the bare server). A function of its own, so the in-process app, its memos and the synthetic index it read are
 * garbage once it returns: this process runs autocannon beside the two servers and must not collect them meanwhile.
 */
async function pathsAndPlan(): Promise<{ routes: Record<string, string[]>; accounts: string[]; planFile: string }> {
  const live = [...served.index.locks.values()].filter((l) => !l.burned);
  const byOwner = new Map<string, number>();
  for (const l of live) if (l.owner) byOwner.set(l.owner, (byOwner.get(l.owner) ?? 0) + 1);
  const owners = [...byOwner.entries()].sort((a, b) => b[1] - a[1]).map(([o]) => o);
  const accounts = owners.slice(0, KEYS);
  const lockIds = live.slice(0, KEYS).map((l) => l.tokenId);
  const routes: Record<string, string[]> = {
    "account events": accounts.map((a) => `${BASE}/accounts/${a}/events?limit=100`),
    "account locks": accounts.map((a) => `${BASE}/accounts/${a}/locks`),
    "ve board page": [`${BASE}/leaderboards/ve?limit=100`],
    "rank lookup": accounts.map((a) => `${BASE}/leaderboards/ve/${a}`),
    lock: lockIds.map((id) => `${BASE}/locks/${id}`),
    stats: [`${BASE}/stats`],
  };
  if (Object.keys(routes).join() !== ROUTE_NAMES.join())
    throw new Error("index-http: ROUTE_NAMES differs from the routes");
  if (ONLY) {
    for (const name of Object.keys(routes)) if (!ONLY.includes(name) && name !== "account events") delete routes[name];
  }
  const recorded = createRecordedIndex(served.databaseUrl, SCHEMA);
  const app = createApp({
    config: {
      ...loadConfig({ NETWORK: "local", MANIFEST_FILE: writeManifest(served.devnet.deployment.manifest) }),
      rateLimit: { max: 1e9, windowSec: 60 },
    },
    rpc: null,
    index: { atBlock: recorded.reader },
    logger: silentLogger,
  });
  const plan: Record<string, { statements: RecordedStatement[]; body: string }> = {};
  for (const paths of Object.values(routes)) {
    for (const p of paths) {
      // Twice: the board's and stats' one computation per block is the first request's; a page's work the second's.
      await (await app.request(p)).arrayBuffer();
      recorded.take();
      const res = await app.request(p);
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${p}: ${res.status} ${body}`);
      plan[p] = { statements: recorded.take(), body };
      if (p === paths[0]) console.log(`${p}: ${plan[p]!.statements.length} statement(s), ${body.length} B answer`);
    }
  }
  await recorded.end();
  const planFile = path.join(dir, "plan.json");
  writeFileSync(
    planFile,
    JSON.stringify(plan, (_, v) => (typeof v === "bigint" ? v.toString() : v)),
  );
  return { routes, accounts, planFile };
}

await buildOnce();
const served = await startServedIndex({
  serverUrl: BENCH_PG_URL,
  schema: SCHEMA,
  synthetic: { events: EVENTS, owners: Math.max(20, Math.round((EVENTS * 95_000) / 520_000)), seed: 31 },
  // PROFILE_DIR: the API process writes a CPU profile there when the bench ends (node --cpu-prof).
  env: {
    RATE_LIMIT_MAX: "1000000",
    ...(process.env.PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROFILE_DIR}` } : {}),
  },
});
const api = served.api;
const dir = mkdtempSync(path.join(os.tmpdir(), "index-http-"));
let bare: ReturnType<typeof spawn> | undefined;
const neverRead: { close(): void }[] = [];
try {
  // -------------------------------------------------------------- the paths, and what the read model sends for each
  const { routes, accounts, planFile } = await pathsAndPlan();
  served.releaseIndex();
  collectNow();

  const port = await freePort();
  bare = spawn(process.execPath, [path.join(import.meta.dirname, "bareIndexServer.mjs")], {
    env: {
      ...process.env,
      PORT: String(port),
      PLAN_FILE: planFile,
      DATABASE_URL: served.databaseUrl,
      POOL_MAX: "10",
      PG_OPTIONS: INDEX_DB_SESSION,
      ...(process.env.PROFILE_DIR
        ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.join(process.env.PROFILE_DIR, "bare")}` }
        : {}),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve) => bare!.stdout!.once("data", () => resolve()));
  const bareUrl = `http://127.0.0.1:${port}`;

  // Warm both (the API's first requests fill its memos; the bare server's prepared statements on each connection).
  // Latencies from each response's own time (autocannon's 'response' event, fractional ms): its histogram counts whole
  // milliseconds, so a 1.4 ms answer against a 0.6 ms one read as 2× or 1× by where they fell.
  const run = async (
    url: string,
    paths: string[] | autocannon.Request[],
    connections: number,
    duration = DURATION_S,
  ) => {
    const ms: number[] = [];
    const odd: Record<number, number> = {};
    // Without a callback autocannon answers its instance, an emitter that is also the promise of its result.
    const instance = autocannon({
      url,
      connections,
      duration,
      requests: paths.map((p) => (typeof p === "string" ? { method: "GET", path: p } : p)),
    }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
    instance.on("response", (_client: unknown, status: number, _bytes: number, responseMs: number) => {
      ms.push(responseMs);
      if (status < 200 || status > 299) odd[status] = (odd[status] ?? 0) + 1;
    });
    const result = await instance;
    ms.sort((x, y) => x - y);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(ms.length * q))] ?? Number.NaN;
    return Object.assign(result, { exact: { p50: at(0.5), p99: at(0.99) }, odd });
  };
  for (const paths of Object.values(routes)) {
    await run(api.url, paths, 10, 1);
    await run(bareUrl, paths, 10, 1);
  }

  // A client that sends and never reads, beside the whole measurement (20 sockets × 20 pipelined requests).
  const rss0 = rssMb(api.pid);
  const fds0 = fds(api.pid);
  neverRead.push(neverReading(api.port, routes["account events"]!.slice(0, NEVER_READING)));

  const lines: string[] = [];
  const worst = { rps: Number.POSITIVE_INFINITY, p50: 0, p99: 0 };
  for (const [route, paths] of Object.entries(routes)) {
    if (ONLY && !ONLY.includes(route)) continue;
    for (const connections of [8, 50]) {
      const rps: number[] = [];
      const absolute: string[] = [];
      let refused = 0;
      const refusedBy: Record<number, number> = {};
      const p50: number[] = [];
      const p99: number[] = [];
      const cpu = { api: [] as number[], bare: [] as number[] };
      const calls = { api: [] as number[], bare: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? ["api", "bare"] : ["bare", "api"];
        const r: Record<string, Awaited<ReturnType<typeof run>>> = {};
        for (const side of order) {
          const pid = side === "api" ? api.pid : bare.pid!;
          const before = cpuMs(pid);
          const syscallsBefore = syscalls(pid);
          r[side] = await run(side === "api" ? api.url : bareUrl, paths, connections);
          cpu[side as "api" | "bare"].push(((cpuMs(pid) - before) * 1000) / r[side]!.requests.total);
          calls[side as "api" | "bare"].push((syscalls(pid) - syscallsBefore) / r[side]!.requests.total);
        }
        const a = r.api!;
        const b = r.bare!;
        // Refusals are the API's own (a page's row admission, 503 busy): counted and shown, not thrown.
        if (b.non2xx > 0 || a.errors > 0 || b.errors > 0) throw new Error(`${route}: bare non-2xx ${b.non2xx}`);
        refused += a.non2xx;
        for (const [status, n] of Object.entries(a.odd))
          refusedBy[Number(status)] = (refusedBy[Number(status)] ?? 0) + n;
        rps.push(a.requests.average / b.requests.average);
        absolute.push(`${Math.round(a.requests.average)}/${Math.round(b.requests.average)}`);
        p50.push(a.exact.p50 / b.exact.p50);
        p99.push(a.exact.p99 / b.exact.p99);
      }
      const m = { rps: median(rps), p50: median(p50), p99: median(p99) };
      worst.rps = Math.min(worst.rps, m.rps);
      worst.p50 = Math.max(worst.p50, m.p50);
      if (connections === 50) worst.p99 = Math.max(worst.p99, m.p99);
      lines.push(
        `${route.padEnd(15)} ${String(connections).padStart(2)} conns: req/s ${m.rps.toFixed(2)}× bare, p50 ` +
          `${m.p50.toFixed(2)}×, p99 ${m.p99.toFixed(2)}×; CPU a request ${median(cpu.api).toFixed(0)} / ${median(cpu.bare).toFixed(0)} µs, ` +
          `read/write calls ${median(calls.api).toFixed(1)} / ${median(calls.bare).toFixed(1)} ` +
          `(req/s API/bare by round ${absolute.join(" ")}; API non-2xx ${refused}${refused ? ` ${JSON.stringify(refusedBy)}` : ""}; load ${load()})`,
      );
      console.log(lines.at(-1));
    }
  }
  // GraphQL's page of an account's 100 events against the REST route's same page, both on the API process (item 3:
  // ≤ 1.3× REST). One document with the account as a variable, as a front end sends it (a new document's compilation
  // is measured by graphql-document-bytes and abuse-choices). Each request takes the next account of one sequence
  // shared by all connections: autocannon's own list starts every connection at its first entry, and GraphQL shares
  // an execution between identical concurrent requests (api/graphql/endpoint.ts), so connections in step would measure
  // the sharing. Interleaved rounds, the order alternating; medians.
  let graphqlWorst: { rps: number; p50: number } | undefined;
  if (!ONLY || ONLY.includes(GRAPHQL_PAGE)) {
    const document = `query Page($a: String!) { lockEvents(where: { account: $a }, limit: 100) { items { ${EVENT_FIELDS} } } }`;
    const graphqlBody = (a: string) => JSON.stringify({ query: document, variables: { a } });
    let next = 0;
    const account = () => accounts[next++ % accounts.length]!;
    const graphql: autocannon.Request[] = [
      {
        method: "POST",
        path: "/graphql",
        headers: { "content-type": "application/json" },
        setupRequest: (req) => ({ ...req, body: graphqlBody(account()) }),
      },
    ];
    const restPaths: autocannon.Request[] = [
      { method: "GET", setupRequest: (req) => ({ ...req, path: `${BASE}/accounts/${account()}/events?limit=100` }) },
    ];
    // The two answers carry the same rows (else the comparison is of different work), checked for a few accounts.
    for (const a of accounts.slice(0, 5)) {
      const g = (await (
        await fetch(`${api.url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: graphqlBody(a),
        })
      ).json()) as { data?: { lockEvents: { items: unknown[] } }; errors?: unknown };
      const r = (await (await fetch(`${api.url}${BASE}/accounts/${a}/events?limit=100`)).json()) as {
        events: unknown[];
      };
      if (g.errors || JSON.stringify(g.data?.lockEvents.items) !== JSON.stringify(r.events)) {
        throw new Error(`graphql page: ${a}: GraphQL's rows differ from REST's (${JSON.stringify(g.errors ?? null)})`);
      }
    }
    await run(api.url, graphql, 10, 1);
    graphqlWorst = { rps: Number.POSITIVE_INFINITY, p50: 0 };
    for (const connections of [8, 50]) {
      const rps: number[] = [];
      const p50: number[] = [];
      const p99: number[] = [];
      const absolute: string[] = [];
      const cpu = { graphql: [] as number[], rest: [] as number[] };
      const refused: Record<string, number> = {};
      for (let round = 0; round < ROUNDS; round++) {
        const r: Record<string, Awaited<ReturnType<typeof run>>> = {};
        for (const side of round % 2 === 0 ? ["graphql", "rest"] : ["rest", "graphql"]) {
          const before = cpuMs(api.pid);
          r[side] = await run(api.url, side === "graphql" ? graphql : restPaths, connections);
          cpu[side as "graphql" | "rest"].push(((cpuMs(api.pid) - before) * 1000) / r[side]!.requests.total);
          // Refusals are the API's own (a page's row admission, 503 busy): counted and shown, as above.
          if (r[side]!.errors > 0) throw new Error(`graphql page, ${side}: ${r[side]!.errors} errors`);
          for (const [status, n] of Object.entries(r[side]!.odd))
            refused[`${side} ${status}`] = (refused[`${side} ${status}`] ?? 0) + n;
        }
        rps.push(r.graphql!.requests.average / r.rest!.requests.average);
        absolute.push(`${Math.round(r.graphql!.requests.average)}/${Math.round(r.rest!.requests.average)}`);
        p50.push(r.graphql!.exact.p50 / r.rest!.exact.p50);
        p99.push(r.graphql!.exact.p99 / r.rest!.exact.p99);
      }
      const m = { rps: median(rps), p50: median(p50) };
      graphqlWorst.rps = Math.min(graphqlWorst.rps, m.rps);
      graphqlWorst.p50 = Math.max(graphqlWorst.p50, m.p50);
      console.log(
        `${GRAPHQL_PAGE.padEnd(15)} ${String(connections).padStart(2)} conns: req/s ${m.rps.toFixed(2)}× REST's page, ` +
          `p50 ${m.p50.toFixed(2)}×, p99 ${median(p99).toFixed(2)}×; CPU a request ${median(cpu.graphql).toFixed(0)} / ` +
          `${median(cpu.rest).toFixed(0)} µs ` +
          `(req/s GraphQL/REST by round ${absolute.join(" ")}; non-2xx ${JSON.stringify(refused)}; load ${load()}; RSS ${rssMb(api.pid).toFixed(0)} MB)`,
      );
    }
  }
  // Right after the load its last connections are still closing (autocannon's 50): the count is read again once it
  // has stopped falling, and must be back to where it was, with at most the never-reading sockets beside it (the
  // process may have closed them: api/server/sendTimeout.ts).
  const fdsAfter = fds(api.pid);
  const fdsSettled = await settledCount(() => fds(api.pid));
  const fdsGoal = fds0 + NEVER_READING + FDS_SLACK;
  console.log(
    `the API process: RSS ${rss0.toFixed(0)} → ${rssMb(api.pid).toFixed(0)} MB, descriptors ${fds0} → ${fdsAfter} ` +
      `after the load, ${fdsSettled} settled (at most ${fdsGoal}: where they were, the ${NEVER_READING} never-reading ` +
      `sockets if still held, ${FDS_SLACK} more; ${fdsSettled <= fdsGoal ? "met" : "ABOVE: descriptors held past their requests"})`,
  );
  console.log(
    "index-http: " +
      (Number.isFinite(worst.rps)
        ? `worst route req/s ${worst.rps.toFixed(2)}× the bare node:http + pg server (goal ≥ 0.8), p50 ` +
          `${worst.p50.toFixed(2)}× (goal ≤ 1.25), p99 at 50 connections ${worst.p99.toFixed(2)}× (goal ≤ 1.5)`
        : "no route against the bare server (ROUTES)") +
      (graphqlWorst
        ? `; GraphQL's page p50 ${graphqlWorst.p50.toFixed(2)}× REST's (goal ≤ 1.3), req/s ${graphqlWorst.rps.toFixed(2)}×`
        : ""),
  );
} finally {
  for (const client of neverRead) client.close();
  if (process.env.PROFILE_DIR) await api.stop("SIGTERM", 10_000);
  if (process.env.PROFILE_DIR && bare) {
    const exited = new Promise((resolve) => bare!.once("exit", resolve));
    bare.kill("SIGTERM");
    await exited;
  } else bare?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  await served.stop();
}
