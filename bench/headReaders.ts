/**
 * The head's readers of the time-travel benches (bench/abuse-soak.ts, bench/abuse-time-travel.ts): `readers` clients,
 * each from a loopback address of its own (127.0.0.21, 127.0.0.22, … — none a flood uses) on a keep-alive connection
 * of its own, each reading `paths` in turn, its answers whole, then pausing `pauseMs` (within its own budget: two
 * index requests every 450 ms is under 300 a minute). One reader makes ~26 rounds in a 12 s flood, so "p99" over its
 * samples was their maximum: one collection or the flood's first loop iteration decided the figure. Four readers
 * give ~100 samples a path, where p99 is a p99 (the `percentile` of test/support/unreadPages.ts then leaves out the
 * slowest one, about 1 %); the slowest is printed beside it.
 */
import { Agent, request } from "node:http";

export type HeadSample = { status: number; ms: number };
export type HeadSamples<K extends string> = Record<K, HeadSample[]>;

export const HEAD_READERS = 4;
export const HEAD_PAUSE_MS = 450;

const readerAddress = (i: number) => `127.0.0.${21 + i}`;

/** One GET on `agent` from `localAddress`, its answer read whole: its status (0 on a failure or 5 s) and time. */
function timedGet(url: string, agent: Agent, localAddress: string): Promise<HeadSample> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number) => resolve({ status, ms: performance.now() - started });
    const req = request(url, { agent, localAddress, timeout: 5_000 }, (res) => {
      res.resume();
      res.on("end", () => done(res.statusCode ?? 0));
      res.on("error", () => done(0));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", () => done(0));
    req.end();
  });
}

/**
 * Runs the readers until `until()` is true (asked after each round), adding to `into`; resolves when all have
 * stopped. `rounds` > 0 stops each reader after that many rounds instead.
 */
export async function readHead<K extends string>(
  base: string,
  paths: Record<K, string>,
  into: HeadSamples<K>,
  o: { until?: () => boolean; rounds?: number; readers?: number; pauseMs?: number },
): Promise<void> {
  const names = Object.keys(paths) as K[];
  const reader = async (i: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let round = 0; o.rounds === undefined || round < o.rounds; round++) {
        for (const name of names) into[name].push(await timedGet(`${base}${paths[name]}`, agent, readerAddress(i)));
        if (o.until?.()) return;
        await new Promise((r) => setTimeout(r, o.pauseMs ?? HEAD_PAUSE_MS));
        if (o.until?.()) return;
      }
    } finally {
      agent.destroy();
    }
  };
  // Spread over one pause, so the readers' requests do not arrive together.
  const readers = o.readers ?? HEAD_READERS;
  const pause = o.pauseMs ?? HEAD_PAUSE_MS;
  await Promise.all(
    Array.from({ length: readers }, async (_, i) => {
      await new Promise((r) => setTimeout(r, (i * pause) / readers));
      await reader(i);
    }),
  );
}

export const emptySamples = <K extends string>(paths: Record<K, string>): HeadSamples<K> =>
  Object.fromEntries(Object.keys(paths).map((k) => [k, []])) as unknown as HeadSamples<K>;
