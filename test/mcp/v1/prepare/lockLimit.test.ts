/**
 * A wallet holds at most 32 locks (protocol.md §1, §8: the published VeLockNFT reverts TooManyVeNFTs on the 33rd; the
 * Furnace turns it into InvariantViolation). A prepare that makes a new lock for a wallet at the limit used to hand out
 * a batch that reverts on chain — with simulate=false nothing said so, and the wallet paid gas for the failure. Now the
 * tool reads the wallet's count with its other reads and answers 409 LOCK_LIMIT_REACHED, through the MCP endpoint in
 * both eras, against the seeded devnet (its `capped` wallet holds exactly 32 locks). One below the limit, the batch is
 * handed out and, sent by the wallet, makes the 32nd lock; after it the same request is refused.
 */
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ABIS, sendTx } from "../../../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { MCP_ERAS, type McpEra, toolCallInit } from "../../../support/mcpToolCall";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";

const ERAS = MCP_ERAS;
type Era = McpEra;

const E18 = 10n ** 18n;
const capped = DEVNET_ACCOUNTS.capped;

let d: ReadsDevnet;
let base: string;
let server: Server;

beforeAll(async () => {
  d = await startReadsDevnet();
  base = await new Promise<string>((resolve) => {
    server = serve({ fetch: d.app().fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
      resolve(`http://127.0.0.1:${info.port}`);
    }) as Server;
  });
}, 180_000);
afterAll(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
  await d?.stop();
});

type Envelope = {
  ok: boolean;
  error?: string;
  message?: string;
  detail?: Record<string, unknown>;
  transactions?: { to: Hex; data: Hex; value: Hex }[];
  [k: string]: unknown;
};

/** One tools/call POSTed raw in an era: the tool's envelope and whether the result is an error. */
async function callIn(era: Era, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${base}/api/mcp`, {
    ...toolCallInit(era, name, args, 7),
    signal: AbortSignal.timeout(30_000),
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
  return { isError: answer.result.isError === true, body: JSON.parse(answer.result.content[0]!.text) as Envelope };
}

const lockCount = (user = capped.address) =>
  d.chain.publicClient.readContract({
    address: d.deployment.addresses.VeLockNFT,
    abi: DEVNET_ABIS.VeLockNFT,
    functionName: "balanceOf",
    args: [user],
  });

/** Every tool that can make a new lock, asked for one by `capped` without a simulation. */
const newLockCalls = (): [string, Record<string, unknown>][] => {
  const user = capped.address;
  const furnaceEntry = { targetTokenId: "0", durationSeconds: "2592000", minVeOutWei: "1" };
  return [
    ["prepare_lock_via_furnace", { user, claimAmountWei: String(1000n * E18), durationSeconds: "2592000" }],
    ["prepare_lock", { user, amountWei: String(1000n * E18), durationSecs: "2592000" }],
    ["prepare_collect_all", { user, mode: "1", ...furnaceEntry }],
    ["prepare_collect_royalties", { user, mode: "1", ...furnaceEntry }],
    ["prepare_harvest_rewards", { user, compound: "true", ...furnaceEntry }],
  ];
};

describe("a new lock for a wallet that holds 32 locks is refused (LOCK_LIMIT_REACHED), in both eras", () => {
  it("the devnet holds the published limit: capped has 32 locks and a 33rd reverts TooManyVeNFTs (the Furnace: InvariantViolation)", async () => {
    expect(await lockCount()).toBe(32n);
    const { VeLockNFT, Furnace } = d.deployment.addresses;
    // VeLockNFT.createLockFor as the Furnace calls it: the count is checked before anything is pulled.
    await expect(
      d.chain.publicClient.simulateContract({
        address: VeLockNFT,
        abi: DEVNET_ABIS.VeLockNFT,
        functionName: "createLockFor",
        args: [capped.address, 1000n * E18, 2_592_000n, false],
        account: Furnace,
      }),
    ).rejects.toThrow(/TooManyVeNFTs/);
    await expect(
      d.chain.publicClient.simulateContract({
        address: Furnace,
        abi: DEVNET_ABIS.Furnace,
        functionName: "enterWithClaim",
        args: [1000n * E18, 0n, 2_592_000n, false, 1n],
        account: capped.address,
      }),
    ).rejects.toThrow(/InvariantViolation/);
  });

  for (const era of ERAS) {
    it(`${era}: every prepare of a new lock with simulate=false answers LOCK_LIMIT_REACHED; the quote warns of it`, async () => {
      for (const [name, args] of newLockCalls()) {
        for (const simulate of ["false", "true"]) {
          const r = await callIn(era, name, { ...args, simulate });
          expect(r.isError, `${name} simulate=${simulate}`).toBe(true);
          expect(r.body, `${name} simulate=${simulate}`).toMatchObject({
            ok: false,
            error: "LOCK_LIMIT_REACHED",
            detail: { user: capped.address, locks: 32, maxLocks: 32 },
          });
          expect(r.body.message).toMatch(/already holds 32 locks.*Top up one of its locks instead/);
          expect(r.body.transactions).toBeUndefined();
        }
      }
      const quote = await callIn(era, "quote_lock_via_furnace", {
        user: capped.address,
        claimAmountWei: String(1000n * E18),
        durationSeconds: "2592000",
      });
      // The reference quotes a 33rd lock (its quoter counts no locks; spec §9): quoted, with the reason it cannot be made.
      expect(quote.isError).toBeFalsy();
      expect(quote.body).toMatchObject({ ok: true, routeTokenId: "0" });
      expect(quote.body.warning).toMatch(/^LOCK_LIMIT_REACHED: this wallet already holds 32 locks/);
    });

    it(`${era}: a top-up of one of its locks is no new lock: the batch is handed out`, async () => {
      const target = String(d.seed.tokenIds.capped[1]);
      const r = await callIn(era, "prepare_lock_via_furnace", {
        user: capped.address,
        claimAmountWei: String(10n * E18),
        targetTokenId: target,
        simulate: "false",
      });
      expect(r.body).toMatchObject({ ok: true, transactions: [{ step: "lock" }] });
      const quote = await callIn(era, "quote_lock_via_furnace", {
        user: capped.address,
        claimAmountWei: String(10n * E18),
        targetTokenId: target,
      });
      expect(quote.body).toMatchObject({ ok: true, routeTokenId: target });
      expect(quote.body.warning).toBeUndefined();
    });
  }

  it("the count costs no round trip of its own where the tool already reads: it rides in the same JSON-RPC batch", async () => {
    const [viaFurnace, lock, collect] = newLockCalls();
    await callIn("2025", viaFurnace![0], viaFurnace![1]); // the gate reads the preflight once, then keeps it
    const expected: [[string, Record<string, unknown>], number, number][] = [
      [viaFurnace!, 1, 3], // quote, allowance, balanceOf
      [lock!, 1, 2], // allowance, balanceOf
      [collect!, 1, 1], // minVeOutWei given: nothing else is read
    ];
    for (const [[name, args], roundTrips, calls] of expected) {
      d.proxy.reset();
      const r = await callIn("2026", name, { ...args, simulate: "false" });
      expect(r.body, name).toMatchObject({ error: "LOCK_LIMIT_REACHED" });
      expect([d.proxy.roundTrips(), d.proxy.count("eth_call")], name).toEqual([roundTrips, calls]);
    }
    d.proxy.reset();
    await callIn("2025", "quote_lock_via_furnace", { user: capped.address, claimAmountWei: String(1000n * E18) });
    expect([d.proxy.roundTrips(), d.proxy.count("eth_call")]).toEqual([1, 2]); // quote, balanceOf
  });

  it("one below the limit the batch is handed out and, sent by the wallet, makes the 32nd lock; then it is refused", async () => {
    const rpc = d.chain.testClient;
    const snapshot = await rpc.snapshot();
    try {
      // 31 locks: two of capped's plain locks merged (the devnet's Furnace entry for mergeLocksFor).
      const [, from, into] = d.seed.tokenIds.capped;
      await sendTx(d.chain, capped.privateKey, {
        address: d.deployment.addresses.Furnace,
        abi: DEVNET_ABIS.Furnace,
        functionName: "mergeLocks",
        args: [from!, into!],
      });
      expect(await lockCount()).toBe(31n);
      for (const era of ERAS) {
        for (const [name, args] of newLockCalls()) {
          const r = await callIn(era, name, { ...args, simulate: "false" });
          // Collect and harvest: the seed left capped nothing pending, but the batch is made (minVeOutWei given).
          expect(r.body, `${era} ${name}`).toMatchObject({ ok: true, simulation: { skipped: "disabled" } });
        }
      }
      const r = await callIn("2026", "prepare_lock_via_furnace", { ...newLockCalls()[0]![1], simulate: "false" });
      const wallet = d.chain.walletFor(capped.privateKey);
      for (const tx of r.body.transactions!) {
        const hash = await wallet.sendTransaction({ to: tx.to, data: tx.data, value: BigInt(tx.value) });
        const receipt = await d.chain.publicClient.waitForTransactionReceipt({ hash });
        expect(receipt.status).toBe("success");
      }
      expect(await lockCount()).toBe(32n);
      for (const era of ERAS) {
        const again = await callIn(era, "prepare_lock_via_furnace", { ...newLockCalls()[0]![1], simulate: "false" });
        expect(again.body).toMatchObject({ ok: false, error: "LOCK_LIMIT_REACHED", detail: { locks: 32 } });
      }
    } finally {
      await rpc.revert({ id: snapshot });
    }
  });
});
