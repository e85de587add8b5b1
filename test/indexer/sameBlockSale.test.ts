/**
 * A market sale as Base runs it, in ONE block: unlist (MetadataUpdate) → transfer to the Furnace → burn. The
 * MetadataUpdate handler reads getLockInfo at the event's block, i.e. after the burn (docs/limitations.md). The
 * real indexer must follow it without stopping, both with the devnet's (and the published) getLockInfo, which
 * answers a burned id with zeros, and with a getLockInfo that reverts for a burned id (a replaced VeLockNFT
 * runtime: the indexer must never halt on a reverted read). Also: a list and an unlist of one lock in one block
 * leave no list/unlist rows (both reads see the end of the block), and the final flag is right.
 * Runs on PGlite, or on Postgres when DATABASE_URL is set.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { type Abi, type Hex, parseEventLogs, type TransactionReceipt } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTRACTS_DIR, compileDevnet } from "../../devnet/compile";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { send, startDevnet, type TestDevnet } from "../support/devnet";
import { headBlock, prepareActors, readIndexedLocks } from "../support/lockChain";
import {
  createTestDatabase,
  type PonderProcess,
  startPonder,
  type TestDatabase,
  writeManifest,
} from "../support/ponder";

const E18 = 10n ** 18n;
const DAY = 86_400n;
const backend = process.env.DATABASE_URL ? "postgres" : "pglite";

/** VeLockNFT whose getLockInfo reverts for an id nobody owns (a burned one); everything else, storage included, as is. */
function compileRevertingVeLockNFT(): Hex {
  const sources: Record<string, { content: string }> = {};
  for (const f of readdirSync(CONTRACTS_DIR).filter((f) => f.endsWith(".sol"))) {
    sources[f] = { content: readFileSync(path.join(CONTRACTS_DIR, f), "utf8") };
  }
  const original = sources["VeLockNFT.sol"]?.content ?? "";
  const head = "returns (uint256 amount, uint256 lockEnd, bool autoMax, bool listed) {\n";
  const at = original.indexOf(`function getLockInfo(uint256 tokenId) external view ${head}`);
  if (at < 0) throw new Error("getLockInfo not found in VeLockNFT.sol");
  const bodyAt = original.indexOf(head, at) + head.length;
  sources["VeLockNFT.sol"] = {
    content: `${original.slice(0, bodyAt)}        if (_owners[tokenId] == address(0)) revert ERC721NonexistentToken(tokenId);\n${original.slice(bodyAt)}`,
  };
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string };
  const settings = {
    evmVersion: "cancun",
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { "VeLockNFT.sol": { VeLockNFT: ["evm.bytecode.object"] } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify({ language: "Solidity", sources, settings }))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"));
  return `0x${out.contracts["VeLockNFT.sol"]?.VeLockNFT?.evm.bytecode.object}`;
}

describe(`a sale in one block (${backend})`, () => {
  let devnet: TestDevnet;
  let database: TestDatabase;
  let manifestFile: string;
  let ponder: PonderProcess;
  const ids = { published: 0n, reverting: 0n, flicker: 0n };

  const ve = () => ({ address: devnet.addresses.VeLockNFT, abi: DEVNET_ABIS.VeLockNFT as Abi });
  const { bob, market, deployer } = DEVNET_ACCOUNTS;

  async function createLock(amount: bigint, days: bigint): Promise<bigint> {
    const receipt = await send(devnet, bob.privateKey, {
      address: devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithClaim",
      args: [amount * E18, 0n, days * DAY, false, 1n],
    });
    const [created] = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName: "LockCreated", logs: receipt.logs });
    if (!created) throw new Error("no LockCreated");
    return created.args.tokenId;
  }

  /** Sends the calls without mining, then mines them together: one block, in this order. */
  async function inOneBlock(calls: { key: Hex; address: Hex; abi: Abi; functionName: string; args: unknown[] }[]) {
    const { testClient, publicClient, walletFor, chain } = devnet.clients;
    await testClient.setAutomine(false);
    const hashes: Hex[] = [];
    try {
      for (const c of calls) {
        const wallet = walletFor(c.key);
        const nonce = await publicClient.getTransactionCount({ address: wallet.account.address, blockTag: "pending" });
        hashes.push(
          await wallet.writeContract({
            chain,
            account: wallet.account,
            address: c.address,
            abi: c.abi,
            functionName: c.functionName,
            args: c.args,
            gas: 1_000_000n,
            nonce,
          }),
        );
      }
      await testClient.mine({ blocks: 1 });
    } finally {
      await testClient.setAutomine(true);
    }
    const receipts: TransactionReceipt[] = [];
    for (const hash of hashes) receipts.push(await publicClient.waitForTransactionReceipt({ hash }));
    expect(receipts.map((r) => r.status)).toEqual(calls.map(() => "success"));
    expect(new Set(receipts.map((r) => r.blockNumber)).size).toBe(1);
  }

  const sale = (tokenId: bigint) => [
    { key: market.privateKey as Hex, ...ve(), functionName: "setListed", args: [tokenId, false] },
    {
      key: market.privateKey as Hex,
      ...ve(),
      functionName: "transferFrom",
      args: [bob.address, devnet.addresses.Furnace, tokenId],
    },
    {
      key: deployer.privateKey as Hex,
      address: devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace as Abi,
      functionName: "settleSellBack",
      args: [tokenId],
    },
  ];

  beforeAll(async () => {
    devnet = await startDevnet();
    await prepareActors(devnet);

    // The published getLockInfo: zeros for a burned id.
    ids.published = await createLock(1_500n, 14n);
    await send(devnet, market.privateKey, { ...ve(), functionName: "setListed", args: [ids.published, true] });
    await inOneBlock(sale(ids.published));
    const burned = await devnet.clients.publicClient.readContract({
      ...ve(),
      functionName: "getLockInfo",
      args: [ids.published],
    });
    expect(burned).toEqual([0n, 0n, false, false]);

    // A list and an unlist in one block.
    ids.flicker = await createLock(1_200n, 30n);
    await inOneBlock([
      { key: market.privateKey as Hex, ...ve(), functionName: "setListed", args: [ids.flicker, true] },
      { key: market.privateKey as Hex, ...ve(), functionName: "setListed", args: [ids.flicker, false] },
    ]);

    // From here on getLockInfo reverts for a burned id (same storage, same immutables: built from the same
    // constructor arguments, then its runtime code put at the VeLockNFT address).
    const { publicClient, testClient, walletFor } = devnet.clients;
    const [token, furnace, marketAddr] = await Promise.all(
      (["token", "furnace", "market"] as const).map(
        (functionName) =>
          publicClient.readContract({ ...ve(), abi: compileDevnet().VeLockNFT.abi, functionName }) as Promise<Hex>,
      ),
    );
    const deployHash = await walletFor(deployer.privateKey as Hex).deployContract({
      abi: compileDevnet().VeLockNFT.abi,
      bytecode: compileRevertingVeLockNFT(),
      args: [token, furnace, marketAddr],
      chain: devnet.clients.chain,
      account: walletFor(deployer.privateKey as Hex).account,
    });
    const variant = (await publicClient.waitForTransactionReceipt({ hash: deployHash })).contractAddress as Hex;
    const code = await publicClient.getCode({ address: variant });
    await testClient.setCode({ address: devnet.addresses.VeLockNFT, bytecode: code as Hex });
    await testClient.mine({ blocks: 1 });

    ids.reverting = await createLock(2_000n, 21n);
    await send(devnet, market.privateKey, { ...ve(), functionName: "setListed", args: [ids.reverting, true] });
    await inOneBlock(sale(ids.reverting));
    await expect(
      publicClient.readContract({ ...ve(), functionName: "getLockInfo", args: [ids.reverting] }),
    ).rejects.toThrow(/ERC721NonexistentToken|reverted/);

    database = await createTestDatabase();
    manifestFile = writeManifest(devnet.deployment.manifest);
    ponder = await startPonder({ rpcUrl: devnet.rpcUrl, manifestFile, database: database.forPonder() });
  }, 120_000);

  afterAll(async () => {
    await ponder?.stop();
    await devnet?.stop();
    await database?.drop();
    if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
  });

  it("indexes both sales to the end (burned, not listed, list → unlist → transfer → unlock) and keeps running", async () => {
    await ponder.waitForBlock(await headBlock(devnet), 120_000);
    const idx = await ponder.openDb();
    try {
      const rows = await readIndexedLocks(idx);
      for (const tokenId of [ids.published, ids.reverting]) {
        expect(rows.find((r) => r.tokenId === tokenId)).toMatchObject({ owner: null, listed: false, burned: true });
      }
      const history = await idx.query<{ token_id: string; kind: string }>(
        `SELECT token_id, kind FROM ${idx.table("lock_event")} ORDER BY block_number, log_index`,
      );
      const kinds = (tokenId: bigint) => history.filter((e) => BigInt(e.token_id) === tokenId).map((e) => e.kind);
      expect(kinds(ids.published)).toEqual(["create", "list", "unlist", "transfer", "unlock"]);
      expect(kinds(ids.reverting)).toEqual(["create", "list", "unlist", "transfer", "unlock"]);
      // Listed and unlisted in one block: both reads see the end of the block (not listed), so no rows; flag right.
      expect(kinds(ids.flicker)).toEqual(["create"]);
      expect(rows.find((r) => r.tokenId === ids.flicker)).toMatchObject({ listed: false, burned: false });
    } finally {
      await idx.close();
    }
    expect(await ponder.indexedBlock()).toBe(await headBlock(devnet));
  });
});
