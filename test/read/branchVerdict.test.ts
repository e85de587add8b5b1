/**
 * BranchCheck's verdict against a real node (anvil): an index event the chain holds where the index says is
 * canonical; one the chain does not hold is refused only after BRANCH_CHECK_CONFIRMATIONS checks in a row, so one
 * node of a provider's pool answering without the receipt does not take every index answer down. The whole path
 * (Ponder stuck below its finalized checkpoint, the served process refusing) is test/read/branchCheck.test.ts.
 */
import type { Hex } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createRpcClient } from "../../api/chain/rpc";
import { BRANCH_CHECK_CONFIRMATIONS, BranchCheck, type Orphaned } from "../../api/read/branchCheck";
import type { AtBlock, FinalEvent } from "../../api/read/contract";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "../support/devnet";

let devnet: TestDevnet;
beforeAll(async () => {
  devnet = await startDevnet();
  await devnet.clients.testClient.mine({ blocks: 3 });
}, 60_000);
afterAll(async () => {
  await devnet?.stop();
});

/** A check over an index whose newest final event is `event()`, at a head of block 3. */
function checkOf(event: () => FinalEvent) {
  const told: (Orphaned | null)[] = [];
  const read = async (): Promise<AtBlock<FinalEvent | null>> => {
    const head = { block: 3n, time: 1n, finalized: 3n };
    return { head, block: 3n, time: 1n, inRange: true, value: event() } as AtBlock<FinalEvent | null>;
  };
  const rpc = createRpcClient({ url: devnet.rpcUrl, timeoutMs: 5_000 });
  return { check: new BranchCheck({ read, rpc, onChange: (o) => told.push(o) }), told };
}

it("an event the chain does not hold is refused after BRANCH_CHECK_CONFIRMATIONS checks in a row, not at the first", async () => {
  const missing = { block: 2n, txHash: `0x${"ab".repeat(32)}` as Hex };
  const { check, told } = checkOf(() => missing);
  for (let i = 1; i < BRANCH_CHECK_CONFIRMATIONS; i++) {
    await check.check();
    expect(check.orphaned, `check ${i}`).toBeNull();
  }
  await check.check();
  const chainHead = await devnet.clients.publicClient.getBlockNumber({ cacheTime: 0 });
  expect(check.orphaned).toMatchObject({ event: missing, receiptBlock: null, chainHead });
  expect(told).toHaveLength(1);
});

it("one check that finds the event canonical again ends the refusal; a lone miss between two hits refuses nothing", async () => {
  const { publicClient, testClient } = devnet.clients;
  const from = DEVNET_ACCOUNTS.alice.address;
  const hash = await testClient.sendUnsignedTransaction({ from, to: from, value: 1n });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  const held = { block: receipt.blockNumber, txHash: hash };
  const missing = { block: receipt.blockNumber, txHash: `0x${"cd".repeat(32)}` as Hex };
  let current: FinalEvent = missing;
  const { check, told } = checkOf(() => current);
  for (let i = 0; i < BRANCH_CHECK_CONFIRMATIONS; i++) await check.check();
  expect(check.orphaned).not.toBeNull();
  current = held;
  await check.check();
  expect(check.orphaned).toBeNull();
  expect(told.map((o) => o === null)).toEqual([false, true]);
  // A miss, then a hit: the strikes start again.
  current = missing;
  await check.check();
  current = held;
  await check.check();
  current = missing;
  await check.check();
  expect(check.orphaned).toBeNull();
});
