/**
 * What decoding a state snapshot's Multicall3 answer costs per request, by the one rule of readView (decode,
 * re-encode, compare): through viem's generic coder against the coders readView uses for it (the hand
 * tryBlockAndAggregate codec, and one-word outputs word by word). A 19-member answer, as the state route reads
 * for a user with 2 locks (7 balances + 6 × ownerOf/getLockInfo). CPU only, no node; alternating rounds, medians.
 * Usage: npx tsx bench/view-codec.ts
 */
import { decodeFunctionResult, encodeFunctionResult, type Hex } from "viem";
import { VeLockNFTAbi } from "../abis";
import { decodeTryBlockAndAggregate, encodeTryBlockAndAggregateResult } from "../api/chain/aggregateCodec";
import { MULTICALL3_ABI } from "../api/chain/multicall";
import { decodeView } from "../api/chain/readView";

const w = (n: bigint) => n.toString(16).padStart(64, "0");
const lockInfo = `0x${w(10n ** 21n)}${w(1_800_000_000n)}${w(1n)}${w(0n)}` as Hex;
const owner = `0x${"70997970c51812dc3a010c7d01b50e0d17dc79c8".padStart(64, "0")}` as Hex;
const members = [
  ...Array.from({ length: 7 }, (_, i) => ({ success: true, returnData: `0x${w(BigInt(i) * 10n ** 18n)}` as Hex })),
  ...Array.from({ length: 6 }, (_, i) => [
    { success: i < 2, returnData: (i < 2 ? owner : "0x7e273289") as Hex },
    { success: true, returnData: lockInfo },
  ]).flat(),
];
const raw = encodeFunctionResult({
  abi: MULTICALL3_ABI,
  functionName: "tryBlockAndAggregate",
  result: [12_345n, `0x${w(7n)}`, members],
});
const ADDRESS = "0x0000000000000000000000000000000000000001";
const views = {
  balanceOf: { address: ADDRESS, abi: VeLockNFTAbi, functionName: "balanceOf" },
  ownerOf: { address: ADDRESS, abi: VeLockNFTAbi, functionName: "ownerOf" },
  getLockInfo: { address: ADDRESS, abi: VeLockNFTAbi, functionName: "getLockInfo" },
} as const;
const viewOf = (i: number) => (i < 7 ? views.balanceOf : (i - 7) % 2 === 0 ? views.ownerOf : views.getLockInfo);

/** viem's coder: decodeFunctionResult, then encodeFunctionResult and compare (readView's rule), outer and members. */
function viaViem() {
  const outer = decodeFunctionResult({ abi: MULTICALL3_ABI, functionName: "tryBlockAndAggregate", data: raw });
  const again = encodeFunctionResult({ abi: MULTICALL3_ABI, functionName: "tryBlockAndAggregate", result: outer });
  if (again !== raw) throw new Error("not canonical");
  outer[2].forEach((m, i) => {
    if (!m.success) return;
    const v = viewOf(i);
    const value = decodeFunctionResult({ abi: v.abi, functionName: v.functionName, data: m.returnData } as never);
    const back = encodeFunctionResult({ abi: v.abi, functionName: v.functionName, result: value } as never);
    if (back !== m.returnData) throw new Error("not canonical");
  });
}

/** readView's coders: the same rule, the same answers. */
function viaReadView() {
  const outer = decodeTryBlockAndAggregate(raw);
  if (encodeTryBlockAndAggregateResult(outer) !== raw) throw new Error("not canonical");
  outer[2].forEach((m, i) => {
    if (m.success) decodeView(viewOf(i) as typeof views.balanceOf, m.returnData);
  });
}

const rounds = 15;
const perRound = 400;
const medians: Record<string, number[]> = { viem: [], readView: [] };
for (let i = 0; i < 200; i++) {
  viaViem();
  viaReadView();
}
for (let r = 0; r < rounds; r++) {
  for (const [label, f] of r % 2 === 0
    ? ([
        ["viem", viaViem],
        ["readView", viaReadView],
      ] as const)
    : ([
        ["readView", viaReadView],
        ["viem", viaViem],
      ] as const)) {
    const t = performance.now();
    for (let i = 0; i < perRound; i++) f();
    medians[label]!.push(((performance.now() - t) / perRound) * 1000);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const viem = median(medians.viem!);
const ours = median(medians.readView!);
console.log(`viem generic coder (outer + 19 members, decode + re-encode): ${viem.toFixed(1)} µs per answer`);
console.log(`readView's coders (hand outer, one-word members, same rule):  ${ours.toFixed(1)} µs per answer`);
console.log(`readView's coders / viem's, per state answer (median of ${rounds} rounds): ${(ours / viem).toFixed(2)}`);
