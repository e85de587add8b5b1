import { type Address, encodeFunctionResult, getAddress, type Hex, parseAbi, zeroAddress } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRpcClient } from "../../../api/chain/rpc";
import type { Manifest } from "../../../api/manifest";
import { DEVNET_ABIS } from "../../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../../devnet/seed";
import { chainBalancesAt } from "../../support/chainTruth";
import { type ReadsDevnet, startReadsDevnet } from "../../support/readsDevnet";

let d: ReadsDevnet;
beforeAll(async () => {
  d = await startReadsDevnet();
});
afterAll(async () => {
  await d?.stop();
});
beforeEach(() => {
  d.proxy.setFault(null);
  d.proxy.reset();
});

const statePath = (a: string) => `/api/mcp/v1/state/${a}`;

/** The balances (and veBalanceOf) read directly from anvil with viem at `blockNumber`. */
const truth = (user: Address, blockNumber: bigint) => chainBalancesAt(d, user, blockNumber);

describe("GET /state/:address against on-chain truth", () => {
  it.each(Object.keys(DEVNET_ACCOUNTS) as (keyof typeof DEVNET_ACCOUNTS)[])("%s", async (role) => {
    const user = DEVNET_ACCOUNTS[role].address;
    const { status, body, headers } = await d.get(d.app(), statePath(user));
    expect(status).toBe(200);
    expect(headers.get("access-control-allow-origin")).toBe("*");
    const head = await d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    expect(body).toEqual({
      ok: true,
      source: "rpc",
      chainId: 31337,
      blockNumber: String(head),
      indexedBlock: null, // no index configured: no lock can be proven, so none is listed
      user: { address: user, ...(await truth(user, head)), veLocks: [] },
    });
    // One upstream round trip carrying one eth_call, whoever the user is.
    expect(d.proxy.roundTrips()).toBe(1);
    expect(d.proxy.count()).toBe(1);
    expect(d.proxy.count("eth_call")).toBe(1);
  });

  it("the seeded users are not all zero (the comparison above is not vacuous)", async () => {
    const { body: carol } = await d.get(d.app(), statePath(DEVNET_ACCOUNTS.carol.address));
    expect(BigInt(carol.user.claimBalanceWei)).toBeGreaterThan(0n);
    expect(BigInt(carol.user.lpStakedWei)).toBeGreaterThan(0n);
    expect(BigInt(carol.user.pendingLpRewardsWei)).toBeGreaterThan(0n);
    const { body: alice } = await d.get(d.app(), statePath(DEVNET_ACCOUNTS.alice.address));
    expect(BigInt(alice.user.pendingRoyaltiesEthWei)).toBeGreaterThan(0n);
    const { body: idle } = await d.get(d.app(), statePath(DEVNET_ACCOUNTS.idle.address));
    expect(idle.user).toMatchObject({
      claimBalanceWei: "0",
      lpStakedWei: "0",
      pendingRoyaltiesEthWei: "0",
      pendingLpRewardsWei: "0",
    });
  });

  it("reads every balance at the block it reports, as the chain moves on", async () => {
    const alice = DEVNET_ACCOUNTS.alice.address;
    const before = await d.get(d.app(), statePath(alice));
    // Move two balances in a new block; the next snapshot must be the new block's, whole.
    const hash = await d.chain.walletFor(DEVNET_ACCOUNTS.deployer.privateKey).writeContract({
      address: d.deployment.addresses.ShareholderRoyalties,
      abi: DEVNET_ABIS.ShareholderRoyalties,
      functionName: "accrue",
      args: [alice],
      value: 123n,
      chain: d.chain.chain,
    });
    // Mined before the next read: anvil's automine does not promise the block exists when the hash returns.
    await d.chain.publicClient.waitForTransactionReceipt({ hash });
    const after = await d.get(d.app(), statePath(alice));
    expect(BigInt(after.body.blockNumber)).toBe(BigInt(before.body.blockNumber) + 1n);
    expect(BigInt(after.body.user.pendingRoyaltiesEthWei) - BigInt(before.body.user.pendingRoyaltiesEthWei)).toBe(123n);
    expect(after.body.user).toMatchObject(await truth(alice, BigInt(after.body.blockNumber)));
    expect(before.body.user).toMatchObject(await truth(alice, BigInt(before.body.blockNumber)));
  });

  it("accepts lower-case and upper-case addresses and answers with the checksummed form", async () => {
    const user = DEVNET_ACCOUNTS.carol.address;
    for (const form of [user.toLowerCase(), `0x${user.slice(2).toUpperCase()}`]) {
      const { status, body } = await d.get(d.app(), statePath(form));
      expect(status).toBe(200);
      expect(body.user.address).toBe(getAddress(user));
    }
  });
});

describe("GET /state/:address failures", () => {
  const user = DEVNET_ACCOUNTS.carol.address;

  it("a non-strict address is 400 BAD_PARAMS before any RPC", async () => {
    const { status, body } = await d.get(d.app(), statePath(`${user.slice(0, 41)}`));
    expect(status).toBe(400);
    expect(body).toMatchObject({ ok: false, error: "BAD_PARAMS", detail: { param: "address" } });
    expect(d.proxy.count()).toBe(0);
  });

  it("a query parameter is 400 BAD_PARAMS before any RPC", async () => {
    const { status, body } = await d.get(d.app(), `${statePath(user)}?block=1`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "block" } });
    expect(d.proxy.count()).toBe(0);
  });

  it.each([
    ["AssetToken", (m: Manifest) => ({ ...m, contracts: { ...m.contracts, AssetToken: undefined } })],
    [
      "LpStakingVault7D",
      (m: Manifest) => ({ ...m, contracts: { ...m.contracts, LpStakingVault7D: { address: zeroAddress } } }),
    ],
    [
      "ShareholderRoyalties",
      (m: Manifest) => ({ ...m, contracts: { ...m.contracts, ShareholderRoyalties: undefined } }),
    ],
  ])("a manifest without %s is 503 CHAIN_UNREADY, no RPC", async (contract, edit) => {
    const app = d.app({ config: d.configWith(edit) });
    const { status, body } = await d.get(app, statePath(user));
    expect(status).toBe(503);
    expect(body).toMatchObject({ ok: false, error: "CHAIN_UNREADY", detail: { contract, chain: "local" } });
    expect(d.proxy.count()).toBe(0);
  });

  it("a balance contract that answers no word (an EOA in the manifest) is 502 STATE_READ_FAILED", async () => {
    const eoa = getAddress(DEVNET_ACCOUNTS.idle.address);
    const app = d.app({
      config: d.configWith((m) => ({ ...m, contracts: { ...m.contracts, ShareholderRoyalties: { address: eoa } } })),
    });
    const { status, body } = await d.get(app, statePath(user));
    expect(status).toBe(502);
    expect(body).toMatchObject({ ok: false, error: "STATE_READ_FAILED", detail: { upstream: "subcall" } });
    expect(d.proxy.count()).toBe(1);
  });

  it("no RPC configured is 502 STATE_READ_FAILED", async () => {
    const { status, body } = await d.get(d.app({ rpc: null }), statePath(user));
    expect(status).toBe(502);
    expect(body.error).toBe("STATE_READ_FAILED");
  });

  const MULTICALL = parseAbi([
    "function tryBlockAndAggregate(bool requireSuccess, (address target, bytes callData)[] calls) payable returns (uint256 blockNumber, bytes32 blockHash, (bool success, bytes returnData)[] returnData)",
  ]);
  const word = (n: bigint): Hex => `0x${n.toString(16).padStart(64, "0")}`;
  const forged = (results: { success: boolean; returnData: Hex }[]) =>
    encodeFunctionResult({ abi: MULTICALL, functionName: "tryBlockAndAggregate", result: [7n, word(0n), results] });
  // The snapshot's seven base reads: four balances, veBalanceOf, the NFT count, nextTokenId.
  const okBase = [1n, 2n, 3n, 4n, 5n, 6n, 7n].map((n) => ({ success: true, returnData: word(n) }));

  it("a forged but well-formed answer is decoded as such (the fault harness reaches the decoder)", async () => {
    d.proxy.setFault({ kind: "result", value: forged(okBase) });
    const { status, body } = await d.get(d.app(), statePath(user));
    expect(status).toBe(200);
    expect(body.blockNumber).toBe("7");
    expect(body.user).toMatchObject({
      claimBalanceWei: "1",
      lpStakedWei: "2",
      pendingRoyaltiesEthWei: "3",
      pendingLpRewardsWei: "4",
    });
  });

  it.each([
    ["node down", { kind: "down" }, "unreachable"],
    ["HTTP 503", { kind: "http", status: 503 }, "http"],
    ["HTTP 429", { kind: "http", status: 429 }, "http"],
    ["JSON-RPC error", { kind: "rpcError", code: -32000, message: "header not found" }, "rpc"],
    ["a revert of the whole call", { kind: "rpcError", code: 3, message: "execution reverted", data: "0x" }, "rpc"],
    ["result 0x", { kind: "result", value: "0x" }, "malformed"],
    ["result null", { kind: "result", value: null }, "malformed"],
    ["result not hex", { kind: "result", value: "0xzz" }, "malformed"],
    ["result a number", { kind: "result", value: 5 }, "malformed"],
    ["result one word", { kind: "result", value: word(1n) }, "malformed"],
    ["six results for seven calls", { kind: "result", value: forged(okBase.slice(0, 6)) }, "malformed"],
    [
      "a failed sub-call",
      {
        kind: "result",
        value: forged([...okBase.slice(0, 3), { success: false, returnData: word(4n) }, ...okBase.slice(4)]),
      },
      "subcall",
    ],
    [
      "a sub-call with two words",
      {
        kind: "result",
        value: forged([
          ...okBase.slice(0, 3),
          { success: true, returnData: `${word(1n)}${"0".repeat(64)}` as Hex },
          ...okBase.slice(4),
        ]),
      },
      "subcall",
    ],
    [
      "a sub-call with 31 bytes",
      { kind: "result", value: forged([{ success: true, returnData: `0x${"00".repeat(31)}` }, ...okBase.slice(1)]) },
      "subcall",
    ],
    [
      "a sub-call with no data",
      {
        kind: "result",
        value: forged([...okBase.slice(0, 2), { success: true, returnData: "0x" }, ...okBase.slice(3)]),
      },
      "subcall",
    ],
  ] as const)("%s → 502 STATE_READ_FAILED", async (_label, fault, upstream) => {
    d.proxy.setFault(fault as never);
    const { status, body, headers } = await d.get(d.app(), statePath(user));
    expect(status).toBe(502);
    expect(body).toMatchObject({ ok: false, error: "STATE_READ_FAILED", detail: { upstream } });
    expect(headers.get("cache-control")).toBe("no-store");
    expect(JSON.stringify(body)).not.toContain(d.proxy.url.split("//")[1]!); // no upstream URL leaks
  });

  it("a node slower than the configured timeout is 502 STATE_READ_FAILED, promptly", async () => {
    d.proxy.setFault({ kind: "delay", ms: 3_000 });
    const rpc = createRpcClient({ url: d.proxy.url, timeoutMs: 300 });
    const t0 = Date.now();
    const { status, body } = await d.get(d.app({ rpc }), statePath(user));
    expect(status).toBe(502);
    expect(body).toMatchObject({ error: "STATE_READ_FAILED", detail: { upstream: "timeout" } });
    expect(Date.now() - t0).toBeLessThan(2_000);
  });
});
