/**
 * Time travel in bench/index-api.ts (issue 23, 8: "an old block ≤ 3× the head"), measured so a noisy machine moves
 * both sides alike: every round reads at the head and at each past block, in an order that rotates by round; a
 * round's ratio is its past read over its own head read, and the figure of a block is the median of those ratios
 * (as the other benches' rounds). The machine's load average is printed with the figures.
 *
 * The past blocks include the two worst cases of the read model's two ways (api/read/atBlock.ts liveLocks): the
 * last block read from every lock's newest event (the most events below it) and the first block read from the
 * `lock` table plus the locks changed since (the most changed locks).
 */
import os from "node:os";
import { RECENT_SHARE } from "../api/read/atBlock";
import type { LockIndex } from "../api/read/contract";
import type { SyntheticIndex } from "../test/support/syntheticIndex";

export type TravelRatio = { name: string; ratio: number };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
export const loadAverage = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" / ");

/** The past blocks to read: a label and a block that has events (its time is in the index). */
export function travelBlocks(index: SyntheticIndex): [string, bigint][] {
  const first = index.events[0]!.blockNumber;
  const head = index.head.block;
  const blockAt = (share: number) => index.events[Math.floor(index.events.length * share)]!.blockNumber;
  // The switch of liveLocks: B is near the head when (head − B) × RECENT_SHARE ≤ B − first.
  const share = BigInt(RECENT_SHARE);
  const firstNear = (head * share + first + share) / (share + 1n);
  const eventBlocks = new Set(index.events.map((e) => e.blockNumber));
  const withEvents = (from: bigint, step: bigint) => {
    let b = from;
    while (!eventBlocks.has(b)) b += step;
    return b;
  };
  return [
    ["a tenth of the way in", blockAt(0.1)],
    ["half way", blockAt(0.5)],
    ["90 %", blockAt(0.9)],
    ["last block read from events", withEvents(firstNear - 1n, -1n)],
    ["first block read from `lock`", withEvents(firstNear, 1n)],
    ["recent (99 %)", blockAt(0.99)],
  ];
}

/**
 * `rounds` rounds of `read` at the head and at each block, rotating the order; prints each block's median time
 * and median per-round ratio to the head, and returns the ratios.
 */
export async function travelRounds(
  name: string,
  index: SyntheticIndex,
  blocks: [string, bigint][],
  read: (at: { block: bigint; time: bigint } | null) => Promise<unknown>,
  rounds: number,
): Promise<TravelRatio[]> {
  const points: [string, { block: bigint; time: bigint } | null][] = [
    ["head", null],
    ...blocks.map(([label, block]): [string, { block: bigint; time: bigint }] => [
      label,
      { block, time: index.blockTimes.get(block)! },
    ]),
  ];
  for (const [, at] of points) await read(at); // warm-up: pages, plans
  const ms = points.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < points.length; k++) {
      const i = (k + r) % points.length;
      const t = performance.now();
      await read(points[i]![1]);
      ms[i]!.push(performance.now() - t);
    }
  }
  const head = ms[0]!;
  const out: TravelRatio[] = [];
  console.log(`  ${name}: head p50 ${median(head).toFixed(0)} ms (${rounds} rounds)`);
  points.slice(1).forEach(([label, at], j) => {
    const times = ms[j + 1]!;
    const ratios = times.map((x, r) => x / head[r]!);
    const ratio = median(ratios);
    console.log(
      `    at ${label} (${at!.block}): p50 ${median(times).toFixed(0)} ms; past / head per round: median ` +
        `${ratio.toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
    );
    out.push({ name: `${name}, ${label}`, ratio });
  });
  return out;
}

/** The whole-index reads (the ve ranking, the stats), uncached: the read model directly. */
export async function wholeIndexTravel(
  reader: LockIndex,
  index: SyntheticIndex,
  rounds: number,
): Promise<TravelRatio[]> {
  const blocks = travelBlocks(index);
  console.log(`  load average before: ${loadAverage()}`);
  const ranking = await travelRounds("ve ranking computation", index, blocks, (at) => reader.holders(at), rounds);
  const stats = await travelRounds("stats computation", index, blocks, (at) => reader.stats(at), rounds);
  console.log(`  load average after: ${loadAverage()}`);
  return [...ranking, ...stats];
}

/**
 * A page route at the head and at block `old`, interleaved: each round sends `perRound` requests at each (which side
 * first alternates by round) and compares the two p50s; the figure is the median over rounds.
 */
export async function routeTravel(
  name: string,
  get: (path: string) => Promise<unknown>,
  paths: string[],
  old: bigint,
  rounds: number,
  perRound = 20,
): Promise<TravelRatio> {
  const atOld = (p: string) => `${p}${p.includes("?") ? "&" : "?"}block=${old}`;
  for (const p of paths.slice(0, 10)) await Promise.all([get(p), get(atOld(p))]); // warm-up
  const side = async (offset: number, toPath: (p: string) => string) => {
    const ms: number[] = [];
    for (let i = 0; i < perRound; i++) {
      const t = performance.now();
      await get(toPath(paths[(offset + i) % paths.length]!));
      ms.push(performance.now() - t);
    }
    return median(ms);
  };
  const ratios: number[] = [];
  const heads: number[] = [];
  const olds: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const offset = r * perRound;
    let h: number;
    let o: number;
    if (r % 2 === 0) {
      h = await side(offset, (p) => p);
      o = await side(offset, atOld);
    } else {
      o = await side(offset, atOld);
      h = await side(offset, (p) => p);
    }
    heads.push(h);
    olds.push(o);
    ratios.push(o / h);
  }
  const ratio = median(ratios);
  console.log(
    `  ${name}: head p50 ${median(heads).toFixed(2)} ms, at ${old} p50 ${median(olds).toFixed(2)} ms; old / head ` +
      `per round: median ${ratio.toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
  );
  return { name, ratio };
}
