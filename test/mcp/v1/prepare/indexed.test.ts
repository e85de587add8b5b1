import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { createApp } from "../../../../api/app";
import { DEVNET_ABIS, sendTx } from "../../../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { blockTime, execute, executeAs, lockEvents, prepareOk } from "../../../support/execution";
import { type IndexedReads, indexSeededDevnet } from "../../../support/indexedReads";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";

// End to end (issue 6 §5, issue 13): a lock made from the prepare route's own transactions shows up in the
// very next /state answer with source "subgraph+rpc" — no waiting for the real indexer (`ponder start` on
// Postgres) to reach its block; so do a Furnace lock, a top-up and an extension of it, with the values
// getLockInfo gives at the answer's block. prepare/lock, topup and extend are Furnace-only on Base and on the
// devnet, so their calldata is sent by the (impersonated) Furnace; lock-via-furnace is sent by the wallet.

const E18 = 10n ** 18n;
const DAY = 86_400n;
const user = DEVNET_ACCOUNTS.fresh;

let d: ReadsDevnet;
let indexed: IndexedReads;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  d = await startReadsDevnet();
  indexed = await indexSeededDevnet(d, "prepare_idx");
  app = d.app({ index: { locks: indexed.store } });
  // The Furnace pays what VeLockNFT pulls when it sends the prepared lock/topup calldata itself.
  await sendTx(d.chain, DEVNET_ACCOUNTS.deployer.privateKey, {
    address: d.deployment.addresses.AssetToken,
    abi: DEVNET_ABIS.AssetToken,
    functionName: "mint",
    args: [d.deployment.addresses.Furnace, 10_000n * E18],
  });
}, 180_000);

afterAll(async () => {
  await indexed?.stop();
  await d?.stop();
});

type StateLock = { tokenId: string; amountWei: string; lockEnd: string; autoMax: boolean };

async function stateLocks(address: Address): Promise<{ source: string; veLocks: StateLock[]; blockNumber: string }> {
  const { status, body } = await d.get(app, `/api/mcp/v1/state/${address}`);
  expect(status).toBe(200);
  return { source: body.source, veLocks: body.user.veLocks, blockNumber: body.blockNumber };
}

describe("prepared locks reach /state through the index", () => {
  let tokenId: bigint;

  it("lock: the new lock is listed with source subgraph+rpc", async () => {
    const before = await stateLocks(user.address);
    expect(before.source).toBe("subgraph+rpc");
    const env = await prepareOk(d, app, "lock", {
      user: user.address,
      amountWei: 1234n * E18,
      durationSecs: 45n * DAY,
    });
    const last = await executeAs(d, d.deployment.addresses.Furnace, env.transactions.at(-1)!);
    tokenId = (lockEvents(d, last).find((e) => e.eventName === "LockCreated")!.args as { tokenId: bigint }).tokenId;
    expect(before.veLocks.some((l) => l.tokenId === String(tokenId))).toBe(false);
    const after = await stateLocks(user.address);
    expect(BigInt(after.blockNumber)).toBeGreaterThanOrEqual(last.blockNumber);
    expect(after.source).toBe("subgraph+rpc");
    expect(after.veLocks).toContainEqual({
      tokenId: String(tokenId),
      amountWei: String(1234n * E18),
      lockEnd: String((await blockTime(d, last)) + 45n * DAY),
      autoMax: false,
    });
  });

  it("topup and extend of that lock, and a lock via the Furnace, are indexed too", async () => {
    const furnaceAddress = d.deployment.addresses.Furnace;
    const topEnv = await prepareOk(d, app, "topup", { user: user.address, tokenId, amountWei: 6n * E18 });
    await executeAs(d, furnaceAddress, topEnv.transactions.at(-1)!);
    const [, lockEnd] = await d.chain.publicClient.readContract({
      address: d.deployment.addresses.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "getLockInfo",
      args: [tokenId],
    });
    const newEnd = lockEnd + 20n * DAY;
    const extEnv = await prepareOk(d, app, "extend", { user: user.address, tokenId, newEnd });
    await executeAs(d, furnaceAddress, extEnv.transactions.at(-1)!);
    const furnace = await execute(
      d,
      user.privateKey,
      await prepareOk(d, app, "lock-via-furnace", {
        user: user.address,
        claimAmountWei: 1500n * E18,
        durationSeconds: 14n * DAY,
      }),
    );
    const created = lockEvents(d, furnace.at(-1)!).find((e) => e.eventName === "LockCreated")!.args as {
      tokenId: bigint;
      amount: bigint;
      lockEnd: bigint;
    };
    expect([topEnv.transactions.length, extEnv.transactions.length]).toEqual([2, 1]); // approve + topup, extend
    const { source, veLocks, blockNumber } = await stateLocks(user.address);
    expect(BigInt(blockNumber)).toBeGreaterThanOrEqual(furnace.at(-1)!.blockNumber);
    expect(source).toBe("subgraph+rpc");
    expect(veLocks).toContainEqual({
      tokenId: String(tokenId),
      amountWei: String(1240n * E18),
      lockEnd: String(newEnd),
      autoMax: false,
    });
    expect(veLocks).toContainEqual({
      tokenId: String(created.tokenId),
      amountWei: String(created.amount),
      lockEnd: String(created.lockEnd),
      autoMax: false,
    });
  });

  it("an AutoMax lock via the Furnace: /state reports getLockInfo's end, its block's time + 365 days", async () => {
    const receipts = await execute(
      d,
      user.privateKey,
      await prepareOk(d, app, "lock-via-furnace", {
        user: user.address,
        claimAmountWei: 1000n * E18,
        durationSeconds: 365n * DAY,
        createAutoMax: true,
      }),
    );
    const created = lockEvents(d, receipts.at(-1)!).find((e) => e.eventName === "LockCreated")!.args as {
      tokenId: bigint;
      amount: bigint;
    };
    // Time passes: the stored end stays, the effective end moves with every block.
    await d.chain.testClient.increaseTime({ seconds: 3 * 86_400 });
    await d.chain.testClient.mine({ blocks: 1 });
    const { source, veLocks, blockNumber } = await stateLocks(user.address);
    expect(source).toBe("subgraph+rpc");
    const at = await d.chain.publicClient.getBlock({ blockNumber: BigInt(blockNumber) });
    expect(veLocks).toContainEqual({
      tokenId: String(created.tokenId),
      amountWei: String(created.amount),
      lockEnd: String(at.timestamp + 365n * DAY),
      autoMax: true,
    });
  });
});
