/**
 * spec §4.1: /total is `totalSupply()` alone. When `VeLockNFT.totalLockedClaim()` reverts or answers `0x` (no return
 * data) while `totalSupply()` reads fine, /total answers its figure (of the block read, the one the entry names) and
 * /circulating alone answers its 502 (SUPPLY_RPC_INVALID_UINT256, spec §7.1), from the API process as operators run it
 * (dist/server/main.js, no index) over a seeded devnet whose VeLockNFT's code is replaced (anvil_setCode), with a real
 * Redis (red team supply F7: before, both routes answered 502, the two figures being one batch read and one entry).
 */
import { afterEach, describe, expect, it } from "vitest";
import { formatWei2 } from "../../api/supply/wei";
import { DEVNET_ABIS } from "../../devnet/deploy";
import type { ServiceChild } from "../support/replica";
import { chainFigures, mintSupply, rpcResult, servedFigures, supplyProcesses } from "../support/supplyProcesses";

/** docs/api.md: an entry whose circulating half failed is kept as long as a failure is remembered. */
const BACKOFF_MS = 2_000;
/** docs/api.md: an in-process copy is re-validated against Redis at least this often. */
const REVALIDATE_MS = 1_000;
const TOKENS = 10n ** 18n;

const s = supplyProcesses("supplylocked");
const anvil = (method: string, params: unknown[] = []) => rpcResult(s.d.anvil.rpcUrl, method, params);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Got = { status: number; text: string; code: string | null; cache: string | null; age: string | null };
async function get(p: ServiceChild, path: string): Promise<Got> {
  const res = await fetch(`${p.url}${path}`, { signal: AbortSignal.timeout(15_000) });
  return {
    status: res.status,
    text: await res.text(),
    code: res.headers.get("x-supply-error"),
    cache: res.headers.get("cache-control"),
    age: res.headers.get("age"),
  };
}

/** The VeLockNFT's code, put back after each test (its storage is untouched by anvil_setCode). */
let restore: (() => Promise<unknown>) | undefined;
afterEach(async () => {
  await restore?.();
  restore = undefined;
});

/** Replaces the VeLockNFT's runtime code: every call to it (totalLockedClaim() included) runs `code`. */
async function veLockCode(code: string): Promise<void> {
  const ve = s.d.deployment.addresses.VeLockNFT;
  const original = (await anvil("eth_getCode", [ve, "latest"])) as string;
  restore ??= () => anvil("anvil_setCode", [ve, original]);
  await anvil("anvil_setCode", [ve, code]);
}

/** totalSupply() at the head, straight from anvil (the VeLockNFT cannot be read now). */
async function chainTotal(): Promise<{ total: string; block: bigint }> {
  const block = await s.d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
  const total = await s.d.chain.publicClient.readContract({
    address: s.d.deployment.addresses.AssetToken,
    abi: DEVNET_ABIS.AssetToken,
    functionName: "totalSupply",
    blockNumber: block,
  });
  return { total: formatWei2(total), block };
}

describe("totalLockedClaim() fails while totalSupply() reads fine", () => {
  it.each([
    // PUSH1 0 PUSH1 0 REVERT: the node answers a JSON-RPC "execution reverted" error for that member.
    ["reverts", "0x60006000fd"],
    // STOP: the call succeeds with no return data, `0x`.
    ["answers 0x", "0x00"],
  ])(
    "%s: /total answers totalSupply() of the block read; /circulating alone answers 502 SUPPLY_RPC_INVALID_UINT256",
    async (_name, code) => {
      await veLockCode(code);
      const truth = await chainTotal();
      const a = await s.api();
      for (const mode of ["", "?format=bare"]) {
        const total = await get(a, `/api/supply/total${mode}`);
        expect([mode, total.status, total.text, total.code, total.cache]).toEqual([
          mode,
          200,
          mode === "" ? JSON.stringify({ result: truth.total }) : truth.total,
          null,
          "public, max-age=300",
        ]);
        const circ = await get(a, `/api/supply/circulating${mode}`);
        expect([mode, circ.status, circ.code, circ.cache, circ.age]).toEqual([
          mode,
          502,
          "SUPPLY_RPC_INVALID_UINT256",
          "no-store",
          null,
        ]);
        if (mode === "") expect(JSON.parse(circ.text)).toEqual({ result: null, error: "SUPPLY_RPC_INVALID_UINT256" });
        else expect(circ.text).toBe("");
      }
      // One entry, of the block read: the total served is that block's, and circulating's half holds its code.
      const entry = (await s.admin.get(s.figuresKey()))?.split(" ");
      expect([entry?.[0], entry?.[2], entry?.[3]]).toEqual([
        String(truth.block),
        truth.total,
        "SUPPLY_RPC_INVALID_UINT256",
      ]);
      // A replica sharing Redis answers the same, without a 502 on /total either.
      const b = await s.api();
      expect(await servedFigures(b)).toEqual({ total: truth.total, circulating: null });
      expect((await get(b, "/api/supply/circulating")).code).toBe("SUPPLY_RPC_INVALID_UINT256");
      expect(a.log()).toContain("SUPPLY_RPC_INVALID_UINT256");

      // The VeLockNFT answers again: both figures come from the next read, within the failure backoff.
      await restore?.();
      restore = undefined;
      await sleep(BACKOFF_MS + 200);
      const both = await chainFigures(s.d);
      expect(await servedFigures(a)).toEqual(both);
      expect(await servedFigures(b)).toEqual(both);
    },
  );

  it("to a replica holding figures within their window, a re-read whose totalLockedClaim() reverts is a failed re-read: both held figures stay, and are written back for a fresh replica", async () => {
    const a = await s.api();
    // Started now, asked nothing until below: it holds no figures.
    const b = await s.api();
    const held = await chainFigures(s.d);
    expect(await servedFigures(a)).toEqual(held);
    // The chain moves on and the VeLockNFT reverts; Redis loses the entry, so a's next re-validation reads the node.
    await mintSupply(s.d, 1_000n * TOKENS);
    await veLockCode("0x60006000fd");
    expect((await chainTotal()).total).not.toBe(held.total);
    await s.admin.del(s.figuresKey());
    await sleep(REVALIDATE_MS + 100);
    for (let i = 0; i < 4; i++) {
      expect(await servedFigures(a)).toEqual(held);
      await sleep(100);
    }
    // Written back in the read's place (for the backoff): a fresh replica takes both from Redis, not a lone total.
    expect(await servedFigures(b)).toEqual(held);
    expect(a.log()).toContain("SUPPLY_RPC_INVALID_UINT256");
  });
});
