/**
 * The head's readers of the time-travel benches (bench/abuse-soak.ts, bench/abuse-time-travel.ts): `readers` clients,
 * each from a loopback address of its own (127.0.0.21, 127.0.0.22, … — none a flood uses) on a keep-alive connection
 * of its own, each reading `paths` in turn, its answers whole, then pausing `pauseMs` (within its own budget: two
 * index requests every 450 ms is under 300 a minute). One reader makes ~26 rounds in a 12 s flood, so "p99" over its
 * samples was their maximum: one collection or the flood's first loop iteration decided the figure. Four readers
 * give ~100 samples a path, where p99 is a p99 (the `percentile` of test/support/unreadPages.ts then leaves out the
 * slowest one, about 1 %); the slowest is printed beside it.
 *
 * The readers run in a process of their own (`startHeadReaders`, at normal priority, as the floods run in theirs at
 * the lowest): in the bench's process, which holds the synthetic index (520,000 events), its own collections (100–450 ms)
 * stalled the readers' clocks, and four readers were "slow" together while the API process was idle.
 */
import { spawn } from "node:child_process";
import { Agent } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { get } from "../test/support/unreadPages";

/** A reading: its status, its time, and when it began (ms after the readers' start). */
export type HeadSample = { status: number; ms: number; at: number };
export type HeadSamples<K extends string> = Record<K, HeadSample[]>;

export const HEAD_READERS = 4;
export const HEAD_PAUSE_MS = 450;

const readerAddress = (i: number) => `127.0.0.${21 + i}`;

/** One GET on `agent` from `localAddress`, its answer read whole: its status (0 on a failure or 3 s) and time. */
async function timedGet(url: string, agent: Agent, localAddress: string, t0: number): Promise<HeadSample> {
  const started = performance.now();
  const status = await get(url, { agent, localAddress });
  return { status, ms: performance.now() - started, at: started - t0 };
}

/**
 * The readers, in a process of their own, started and loaded before they read (a process starting beside the flood's
 * opening took CPU from it, and its first samples were its own start-up's): resolves once the process is ready; `go()`
 * then reads for `durationMs` (each reader stops after the round that passes it) or `rounds` rounds each, and resolves
 * with the samples by path, each sample's `at` in ms after `go()`.
 */
export async function startHeadReaders<K extends string>(
  base: string,
  paths: Record<K, string>,
  o: { durationMs?: number; rounds?: number; readers?: number; pauseMs?: number },
): Promise<{ go: () => Promise<HeadSamples<K>> }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "headReaders.ts")], {
    env: {
      ...process.env,
      BASE: base,
      PATHS: JSON.stringify(paths),
      DURATION_MS: String(o.durationMs ?? 0),
      ROUNDS: String(o.rounds ?? 0),
      READERS: String(o.readers ?? HEAD_READERS),
      PAUSE_MS: String(o.pauseMs ?? HEAD_PAUSE_MS),
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  const exited = new Promise<HeadSamples<K>>((resolve, reject) =>
    child.once("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out.slice(out.indexOf("\n") + 1))) : reject(new Error(`readers exited ${code}`)),
    ),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk;
      if (out.includes("ready\n")) resolve();
    });
    exited.catch(reject);
  });
  return {
    go: () => {
      child.stdin.end("go\n");
      return exited;
    },
  };
}

/** startHeadReaders, then go(): for a baseline, where nothing else starts. */
export async function runHeadReaders<K extends string>(
  base: string,
  paths: Record<K, string>,
  o: { durationMs?: number; rounds?: number; readers?: number; pauseMs?: number },
): Promise<HeadSamples<K>> {
  return (await startHeadReaders(base, paths, o)).go();
}

async function readHead<K extends string>(
  base: string,
  paths: Record<K, string>,
  o: { durationMs: number; rounds: number; readers: number; pauseMs: number },
): Promise<HeadSamples<K>> {
  const names = Object.keys(paths) as K[];
  const into = emptySamples(paths);
  const t0 = performance.now();
  const over = () => o.durationMs > 0 && performance.now() - t0 >= o.durationMs;
  const reader = async (i: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let round = 0; o.rounds === 0 || round < o.rounds; round++) {
        for (const name of names) into[name].push(await timedGet(`${base}${paths[name]}`, agent, readerAddress(i), t0));
        if (over()) return;
        await new Promise((r) => setTimeout(r, o.pauseMs));
        if (over()) return;
      }
    } finally {
      agent.destroy();
    }
  };
  // Spread over one pause, so the readers' requests do not arrive together.
  await Promise.all(
    Array.from({ length: o.readers }, async (_, i) => {
      await new Promise((r) => setTimeout(r, (i * o.pauseMs) / o.readers));
      await reader(i);
    }),
  );
  return into;
}

/** The samples slower than `goalMs`: how many, and when each began, in seconds after the readers began. */
export function overGoal(samples: readonly HeadSample[], goalMs: number): string {
  const slow = samples.filter((s) => s.ms > goalMs);
  if (slow.length === 0) return "none over the goal";
  const when = slow.map((s) => `${s.ms.toFixed(0)} ms at +${(s.at / 1000).toFixed(1)} s`);
  return `${slow.length} over the goal: ${when.join(", ")}`;
}

const emptySamples = <K extends string>(paths: Record<K, string>): HeadSamples<K> =>
  Object.fromEntries(Object.keys(paths).map((k) => [k, []])) as unknown as HeadSamples<K>;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  // Loaded: say so, and wait for the word to begin.
  console.log("ready");
  await new Promise<void>((resolve) => {
    let text = "";
    process.stdin.on("data", (chunk: Buffer) => {
      text += chunk;
      if (text.includes("go\n")) resolve();
    });
  });
  process.stdin.pause();
  const samples = await readHead(env.BASE!, JSON.parse(env.PATHS!) as Record<string, string>, {
    durationMs: Number(env.DURATION_MS),
    rounds: Number(env.ROUNDS),
    readers: Number(env.READERS),
    pauseMs: Number(env.PAUSE_MS),
  });
  console.log(JSON.stringify(samples));
}
