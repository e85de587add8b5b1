/**
 * The first reader of a new block (issue 33, item 6: "no user waits for a recomputation"): the ve board and the stats
 * are functions of the block, so each new head's are computed once; at Base scale that was ~0.4–0.5 s, which the
 * first reader of the block waited while every later one got it from memory in a millisecond. The API process now
 * computes each new head's ahead of its first reader while they are read (api/read/computeAhead.ts), the ranking
 * derived from an anchor and made ahead for the next block (api/read/veBoard.ts), the stats derived with it
 * (api/read/veStats.ts).
 *
 * Production topology: the API process as operators run it (the built dist/server/main.js) over a synthetic index of
 * Base's proportions in Postgres behind a views schema, so the index's commits reach it as LISTEN/NOTIFY
 * (api/read/indexSignal.ts) exactly as from `ponder start --views-schema`. The bench plays the indexer: every PACE_MS
 * it commits a new head (Ponder's `_ponder_checkpoint` row, one block and 2 s later) and plays front ends in turn: a
 * poller that names no block, asking at once after the commit or at a random offset within the pace, and a client
 * that learnt of block N and accepts nothing older (`minBlock=N`, `waitMs=2000`); each asks twice, the first request
 * of the block and a repeat; the ve board's first page for four blocks (one per reader, and the control below), then
 * `/stats` for four. The control reads the new head at once unmeasured, waits, and asks again: the answer already made,
 * so its first request over its repeat is this machine's floor for a first request after a pause, and each reader's
 * first over the control's first is what the new block itself cost.
 * A head read is pinned to the head the process was notified of (api/read/notifiedHead.ts): a poller that comes
 * before the commit's notification is heard is answered at the block before, and asks again (counted and printed);
 * its first answer at the new block is the one measured.
 * Every other run of six blocks, each block has a lock event of its own (a top-up of a live lock, committed with the
 * block's checkpoint in one transaction, as Ponder commits a block; LOCK_EVENTS_PER_BLOCK top-ups of as many locks, a
 * burst): about one Base block in thirty does, and those were the blocks whose ranking was made at the commit (now
 * patched from the one made ahead). Reported apart.
 * Goal: the first within 2× the repeat, per route and reader. Also the process's CPU over the run
 * (ahead computations included), RSS and open descriptors before and after.
 *
 * Usage: npx tsx bench/first-reader.ts [events=520000] [blocks=64] (16 blocks a round of readers, routes and kinds)
 * Env: PACE_MS (2000); LOCK_EVENTS=0 (no block with a lock event); LOCK_EVENTS_PER_BLOCK (1; e.g. 40, a burst that
 * still fits the notification: api/read/indexSignal.ts CARRIED_ROWS); PROFILE_DIR — the API process writes a CPU
 * profile there when it stops, sampled every PROFILE_INTERVAL µs (1000; 100 to see one request's steps).
 */
import { readdirSync, readFileSync } from "node:fs";
import { writeManifest } from "../test/support/ponder";
import { spawnService } from "../test/support/replica";
import { startRpcProxy } from "../test/support/rpcProxy";
import { checkpointOf } from "../test/support/syntheticIndex";
import { collectNow } from "./benchHeap";
import { cpuTicks, rssMb } from "./processMemory";
import { servedBehindViews } from "./productionTopology";

const EVENTS = Number(process.argv[2] ?? 520_000);
const BLOCKS = Number(process.argv[3] ?? 64);
const PACE_MS = Number(process.env.PACE_MS ?? 2_000);
const LOCK_EVENTS = process.env.LOCK_EVENTS !== "0";
const PER_BLOCK = Number(process.env.LOCK_EVENTS_PER_BLOCK ?? 1);
const SCHEMA = "bench_first_reader";
const VIEWS = "bench_first_reader_views";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ")[0];

const { served, admin } = await servedBehindViews({ events: EVENTS, schema: SCHEMA, views: VIEWS, seed: 29 });

const chainId = served.devnet.deployment.manifest.chainId;
// The synthetic index runs ~390,000 blocks ahead of the devnet's chain, and a minBlock more than 5 blocks beyond the
// chain's head is refused (api/read/atLeast.ts): the API process reads the devnet through a proxy whose
// eth_blockNumber, asked alone, answers a head past the last block this bench commits; every other call goes to anvil.
const node = await startRpcProxy({ upstream: served.devnet.rpcUrl });
node.setFault({
  kind: "result",
  value: `0x${(served.index.head.block + BigInt(BLOCKS) + 8n).toString(16)}`,
  // Asked alone: minBlock's chain head. The branch check asks it in a batch with the index's final event's receipt,
  // and the devnet's own head (below that event) keeps it concluding nothing, as it did before.
  match: (method, _params, batch) => method === "eth_blockNumber" && !batch,
});
const api = await spawnService({
  command: "api",
  rpcUrl: node.url,
  manifestFile: writeManifest(served.devnet.deployment.manifest),
  databaseUrl: served.databaseUrl,
  schema: SCHEMA,
  viewsSchema: VIEWS,
  env: {
    LOG_LEVEL: "error",
    REDIS_URL: "",
    RATE_LIMIT_MAX: "100000",
    // PROFILE_DIR: the API process writes a CPU profile there when it stops (node --cpu-prof).
    ...(process.env.PROFILE_DIR
      ? {
          NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROFILE_DIR} --cpu-prof-interval=${
            process.env.PROFILE_INTERVAL ?? 1000
          }`,
        }
      : {}),
  },
});
await api.waitFor200("/ready", 60_000);

const get = async (path: string) => {
  const t0 = performance.now();
  const res = await fetch(`${api.url}/api/index/v1${path}`);
  const body = (await res.json()) as { blockNumber?: string };
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return { ms: performance.now() - t0, block: BigInt(body.blockNumber!) };
};

// The board read at the head once: from now on the process computes each new head ahead of its readers.
const warm = await get("/leaderboards/ve?limit=100");
const holders = Number(
  ((await (await fetch(`${api.url}/api/index/v1/leaderboards/ve?limit=1`)).json()) as { holders?: string }).holders ??
    0,
);
console.log(
  `index: ${EVENTS} events, ${holders} holders on the board; first board at the head ${warm.ms.toFixed(0)} ms; ` +
    `${PER_BLOCK} lock event(s) in each block with any`,
);

let block = served.index.head.block;
let time = served.index.head.time;
// The synthetic index (hundreds of MB) let go and collected before the blocks are measured: this process's own
// collections of it stalled its clock mid-request (bench/benchHeap.ts), a first request of 20 ms against 1.5 ms served.
served.releaseIndex();
collectNow();
// A fourth reader is the control: it reads the new head at once (not measured), waits as the others wait (~1.6 s),
// then asks again: the same answer, already made and kept — nothing new to compute or write. Its first request over
// its repeat is what a first request after a pause costs on this machine (the process and the bench idle: caches, the
// scheduler), against which the others are read.
type Mode = "at once" | "random offset" | "minBlock" | "control";
const MODES: Mode[] = ["at once", "random offset", "minBlock", "control"];
// The ve board and the stats in turn, three blocks each (one per mode): each block's first reader asks one of them.
type Route = "board" | "stats";
const ROUTES: Route[] = ["board", "stats"];
const ROUTE_PATH: Record<Route, string> = { board: "/leaderboards/ve?limit=100", stats: "/stats" };
// Blocks without a lock event, and blocks with one of their own.
type Kind = "quiet" | "lock event";
const KINDS: Kind[] = LOCK_EVENTS ? ["quiet", "lock event"] : ["quiet"];
const first = new Map<string, number[]>();
const repeat = new Map<string, number[]>();
const seriesOf = (m: Map<string, number[]>, key: string) => m.get(key) ?? m.set(key, []).get(key)!;
// Live locks to top up, PER_BLOCK per block with a lock event: each gains 1,000 tokens, its owner, end and flags as they were.
// Live as the chain has them: not burned, and not merged into another (a merge burns its source; the contract would
// refuse a top-up of it, and a top-up row for it is one the index can never hold: the carried rows and the statement
// then disagree, which the check reports as `differed`).
const { rows: topUps } = await admin.query<{ token_id: string }>(
  `SELECT token_id FROM (SELECT DISTINCT ON (token_id) token_id, burned, owner FROM "${SCHEMA}".lock_event
     ORDER BY token_id, block_number DESC, log_index DESC) s WHERE NOT burned AND owner IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM "${SCHEMA}".lock_event m WHERE m.from_token_id = s.token_id)
   ORDER BY token_id DESC LIMIT $1`,
  [BLOCKS * PER_BLOCK],
);
const topUp = (tokenId: string, block: bigint, time: bigint, log: number) =>
  admin.query(
    `INSERT INTO "${SCHEMA}".lock_event (id, kind, token_id, account, amount, lock_end, auto_max, from_token_id,
       recipient, owner, lock_amount, listed, burned, block_number, block_time, tx_hash, log_index)
     SELECT $2 || '-' || $5::int, 'topup', token_id, owner, 1000000000000000000000, lock_end, auto_max, NULL, NULL, owner,
       lock_amount + 1000000000000000000000, listed, burned, $3, $4, $2, $5::int
       FROM "${SCHEMA}".lock_event WHERE token_id = $1 ORDER BY block_number DESC, log_index DESC LIMIT 1`,
    [tokenId, `0x${block.toString(16).padStart(64, "f")}`, block.toString(), time.toString(), log],
  );
/** Pollers' answers at the block before the one just committed (asked before its notification was heard). */
let earlier = 0;
// The event loop's delay over the run (prom-client's monitor, reset by each scrape): its longest stall is what any
// request of the process (a supply poller's, a stream's) waited behind the work of a block.
await (await fetch(`${api.url}/api/metrics`)).text();
// An aggregator's poller beside the readers: the static max supply (answered in microseconds, no read) every 5 ms, so
// its slowest answers are what any request waited behind the process's own work for a block (the ranking made ahead,
// a statement's rows parsed), request by request — the event loop's delay above counts a whole I/O phase.
const ticks: number[] = [];
let ticking = true;
const ticker = (async () => {
  while (ticking) {
    const t0 = performance.now();
    await (await fetch(`${api.url}/api/supply/max`)).arrayBuffer();
    ticks.push(performance.now() - t0);
    await sleep(5);
  }
})();
const rssBefore = rssMb(api.pid);
const fdsBefore = fds(api.pid);
const cpuBefore = cpuTicks(api.pid);
const started = performance.now();
for (let i = 0; i < BLOCKS; i++) {
  const paceEnd = performance.now() + PACE_MS;
  block += 1n;
  time += 2n;
  const latest = checkpointOf(chainId, block, time);
  const mode = MODES[i % MODES.length]!;
  const route = ROUTES[Math.floor(i / MODES.length) % ROUTES.length]!;
  const kind = KINDS[Math.floor(i / (MODES.length * ROUTES.length)) % KINDS.length]!;
  // The block's events and its checkpoint in one commit, as Ponder's.
  await admin.query("BEGIN");
  if (kind === "lock event") {
    for (let e = 0; e < PER_BLOCK; e++) {
      await topUp(topUps[(i * PER_BLOCK + e) % topUps.length]!.token_id, block, time, e);
    }
  }
  await admin.query(`UPDATE "${SCHEMA}"."_ponder_checkpoint" SET latest_checkpoint = $1`, [latest]);
  await admin.query("COMMIT");
  if (mode === "random offset") await sleep(Math.random() * (PACE_MS - 400));
  // A poller names no block (the head's newest computed answer); a client that knows block N asks minBlock=N.
  const base = ROUTE_PATH[route];
  const path = mode === "minBlock" ? `${base}${base.includes("?") ? "&" : "?"}minBlock=${block}&waitMs=2000` : base;
  if (mode === "control") {
    let warm = await get(path);
    while (warm.block === block - 1n && earlier++ < BLOCKS * 10) warm = await get(path);
    await sleep(Math.max(0, paceEnd - 400 - performance.now()));
  }
  let a = await get(path);
  // A poller that came before the process heard the commit's notification is answered at the block before (its
  // answer says so: api/read/notifiedHead.ts); the first request answered at the new block is the one measured.
  while (mode !== "minBlock" && a.block === block - 1n && earlier++ < BLOCKS * 10) a = await get(path);
  // The same request again: the same head, the answer now in memory.
  const b = await get(path);
  if (a.block !== block || b.block !== block) throw new Error(`answered ${a.block}/${b.block} at head ${block}`);
  seriesOf(first, `${route} ${mode} ${kind}`).push(a.ms);
  seriesOf(repeat, `${route} ${mode} ${kind}`).push(b.ms);
  await sleep(Math.max(0, paceEnd - performance.now()));
}
ticking = false;
await ticker;
const seconds = (performance.now() - started) / 1000;
const cpu = (cpuTicks(api.pid) - cpuBefore) / 100 / seconds;
const metrics = await (await fetch(`${api.url}/api/metrics`)).text();
const ahead = /api_index_computed_ahead_total\{answer="board",outcome="ok"\} (\d+)/.exec(metrics)?.[1] ?? "0";
const computed = /api_index_ve_board_computations_total (\d+)/.exec(metrics)?.[1] ?? "?";
// Blocks whose board (with its first page and stats) was made between heads and taken as it was.
const taken = /api_index_ve_board_taken_ahead_total (\d+)/.exec(metrics)?.[1] ?? "0";
// Blocks with a lock event whose ranking was the one made ahead, patched with it.
const patched = /api_index_ve_board_patched_ahead_total (\d+)/.exec(metrics)?.[1] ?? "0";
const lagMs = (q: string) =>
  (
    Number(new RegExp(`^nodejs_eventloop_lag_${q}_seconds (\\S+)$`, "m").exec(metrics)?.[1] ?? Number.NaN) * 1000
  ).toFixed(1);
// Quiet blocks whose changed locks were taken from the head before (the NOTIFY's write count), and the checks after.
const quiet = (outcome: string) =>
  new RegExp(`api_index_ve_quiet_blocks_total\\{outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1] ?? "0";

const ratios = new Map<string, number>();
for (const kind of KINDS) {
  for (const route of ROUTES) {
    for (const mode of MODES) {
      const key = `${route} ${mode} ${kind}`;
      const f = first.get(key) ?? [];
      const r = repeat.get(key) ?? [];
      if (f.length === 0) continue;
      const [f50, r50, f99, r99] = [pct(f, 50), pct(r, 50), pct(f, 99), pct(r, 99)];
      ratios.set(key, f50 / r50);
      console.log(
        `${route} ${mode}, ${kind}: first request of a block p50 ${f50.toFixed(1)} ms, p99 ${f99.toFixed(1)} ms; a ` +
          `repeat p50 ${r50.toFixed(1)} ms, p99 ${r99.toFixed(1)} ms; ratio p50 ${(f50 / r50).toFixed(2)}×, p99 ` +
          `${(f99 / r99).toFixed(2)}× (n=${f.length})`,
      );
    }
  }
}
console.log(
  `the API process: ${computed} board computations (${ahead} ahead of the first reader, ${taken} made between ` +
    `heads and taken, ${patched} patched from it for their lock event) for ${BLOCKS} blocks; ` +
    `${quiet("reused")} quiet blocks' changed locks taken from the head before, ${quiet("carried")} lock-event ` +
    `blocks' made from the head before's and the events their notification carried (${quiet("confirmed")} confirmed, ` +
    `${quiet("differed")} differed); ` +
    `${earlier} pollers' answers at the block before (come before its notification); ` +
    `event loop delay p99 ${lagMs("p99")} ms, max ${lagMs("max")} ms; a poller of /api/supply/max every 5 ms: ` +
    `p50 ${pct(ticks, 50).toFixed(2)} ms, p99 ${pct(ticks, 99).toFixed(2)} ms, p99.9 ${pct(ticks, 99.9).toFixed(1)} ms, ` +
    `max ${Math.max(...ticks).toFixed(1)} ms, over ${((ticks.filter((t) => t > 10).length / ticks.length) * 100).toFixed(2)} % 10 ms (n=${ticks.length}); ` +
    `CPU ${(cpu * 100).toFixed(1)} % of one core over ${seconds.toFixed(0)} s; RSS ${rssBefore.toFixed(0)} → ` +
    `${rssMb(api.pid).toFixed(0)} MB; descriptors ${fdsBefore} → ${fds(api.pid)}; load ${load()}`,
);
await api.stop(process.env.PROFILE_DIR ? "SIGTERM" : "SIGKILL");
await admin.end();
await served.stop();
await node.stop();
const x = (key: string) => ratios.get(key)?.toFixed(2) ?? "–";
// A first request against the control's first (both after the same pause): what the new block itself cost its reader.
const overControl = (route: Route, mode: Mode, kind: Kind) => {
  const f = first.get(`${route} ${mode} ${kind}`);
  const c = first.get(`${route} control ${kind}`);
  return f && c ? (pct(f, 50) / pct(c, 50)).toFixed(2) : "–";
};
for (const kind of KINDS) {
  for (const route of ROUTES) {
    console.log(
      `first-reader ${route}, ${kind}: first request of a new head over a repeat, p50 ${x(`${route} at once ${kind}`)}× ` +
        `(at once), ${x(`${route} random offset ${kind}`)}× (random offset), ${x(`${route} minBlock ${kind}`)}× ` +
        `(minBlock: waits for the computation); goal ≤ 2×; control (the answer already made, asked after a pause) ` +
        `${x(`${route} control ${kind}`)}×; first requests over the control's first, p50 ` +
        `${overControl(route, "at once", kind)}× (at once), ${overControl(route, "random offset", kind)}× (random offset), ` +
        `${overControl(route, "minBlock", kind)}× (minBlock)`,
    );
  }
}
