/**
 * Fixture for the indexer benchmark: tens of thousands of real VeLockNFT events on a devnet, fast. Many users
 * (impersonated addresses) create locks, then top up, extend, switch AutoMax on and top up again (the silent
 * lockEnd refresh), and merge — every handler runs. Transactions go out as JSON-RPC batches of
 * eth_sendTransaction with automine off and a high block gas limit, one evm_mine per phase chunk.
 */
import { type Address, encodeFunctionData, getAddress, type Hex, parseEventLogs } from "viem";
import type { DevnetAddresses } from "../devnet/deploy";
import { DEVNET_ABIS } from "../devnet/deploy";

const E18 = 10n ** 18n;
const DAY = 86_400n;

type Tx = { from: Address; to: Address; data: Hex; gas: bigint };

export type LockActivityOptions = {
  rpcUrl: string;
  addresses: DevnetAddresses;
  deployer: Address;
  users: number;
  locksPerUser: number;
  /** Top-ups per lock before AutoMax is switched on (one more follows it on half of the locks). */
  topUpsPerLock: number;
  /** Transactions per mined block. */
  perBlock?: number;
};

export async function generateLockActivity(opts: LockActivityOptions): Promise<{ events: number; txs: number }> {
  let id = 0;
  const rpc = async (method: string, params: unknown[]) => (await rpcBatch([{ method, params }]))[0];
  const rpcBatch = async (calls: { method: string; params: unknown[] }[]): Promise<unknown[]> => {
    const res = await fetch(opts.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(calls.map((c) => ({ jsonrpc: "2.0", id: ++id, ...c }))),
    });
    const out = (await res.json()) as { result?: unknown; error?: { message?: string } }[];
    const failed = out.find((o) => o.error);
    if (failed) throw new Error(`lock activity: ${failed.error?.message ?? JSON.stringify(failed.error)}`);
    return out.map((o) => o.result);
  };

  const nonces = new Map<Address, number>();
  let txs = 0;
  const perBlock = opts.perBlock ?? 500;
  const sendAll = async (list: Tx[]) => {
    for (let i = 0; i < list.length; i += perBlock) {
      const chunk = list.slice(i, i + perBlock);
      for (const tx of chunk) {
        if (!nonces.has(tx.from)) {
          nonces.set(tx.from, Number(await rpc("eth_getTransactionCount", [tx.from, "pending"])));
        }
      }
      await rpcBatch(
        chunk.map((tx) => {
          const nonce = nonces.get(tx.from) as number;
          nonces.set(tx.from, nonce + 1);
          const params = { ...tx, gas: `0x${tx.gas.toString(16)}`, nonce: `0x${nonce.toString(16)}` };
          return { method: "eth_sendTransaction", params: [params] };
        }),
      );
      // Mine until the pool is empty: a block that could not take every transaction leaves the rest pending.
      for (let guard = 0; guard < 50; guard++) {
        await rpc("evm_mine", []);
        const status = (await rpc("txpool_status", [])) as { pending: string; queued: string };
        if (Number(status.pending) === 0 && Number(status.queued) === 0) break;
      }
      txs += chunk.length;
    }
  };
  const ve = opts.addresses.VeLockNFT;
  const veCall = (from: Address, functionName: string, args: readonly unknown[], gas: bigint): Tx => ({
    from,
    to: ve,
    gas,
    // biome-ignore lint/suspicious/noExplicitAny: functionName/args are checked by viem at runtime against the ABI
    data: encodeFunctionData({ abi: DEVNET_ABIS.VeLockNFT, functionName, args } as any),
  });

  const users = Array.from({ length: opts.users }, (_, i) =>
    getAddress(`0x${(0xbe0000 + i).toString(16).padStart(40, "0")}`),
  );
  // VeLockNFT's *For mutators accept only the Furnace (as on Base): the impersonated Furnace sends them for the
  // users and pays the tokens; setAutoMax stays the owner's own call.
  const furnace = opts.addresses.Furnace;
  await rpc("evm_setAutomine", [false]);
  try {
    await rpc("evm_setBlockGasLimit", ["0x3b9aca00"]); // 1e9: hundreds of transactions per block
    await rpcBatch(
      users
        .flatMap((u) => [
          { method: "anvil_impersonateAccount", params: [u] },
          { method: "anvil_setBalance", params: [u, "0xde0b6b3a7640000"] },
        ])
        .concat([
          { method: "anvil_impersonateAccount", params: [furnace] },
          { method: "anvil_setBalance", params: [furnace, "0x56bc75e2d63100000"] },
        ]),
    );
    const perUser = BigInt(opts.locksPerUser) * (1_500n + 2n * BigInt(opts.topUpsPerLock + 2)) * E18;
    await sendAll([
      {
        from: opts.deployer,
        to: opts.addresses.AssetToken,
        gas: 100_000n,
        data: encodeFunctionData({
          abi: DEVNET_ABIS.AssetToken,
          functionName: "mint",
          args: [furnace, perUser * BigInt(users.length)],
        }),
      },
    ]);

    // Creates: Transfer(0 → user) + LockCreated each.
    await sendAll(
      users.flatMap((u, i) =>
        Array.from({ length: opts.locksPerUser }, (_, k) =>
          veCall(
            furnace,
            "createLockFor",
            [u, 1_000n * E18 + BigInt((i * 7 + k) % 500) * E18, 30n * DAY, false],
            400_000n,
          ),
        ),
      ),
    );
    const created = await veLogs(opts.rpcUrl, ve, "LockCreated");
    if (created.length !== opts.users * opts.locksPerUser) {
      throw new Error(`lock activity: ${created.length} of ${opts.users * opts.locksPerUser} creates succeeded`);
    }
    const locks = new Map<Address, { tokenId: bigint; lockEnd: bigint }[]>();
    for (const log of created) {
      const list = locks.get(log.user) ?? [];
      list.push({ tokenId: log.tokenId, lockEnd: log.lockEnd });
      locks.set(log.user, list);
    }

    const all = [...locks.entries()].flatMap(([user, list]) => list.map((l) => ({ user, ...l })));
    // Top-ups (LockAmountIncreased), round-robin so each block touches many locks.
    const topUps: Tx[] = [];
    for (let r = 0; r < opts.topUpsPerLock; r++) {
      for (const l of all) topUps.push(veCall(furnace, "addToLockFor", [l.user, l.tokenId, E18 + BigInt(r)], 150_000n));
    }
    await sendAll(topUps);
    // Extends (LockExtended): 10 more days.
    await sendAll(
      all.map((l) => veCall(furnace, "extendLockToFor", [l.user, l.tokenId, l.lockEnd + 10n * DAY], 100_000n)),
    );
    // AutoMax on for every other lock (AutoMaxSet), then one more top-up each: the silent lockEnd refresh.
    const auto = all.filter((_, i) => i % 2 === 0);
    await sendAll(auto.map((l) => veCall(l.user, "setAutoMax", [l.tokenId, true], 100_000n)));
    await sendAll(auto.map((l) => veCall(furnace, "addToLockFor", [l.user, l.tokenId, 2n * E18], 150_000n)));
    // Merges: each user's first lock into its second (Transfer(user → 0) + LockMerged).
    await sendAll(
      [...locks.entries()]
        .filter(([, list]) => list.length >= 2)
        .map(([user, list]) => veCall(furnace, "mergeLocksFor", [user, list[0]?.tokenId, list[1]?.tokenId], 250_000n)),
    );
  } finally {
    await rpc("evm_setAutomine", [true]);
  }
  const events = (await rpc("eth_getLogs", [{ address: ve, fromBlock: "0x0", toBlock: "latest" }])) as unknown[];
  return { events: events.length, txs };
}

async function veLogs(rpcUrl: string, address: Address, eventName: "LockCreated") {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getLogs",
      params: [{ address, fromBlock: "0x0", toBlock: "latest" }],
    }),
  });
  const { result } = (await res.json()) as { result: Parameters<typeof parseEventLogs>[0]["logs"] };
  return parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName, logs: result }).map((l) => ({
    user: getAddress(l.args.user),
    tokenId: l.args.tokenId,
    lockEnd: l.args.lockEnd,
  }));
}
