/**
 * The digest a new head's first ve board page puts in its cursor's seal when its ranking was carried from an earlier
 * block's statement (api/read/cursorSeal.ts, a carried basis): made from the running MD5 each basis keeps
 * (api/read/basisLines.ts: extendBasis at the notification, basisLinesDigest at the first page), against hashing the
 * basis's whole text each block, as before. A run of BLOCKS carried blocks of EVENTS lock events each, as
 * `bench/first-reader.ts`'s bursts of forty carry them (~4 kB a block: the text grows to ~250 kB over 64 blocks, as
 * many as a Base anchor stays before a new one reads the changes again); per block, both sides' cost of that block's
 * digest (the running side's extension included), ROUNDS rounds alternating which side goes first, medians; each
 * digest checked equal to the other side's. In this process (the functions the API process runs, nothing served);
 * its RSS printed beside the figures.
 *
 * Usage: npx tsx bench/basis-lines.ts [blocks=64] [events=40]
 */
import { basisLinesDigest, extendBasis, linesDigest } from "../api/read/basisLines";
import type { SealBasis } from "../api/read/contract";

const BLOCKS = Number(process.argv[2] ?? 64);
const EVENTS = Number(process.argv[3] ?? 40);
const ROUNDS = 9;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** One block's carried events, ~100 bytes each as the notification's rows spell them (token, owner, amount, end). */
const blockLines = (round: number, block: number) =>
  Array.from(
    { length: EVENTS },
    (_, k) =>
      `${block * 1000 + k},0x${(round * 7919 + block * 97 + k).toString(16).padStart(40, "0")},` +
      `${BigInt(k + 1) * 10n ** 21n},${1_800_000_000 + block * 2},${k % 5 === 0 ? 1 : 0}`,
  ).join(";");

/** One side's run of BLOCKS blocks: its total ms, each block's digest, and the text's length at the last. */
function run(round: number, side: "running" | "whole"): { ms: number; digests: string[]; chars: number } {
  const lines = Array.from({ length: BLOCKS }, (_, b) => blockLines(round, b));
  let basis: SealBasis = { block: 1_000n, seal: { from: 960n, digest: "0123456789abcdef" }, lines: "" };
  const digests: string[] = [];
  let ms = 0;
  for (const block of lines) {
    const started = performance.now();
    if (side === "running") {
      basis = extendBasis(basis, block);
      digests.push(basisLinesDigest(basis));
    } else {
      basis = { ...basis, lines: basis.lines === "" ? block : `${basis.lines};${block}` };
      digests.push(linesDigest(basis.lines));
    }
    ms += performance.now() - started;
  }
  return { ms, digests, chars: basis.lines.length };
}

const running: number[] = [];
const whole: number[] = [];
let chars = 0;
// One unmeasured round each first: the functions compiled as the API process's would be after a few blocks.
run(-1, "running");
run(-1, "whole");
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? (["running", "whole"] as const) : (["whole", "running"] as const);
  const results = Object.fromEntries(order.map((side) => [side, run(round, side)])) as Record<
    "running" | "whole",
    ReturnType<typeof run>
  >;
  if (results.running.digests.join() !== results.whole.digests.join()) {
    console.error(`round ${round}: the running digests differ from the whole text's`);
    process.exit(1);
  }
  running.push(results.running.ms / BLOCKS);
  whole.push(results.whole.ms / BLOCKS);
  chars = results.whole.chars;
}
const r = median(running);
const w = median(whole);
const rss = process.memoryUsage().rss / 2 ** 20;
console.log(
  `basis-lines: ${BLOCKS} carried blocks of ${EVENTS} events (text ${Math.round(chars / 1024)} kB at the last): ` +
    `a block's digest ${(r * 1000).toFixed(1)} µs running (extension included) against ${(w * 1000).toFixed(1)} µs ` +
    `over the whole text, ${(r / w).toFixed(3)}× (median of ${ROUNDS} rounds, alternating); this process's RSS ` +
    `${rss.toFixed(0)} MB`,
);
