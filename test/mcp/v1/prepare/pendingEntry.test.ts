/**
 * A pending entry's own quote (api/mcp/v1/prepare/pendingEntry.ts): harvest-rewards with compound=true and collect in
 * mode 1, against the served API process (dist/server/main.js) over the seeded devnet.
 *
 * - The quote needs FurnaceQuoter only where it is used: on a manifest without it, collect mode 0 (and mode 1 or a
 *   compound with a given minVeOutWei) is answered and executes; a request that would quote is 503 CHAIN_UNREADY
 *   naming the quoter and saying to give minVeOutWei, before any read of the action.
 * - Without VeLockNFT, a request that makes a new lock (whose count it reads) is 503 CHAIN_UNREADY naming it before any
 *   read (it used to read the pending amount, the quote and the allowance first); the others are answered.
 * - harvest-rewards compound=true with user and no minVeOutWei quotes the wallet's pending LP rewards
 *   (quoteEnterWithClaim of earned), encodes the quote less slippageBps, shows it as `quote`, and the batch executed
 *   as the user makes a lock whose voting power meets it. The calldata is compared byte for byte with viem's
 *   encodeFunctionData over the published signature (protocol.md §1), not the project's ABI.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Address, encodeFunctionData, getAddress, parseAbi, parseEther } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PrepareEnvelope } from "../../../../api/mcp/v1/prepare";
import { DEVNET_ABIS, sendTx } from "../../../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { childEnv, startApiChild } from "../../../support/apiProcess";
import { blockTime, execute, lockEvents, preparePath } from "../../../support/execution";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";
import { ethCallSelector } from "../../../support/rpcProxy";

const E18 = 10n ** 18n;
const DAY = 86_400n;
const YEAR = 365n * DAY;
const user = DEVNET_ACCOUNTS.fresh;
const deployer = DEVNET_ACCOUNTS.deployer;

/** The published signatures (protocol.md §1), independent of abis/. */
const PUBLISHED = parseAbi([
  "function claimRewardsAndLock(uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut)",
  "function claimRewards()",
  "function claimAll(uint8 mode, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut)",
  "function claimShareholder(uint8 mode, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut)",
]);
const EARNED = "0x008cc262";
const PREFLIGHT = "0x75106187";

let d: ReadsDevnet;
let dirs: string[] = [];
let children: ChildProcess[] = [];
/** The API process over the devnet's manifest, and one over the same manifest without FurnaceQuoter. */
let full: string;
let noQuoter: string;
/** And one without VeLockNFT, which only a new lock's count reads. */
let noLockNft: string;

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
  const withoutNft = structuredClone(d.deployment.manifest);
  delete withoutNft.contracts.VeLockNFT;
  noLockNft = await serve(withoutNft);
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
const earned = () => read<bigint>(A().LpStakingVault7D, DEVNET_ABIS.LpStakingVault7D, "earned", [user.address]);
const claimable = () =>
  read<bigint>(A().ShareholderRoyalties, DEVNET_ABIS.ShareholderRoyalties, "claimableEth", [user.address]);
const accrueRewards = (amount: bigint) =>
  sendTx(d.chain, deployer.privateKey, {
    address: A().LpStakingVault7D,
    abi: DEVNET_ABIS.LpStakingVault7D,
    functionName: "accrueRewards",
    args: [user.address, amount],
  });
const accrueRoyalties = (value: bigint) =>
  sendTx(d.chain, deployer.privateKey, {
    address: A().ShareholderRoyalties,
    abi: DEVNET_ABIS.ShareholderRoyalties,
    functionName: "accrue",
    args: [user.address],
    value,
  });
/** The vault compounds at most once a day (LockCooldown). */
const nextDay = async () => {
  await d.chain.testClient.increaseTime({ seconds: Number(DAY) + 1 });
  await d.chain.testClient.mine({ blocks: 1 });
};
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
    const harvest = await prepare(noQuoter, "harvest-rewards", {
      compound: true,
      durationSeconds: YEAR,
      createAutoMax: true,
      minVeOutWei: 9n,
    });
    expect(harvest.transactions[0]!.data).toBe(
      encodeFunctionData({ abi: PUBLISHED, functionName: "claimRewardsAndLock", args: [0n, YEAR, true, 9n] }),
    );
  });

  it("a request that would quote: 503 CHAIN_UNREADY naming FurnaceQuoter and minVeOutWei, before any read", async () => {
    await accrueRoyalties(parseEther("0.1"));
    await accrueRewards(10n * E18);
    d.proxy.reset();
    const quoted: [string, Record<string, string | bigint | boolean>][] = [
      ["collect-all", { mode: 1n, durationSeconds: 30n * DAY, user: user.address }],
      ["collect-royalties", { mode: 1n, durationSeconds: 30n * DAY, user: user.address, slippageBps: 100n }],
      ["harvest-rewards", { compound: true, durationSeconds: 30n * DAY, user: user.address }],
    ];
    for (const [action, params] of quoted) {
      const { status, body } = await get(noQuoter, preparePath(action, params));
      expect(status, action).toBe(503);
      expect(body).toEqual({
        ok: false,
        error: "CHAIN_UNREADY",
        message:
          "FurnaceQuoter is not deployed on local, and a request with " +
          `${action === "harvest-rewards" ? "compound=true" : "mode=1"} without minVeOutWei needs it (the service ` +
          "quotes the entry itself). Give minVeOutWei to do without it.",
        detail: { contract: "FurnaceQuoter", chain: "local", param: "minVeOutWei" },
      });
    }
    // Neither the pending amounts nor anything else of the actions was read: at most the gate's preflight.
    expect(selectorsRead().every((s) => s === PREFLIGHT)).toBe(true);
    // Paid out, so that the tests below start with nothing pending.
    await execute(d, user.privateKey, await prepare(full, "collect-royalties"));
    await execute(d, user.privateKey, await prepare(full, "harvest-rewards"));
  });
});

describe("a manifest without VeLockNFT: a new lock's count needs it, the other requests do not", () => {
  it("a Furnace entry into a new lock: 503 CHAIN_UNREADY naming VeLockNFT, before any read of the action", async () => {
    await accrueRoyalties(parseEther("0.1"));
    await accrueRewards(10n * E18);
    d.proxy.reset();
    const newLocks: [string, Record<string, string | bigint | boolean>][] = [
      // Quoted (the count is read with the quote), and with a given minVeOutWei (the count alone).
      ["collect-all", { mode: 1n, durationSeconds: 30n * DAY, user: user.address }],
      ["collect-royalties", { mode: 1n, durationSeconds: 30n * DAY, user: user.address, minVeOutWei: 7n }],
      ["harvest-rewards", { compound: true, durationSeconds: 30n * DAY, user: user.address }],
      ["lock-via-furnace", { claimAmountWei: 2000n * E18, durationSeconds: 30n * DAY, user: user.address }],
    ];
    for (const [action, params] of newLocks) {
      const { status, body } = await get(noLockNft, preparePath(action, params));
      expect(status, action).toBe(503);
      expect(body, action).toMatchObject({
        ok: false,
        error: "CHAIN_UNREADY",
        detail: { contract: "VeLockNFT", chain: "local" },
      });
    }
    // Neither a pending amount, a quote, an allowance nor a count was read: at most the gate's preflight.
    expect(selectorsRead().every((s) => s === PREFLIGHT)).toBe(true);
  });

  it("requests that make no new lock are answered as on the full manifest", async () => {
    for (const [action, params] of [
      ["collect-royalties", { mode: 0n, user: user.address }],
      ["harvest-rewards", { compound: false }],
    ] as const) {
      const bare = await prepare(noLockNft, action, params);
      const whole = await prepare(full, action, params);
      expect(bare.transactions, action).toEqual(whole.transactions);
    }
    // The quote route answers a new lock without the count (it warns at the limit; here it cannot count).
    const q = new URLSearchParams({
      user: user.address,
      claimAmountWei: String(2000n * E18),
      durationSeconds: "2592000",
    });
    const { status, body } = await get(noLockNft, `/api/mcp/v1/quote/lock-via-furnace?${q}`);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).not.toHaveProperty("lockLimit");
    // Paid out, so that the tests below start with nothing pending.
    await execute(d, user.privateKey, await prepare(full, "collect-royalties"));
    await execute(d, user.privateKey, await prepare(full, "harvest-rewards"));
  });
});

describe("harvest-rewards compound=true, quoted by the service", () => {
  type Quote = { claimAmountWei: string; veOutWei: string; minVeOutWei: string; slippageBps: number };

  /** /quote/lock-via-furnace for the same entry at the current block. */
  async function routeQuote(params: Record<string, string | bigint | boolean>) {
    const q = new URLSearchParams(
      Object.entries({ user: user.address, ...params }).map(([k, v]) => [k, String(v)]),
    ).toString();
    const { status, body } = await get(full, `/api/mcp/v1/quote/lock-via-furnace?${q}`);
    expect(status, JSON.stringify(body)).toBe(200);
    return body as { principalClaimWei: string; bonusClaimWei: string; veOutWei: string; minVeOutWei: string };
  }

  it("a new AutoMax lock: the quote of earned less 50 bps encoded, the lock's ve is the quote", async () => {
    await accrueRewards(1200n * E18);
    d.proxy.reset();
    const env = await prepare(full, "harvest-rewards", {
      compound: true,
      durationSeconds: YEAR,
      createAutoMax: true,
      user: user.address,
    });
    // The pending rewards were read (earned) and quoted.
    expect(selectorsRead()).toContain(EARNED);
    const quote = env.quote as Quote;
    const route = await routeQuote({ claimAmountWei: 1200n * E18, durationSeconds: YEAR, createAutoMax: true });
    expect(quote).toEqual({
      claimAmountWei: String(1200n * E18),
      veOutWei: route.veOutWei,
      minVeOutWei: route.minVeOutWei,
      slippageBps: 50,
    });
    expect(BigInt(quote.minVeOutWei)).toBe((BigInt(quote.veOutWei) * 9950n) / 10_000n);
    const [tx] = env.transactions;
    expect(env.transactions).toHaveLength(1);
    expect(getAddress(tx!.to)).toBe(A().LpStakingVault7D);
    expect(tx!.data.slice(0, 10)).toBe("0x293749ed");
    expect(tx!.data).toBe(
      encodeFunctionData({
        abi: PUBLISHED,
        functionName: "claimRewardsAndLock",
        args: [0n, YEAR, true, BigInt(quote.minVeOutWei)],
      }),
    );
    expect(env.simulation.ok).toBe(true);

    const [receipt] = await execute(d, user.privateKey, env);
    const created = lockEvents(d, receipt!).find((e) => e.eventName === "LockCreated")!;
    const args = created.args as { user: Address; tokenId: bigint; amount: bigint; autoMax: boolean };
    expect(getAddress(args.user)).toBe(user.address);
    expect(args.autoMax).toBe(true);
    expect(args.amount).toBe(BigInt(route.principalClaimWei) + BigInt(route.bonusClaimWei));
    const ve = args.amount; // an AutoMax lock's voting power is its amount
    expect(ve).toBe(BigInt(quote.veOutWei));
    expect(ve).toBeGreaterThanOrEqual(BigInt(quote.minVeOutWei));
    expect(await earned()).toBe(0n);
  });

  it("a top-up of a plain lock with slippageBps: the ve added meets the encoded minimum", async () => {
    // A plain 60-day lock of the wallet's own, through the Furnace (approve + enterWithClaim, as prepared).
    const made = await prepare(full, "lock-via-furnace", {
      user: user.address,
      claimAmountWei: 1000n * E18,
      durationSeconds: 60n * DAY,
    });
    const receipts = await execute(d, user.privateKey, made);
    const plainLock = (
      lockEvents(d, receipts.at(-1)!).find((e) => e.eventName === "LockCreated")!.args as { tokenId: bigint }
    ).tokenId;

    await nextDay();
    await accrueRewards(300n * E18);
    const params = { compound: true, targetTokenId: plainLock, durationSeconds: 7n * DAY, slippageBps: 30n };
    const env = await prepare(full, "harvest-rewards", { ...params, user: user.address });
    const quote = env.quote as Quote;
    expect(quote.claimAmountWei).toBe(String(300n * E18));
    expect(quote.slippageBps).toBe(30);
    expect(BigInt(quote.minVeOutWei)).toBe((BigInt(quote.veOutWei) * 9970n) / 10_000n);
    expect(env.transactions[0]!.data).toBe(
      encodeFunctionData({
        abi: PUBLISHED,
        functionName: "claimRewardsAndLock",
        args: [plainLock, 7n * DAY, false, BigInt(quote.minVeOutWei)],
      }),
    );

    const [receipt] = await execute(d, user.privateKey, env);
    const inc = lockEvents(d, receipt!).find((e) => e.eventName === "LockAmountIncreased")!;
    const { tokenId, amountAdded } = inc.args as { tokenId: bigint; amountAdded: bigint };
    expect(tokenId).toBe(plainLock);
    const [, lockEnd] = await read<[bigint, bigint, boolean, boolean]>(
      A().VeLockNFT,
      DEVNET_ABIS.VeLockNFT,
      "getLockInfo",
      [plainLock],
    );
    const ve = (amountAdded * (lockEnd - (await blockTime(d, receipt!)))) / YEAR;
    expect(ve).toBeGreaterThanOrEqual(BigInt(quote.minVeOutWei));
    expect(ve).toBeLessThanOrEqual(BigInt(quote.veOutWei)); // a plain lock's top-up only loses time after the quote
    expect(await earned()).toBe(0n);
  });

  it("nothing pending: 502 QUOTE_FAILED AmountZero, no batch", async () => {
    expect(await earned()).toBe(0n);
    const { status, body } = await get(
      full,
      preparePath("harvest-rewards", { compound: true, durationSeconds: 30n * DAY, user: user.address }),
    );
    expect(status).toBe(502);
    expect(body).toMatchObject({ ok: false, error: "QUOTE_FAILED", detail: { reason: "AmountZero" } });
    expect(body).not.toHaveProperty("transactions");
  });

  it("the rules mirror collect's: slippageBps refused with minVeOutWei and without compound; user or minVeOutWei", async () => {
    const refused: [Record<string, string | bigint | boolean>, string, RegExp][] = [
      [
        { compound: true, durationSeconds: 30n * DAY, minVeOutWei: 5n, slippageBps: 10n, user: user.address },
        "slippageBps",
        /only applies when minVeOutWei is omitted/,
      ],
      [{ slippageBps: 10n }, "slippageBps", /only applies with compound=true/],
      [{ compound: false, minVeOutWei: 5n }, "minVeOutWei", /only applies with compound=true/],
      [{ compound: true, durationSeconds: 30n * DAY }, "minVeOutWei", /minVeOutWei > 0, or user/],
      [
        { compound: true, durationSeconds: 30n * DAY, minVeOutWei: 0n, user: user.address },
        "minVeOutWei",
        /greater than 0/,
      ],
      [{ compound: true, durationSeconds: 30n * DAY, user: user.address, slippageBps: 10_001n }, "slippageBps", /./],
    ];
    for (const [params, param, message] of refused) {
      const { status, body } = await get(full, preparePath("harvest-rewards", params));
      expect([status, body.error, body.detail?.param], preparePath("harvest-rewards", params)).toEqual([
        400,
        "BAD_PARAMS",
        param,
      ]);
      expect(body.message).toMatch(message);
    }
  });

  it("a payout with every lock parameter given at its default (a client sending all fields): the payout's call; any other value refused", async () => {
    const defaults = { targetTokenId: 0n, durationSeconds: 0n, createAutoMax: false, minVeOutWei: 0n };
    for (const [action, payout, fn] of [
      ["collect-all", { mode: 0n }, "claimAll"],
      ["collect-royalties", { mode: 0n }, "claimShareholder"],
      ["harvest-rewards", { compound: false }, "claimRewards"],
    ] as const) {
      const env = await prepare(full, action, { ...payout, ...defaults, simulate: false });
      const bare = await prepare(full, action, { ...payout, simulate: false });
      expect(env.transactions, action).toEqual(bare.transactions);
      expect(env.transactions[0]!.data).toBe(
        fn === "claimRewards"
          ? encodeFunctionData({ abi: PUBLISHED, functionName: fn })
          : encodeFunctionData({ abi: PUBLISHED, functionName: fn, args: [0, 0n, 0n, false, 0n] }),
      );
      for (const [param, value] of [
        ["targetTokenId", 5n],
        ["durationSeconds", 30n * DAY],
        ["createAutoMax", true],
        ["minVeOutWei", 1n],
      ] as const) {
        const { status, body } = await get(full, preparePath(action, { ...payout, ...defaults, [param]: value }));
        expect([action, status, body.error, body.detail?.param]).toEqual([action, 400, "BAD_PARAMS", param]);
        expect(body.message).toMatch(/only applies with/);
      }
    }
  });

  it("the MCP tool prepare_harvest_rewards answers the same batch and quote", async () => {
    await nextDay();
    await accrueRewards(2000n * E18);
    const args = { compound: "true", durationSeconds: String(90n * DAY), user: user.address, slippageBps: "75" };
    const client = new Client({ name: "pending-entry-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${full}/api/mcp`)));
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === "prepare_harvest_rewards")!;
      const props = tool.inputSchema.properties as Record<string, { description?: string }>;
      expect(props.minVeOutWei!.description).toMatch(/Omit it and give user/);
      expect(props.slippageBps!.description).toMatch(/Refused with minVeOutWei/);
      const result = await client.callTool({ name: "prepare_harvest_rewards", arguments: args });
      expect(result.isError).toBe(false);
      const viaTool = result.structuredContent as PrepareEnvelope & { quote: Quote };
      const viaRest = await prepare(full, "harvest-rewards", args);
      expect(viaTool.quote).toEqual(viaRest.quote);
      expect(viaTool.quote.claimAmountWei).toBe(String(2000n * E18));
      expect(viaTool.transactions.map((t) => t.data)).toEqual(viaRest.transactions.map((t) => t.data));
      const [receipt] = await execute(d, user.privateKey, viaTool);
      const created = lockEvents(d, receipt!).find((e) => e.eventName === "LockCreated")!;
      const { amount, lockEnd } = created.args as { amount: bigint; lockEnd: bigint };
      const ve = (amount * (lockEnd - (await blockTime(d, receipt!)))) / YEAR;
      expect(ve).toBe(BigInt(viaTool.quote.veOutWei));
      expect(ve).toBeGreaterThanOrEqual(BigInt(viaTool.quote.minVeOutWei));
    } finally {
      await client.close();
    }
  });
});
