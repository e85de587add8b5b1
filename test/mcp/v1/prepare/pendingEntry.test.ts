/**
 * A pending entry's own quote (api/mcp/v1/prepare/pendingEntry.ts), against the served API process
 * (dist/server/main.js) over the seeded devnet: the quote needs FurnaceQuoter only where it is used. On a manifest
 * without it, collect mode 0 (and mode 1 with a given minVeOutWei) is answered and executes, its calldata compared
 * byte for byte with viem's encodeFunctionData over the published signature (protocol.md §1), not the project's ABI;
 * a request that would quote is 503 CHAIN_UNREADY naming the quoter and saying to give minVeOutWei, before any read.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Address, encodeFunctionData, getAddress, parseAbi, parseEther } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PrepareEnvelope } from "../../../../api/mcp/v1/prepare";
import { DEVNET_ABIS, sendTx } from "../../../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { childEnv, startApiChild } from "../../../support/apiProcess";
import { execute, preparePath } from "../../../support/execution";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";
import { ethCallSelector } from "../../../support/rpcProxy";

const DAY = 86_400n;
const user = DEVNET_ACCOUNTS.fresh;
const deployer = DEVNET_ACCOUNTS.deployer;

/** The published signatures (protocol.md §1), independent of abis/. */
const PUBLISHED = parseAbi([
  "function claimAll(uint8 mode, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut)",
  "function claimShareholder(uint8 mode, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut)",
]);
const PREFLIGHT = "0x75106187";

let d: ReadsDevnet;
let dirs: string[] = [];
let children: ChildProcess[] = [];
/** The API process over the devnet's manifest, and one over the same manifest without FurnaceQuoter. */
let full: string;
let noQuoter: string;

async function serve(manifest: unknown): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "pending-entry-"));
  dirs.push(dir);
  const env = childEnv({ deployment: { manifest }, proxy: d.proxy }, dir);
  const { child, base } = await startApiChild({ ...env, RATE_LIMIT_MAX: "1000000" });
  children.push(child);
  return base;
}

beforeAll(async () => {
  d = await startReadsDevnet();
  full = await serve(d.deployment.manifest);
  const edited = structuredClone(d.deployment.manifest);
  delete edited.contracts.FurnaceQuoter;
  noQuoter = await serve(edited);
}, 180_000);
afterAll(async () => {
  for (const child of children) child.kill("SIGTERM");
  await d?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  children = [];
  dirs = [];
});
beforeEach(() => {
  d.proxy.reset();
});

// biome-ignore lint/suspicious/noExplicitAny: tests assert on the parsed JSON shape themselves
async function get(base: string, p: string): Promise<{ status: number; body: any }> {
  const res = await fetch(base + p);
  return { status: res.status, body: await res.json() };
}
async function prepare(base: string, action: string, params: Record<string, string | bigint | boolean> = {}) {
  const { status, body } = await get(base, preparePath(action, params));
  expect(status, JSON.stringify(body)).toBe(200);
  return body as PrepareEnvelope & { quote?: Record<string, string | number> };
}

const A = () => d.deployment.addresses;
const read = <T>(address: Address, abi: readonly unknown[], functionName: string, args: readonly unknown[] = []) =>
  d.chain.publicClient.readContract({ address, abi, functionName, args } as never) as Promise<T>;
const claimable = () =>
  read<bigint>(A().ShareholderRoyalties, DEVNET_ABIS.ShareholderRoyalties, "claimableEth", [user.address]);
const accrueRoyalties = (value: bigint) =>
  sendTx(d.chain, deployer.privateKey, {
    address: A().ShareholderRoyalties,
    abi: DEVNET_ABIS.ShareholderRoyalties,
    functionName: "accrue",
    args: [user.address],
    value,
  });
const selectorsRead = () => d.proxy.calls.map((c) => ethCallSelector(c.method, c.params)).filter(Boolean);

describe("a manifest without FurnaceQuoter: only the requests that quote need it", () => {
  it("collect-royalties and collect-all mode 0: answered, byte for byte the published call, and executed", async () => {
    for (const [action, fn, to] of [
      ["collect-royalties", "claimShareholder", A().ShareholderRoyalties],
      ["collect-all", "claimAll", A().ClaimAllHelper],
    ] as const) {
      await accrueRoyalties(parseEther("0.25"));
      const env = await prepare(noQuoter, action, { mode: 0n, user: user.address });
      expect(env.transactions, action).toHaveLength(1);
      const [tx] = env.transactions;
      expect(getAddress(tx!.to)).toBe(to);
      expect(tx!.data).toBe(encodeFunctionData({ abi: PUBLISHED, functionName: fn, args: [0, 0n, 0n, false, 0n] }));
      expect(env.simulation.ok, action).toBe(true);
      expect(env).not.toHaveProperty("quote");
      const before = await d.chain.publicClient.getBalance({ address: user.address });
      const [receipt] = await execute(d, user.privateKey, env);
      const gas = receipt!.gasUsed * receipt!.effectiveGasPrice;
      expect(await d.chain.publicClient.getBalance({ address: user.address })).toBe(before + parseEther("0.25") - gas);
      expect(await claimable()).toBe(0n);
    }
  });

  it("mode 1 and compound=true with a given minVeOutWei: encoded as given, without the quoter", async () => {
    const collect = await prepare(noQuoter, "collect-royalties", {
      mode: 1n,
      durationSeconds: 30n * DAY,
      minVeOutWei: 7n,
    });
    expect(collect.transactions[0]!.data).toBe(
      encodeFunctionData({ abi: PUBLISHED, functionName: "claimShareholder", args: [1, 0n, 30n * DAY, false, 7n] }),
    );
  });

  it("a request that would quote: 503 CHAIN_UNREADY naming FurnaceQuoter and minVeOutWei, before any read", async () => {
    await accrueRoyalties(parseEther("0.1"));
    d.proxy.reset();
    const quoted: [string, Record<string, string | bigint | boolean>][] = [
      ["collect-all", { mode: 1n, durationSeconds: 30n * DAY, user: user.address }],
      ["collect-royalties", { mode: 1n, durationSeconds: 30n * DAY, user: user.address, slippageBps: 100n }],
    ];
    for (const [action, params] of quoted) {
      const { status, body } = await get(noQuoter, preparePath(action, params));
      expect(status, action).toBe(503);
      expect(body).toEqual({
        ok: false,
        error: "CHAIN_UNREADY",
        message:
          "FurnaceQuoter is not deployed on local, and a request with " +
          `mode=1 without minVeOutWei needs it (the service ` +
          "quotes the entry itself). Give minVeOutWei to do without it.",
        detail: { contract: "FurnaceQuoter", chain: "local", param: "minVeOutWei" },
      });
    }
    // Neither the pending amounts nor anything else of the actions was read: at most the gate's preflight.
    expect(selectorsRead().every((s) => s === PREFLIGHT)).toBe(true);
    // Paid out, so that the tests below start with nothing pending.
    await execute(d, user.privateKey, await prepare(full, "collect-royalties"));
  });
});
