import { encodeErrorResult, encodeFunctionResult, parseAbi, toFunctionSelector } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRpcClient } from "../../../api/chain/rpc";
import { ChainUnreadyError, QuoteFailedError } from "../../../api/http/errors";
import { applyMinVeOutClamp, bonusBpsVsPrincipalClaim, furnaceVeOut } from "../../../api/math";
import { quoteLockViaFurnace } from "../../../api/mcp/v1/quote";
import { DEVNET_ABIS } from "../../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../../devnet/seed";
import { type ReadsDevnet, startReadsDevnet } from "../../support/readsDevnet";
import { ethCallSelector } from "../../support/rpcProxy";

const QUOTE_SELECTOR = toFunctionSelector("quoteEnterWithClaim(address,uint256,uint256,uint256,bool)");

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

const E18 = 10n ** 18n;
const DAY = 86_400n;
const { alice, carol, capped, fresh, idle } = DEVNET_ACCOUNTS;

const quotePath = (q: Record<string, string | bigint | boolean>) =>
  `/api/mcp/v1/quote/lock-via-furnace?${new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]))}`;

async function chainQuote(user: `0x${string}`, claimIn: bigint, target: bigint, duration: bigint, autoMax: boolean) {
  const [principal, bonus, veOut, route] = await d.chain.publicClient.readContract({
    address: d.deployment.addresses.FurnaceQuoter,
    abi: DEVNET_ABIS.FurnaceQuoter,
    functionName: "quoteEnterWithClaim",
    args: [user, claimIn, target, duration, autoMax],
  });
  return { principal, bonus, veOut, route };
}

async function lockEnd(tokenId: bigint) {
  const [, end] = await d.chain.publicClient.readContract({
    address: d.deployment.addresses.VeLockNFT,
    abi: DEVNET_ABIS.VeLockNFT,
    functionName: "getLockInfo",
    args: [tokenId],
  });
  return end;
}

describe("GET /quote/lock-via-furnace against on-chain truth", () => {
  const cases = () => [
    {
      name: "fresh, new 180-day lock",
      user: fresh.address,
      amount: 2_000n * E18,
      target: 0n,
      duration: 180n * DAY,
      autoMax: false,
    },
    {
      name: "fresh, new 7-day lock",
      user: fresh.address,
      amount: 1_000n * E18,
      target: 0n,
      duration: 7n * DAY,
      autoMax: false,
    },
    {
      name: "fresh, AutoMax 365 days",
      user: fresh.address,
      amount: 5_000n * E18,
      target: 0n,
      duration: 365n * DAY,
      autoMax: true,
    },
    {
      name: "idle user, new 30-day lock",
      user: idle.address,
      amount: 1_234n * E18 + 5n,
      target: 0n,
      duration: 30n * DAY,
      autoMax: false,
    },
    {
      name: "carol tops up her Furnace lock",
      user: carol.address,
      amount: 500n * E18,
      target: d.seed.tokenIds.carolFurnace,
      duration: 0n,
      autoMax: false,
    },
    {
      // As published, a top-up of an AutoMax lock needs durationSeconds = 365 days (InvalidDuration otherwise)
      name: "alice tops up her AutoMax lock",
      user: alice.address,
      amount: 10n * E18,
      target: d.seed.tokenIds.aliceAutoMax,
      duration: 365n * DAY,
      autoMax: false,
    },
    {
      // As published, a new lock's duration is clamped to [7 days, 365 days]: the default 0 quotes 7 days
      name: "fresh, new lock with durationSeconds omitted (7 days)",
      user: fresh.address,
      amount: 2_000n * E18,
      target: 0n,
      duration: 0n,
      autoMax: false,
    },
    {
      name: "fresh, new 366-day lock (365 days)",
      user: fresh.address,
      amount: 2_000n * E18,
      target: 0n,
      duration: 366n * DAY,
      autoMax: false,
    },
  ];

  it("every case matches the quoter and the shared math", async () => {
    for (const c of cases()) {
      for (const slippage of [undefined, 0n, 123n, 10_000n]) {
        d.proxy.reset();
        const q: Record<string, string | bigint | boolean> = { user: c.user, claimAmountWei: c.amount };
        if (c.target) q.targetTokenId = c.target;
        if (c.duration) q.durationSeconds = c.duration;
        if (c.autoMax) q.createAutoMax = true;
        if (slippage !== undefined) q.slippageBps = slippage;
        const { status, body } = await d.get(d.app(), quotePath(q));
        expect(status, c.name).toBe(200);
        const t = await chainQuote(c.user, c.amount, c.target, c.duration, c.autoMax);
        const s = slippage ?? 50n;
        expect(body, c.name).toEqual({
          ok: true,
          principalClaimWei: String(t.principal),
          bonusClaimWei: String(t.bonus),
          veOutWei: String(t.veOut),
          minVeOutWei: String(applyMinVeOutClamp(t.veOut, s)),
          routeTokenId: String(c.target),
          slippageBps: Number(s),
          bonusBpsVsPrincipalClaim: String(bonusBpsVsPrincipalClaim(t.bonus, t.principal)),
        });
        // One round trip: the quote, and for a new lock the wallet's lock count beside it (lockLimit.ts).
        expect([d.proxy.roundTrips(), d.proxy.count()], c.name).toEqual([1, c.target === 0n ? 2 : 1]);
        expect(t.veOut).toBeGreaterThan(0n);
      }
    }
  });

  it("the 33rd lock: the published quoter counts no locks and quotes it; the route quotes it as the reference does, with a warning naming LOCK_LIMIT_REACHED", async () => {
    const entry = { user: capped.address, amount: 2_000n * E18, target: 0n, duration: 30n * DAY, autoMax: false };
    const t = await chainQuote(entry.user, entry.amount, entry.target, entry.duration, entry.autoMax);
    expect(t.veOut).toBeGreaterThan(0n); // a number the Furnace cannot mint: the entry reverts InvariantViolation
    const entries: Record<string, bigint | string>[] = [
      { user: entry.user, claimAmountWei: entry.amount, durationSeconds: entry.duration },
      { user: entry.user, ethAmountWei: 10n ** 17n, durationSeconds: entry.duration },
    ];
    for (const q of entries) {
      const { status, body } = await d.get(d.app(), quotePath(q));
      expect(status).toBe(200);
      expect(body).toMatchObject({ ok: true, routeTokenId: "0" });
      expect((body as { warning?: string }).warning).toMatch(/^LOCK_LIMIT_REACHED: this wallet already holds 32 locks/);
    }
    // The quoter's figures are the chain's, as for any wallet.
    const claim = await d.get(d.app(), quotePath(entries[0]!));
    expect((claim.body as { veOutWei: string }).veOutWei).toBe(String(t.veOut));
    // A top-up of one of its locks is no new lock: quoted as before.
    const top = { user: entry.user, claimAmountWei: 10n * E18, targetTokenId: d.seed.tokenIds.capped[1]! };
    const topped = await d.get(d.app(), quotePath(top));
    expect(topped.status).toBe(200);
    expect(topped.body).not.toHaveProperty("warning");
  });

  it("the quoter's veOut is the shared furnaceVeOut of its principal and bonus", async () => {
    const head = await d.chain.publicClient.getBlock({ blockTag: "latest" });
    for (const c of cases()) {
      const t = await chainQuote(c.user, c.amount, c.target, c.duration, c.autoMax);
      const autoMaxLock = c.target === d.seed.tokenIds.aliceAutoMax;
      const route =
        c.autoMax || autoMaxLock
          ? ({ kind: "autoMax" } as const)
          : c.target
            ? ({ kind: "existing", lockEnd: await lockEnd(c.target), now: head.timestamp } as const)
            : ({ kind: "new", durationSeconds: c.duration } as const);
      expect(furnaceVeOut(t.principal, t.bonus, route), c.name).toBe(t.veOut);
    }
  });

  it("quoteLockViaFurnace (for prepare) returns the same numbers as bigints", async () => {
    const q = await quoteLockViaFurnace(d, {
      user: fresh.address,
      claimAmountWei: 2_000n * E18,
      durationSeconds: 180n * DAY,
    });
    const t = await chainQuote(fresh.address, 2_000n * E18, 0n, 180n * DAY, false);
    expect(q).toEqual({
      principalClaimWei: t.principal,
      bonusClaimWei: t.bonus,
      veOutWei: t.veOut,
      minVeOutWei: applyMinVeOutClamp(t.veOut, 50n),
      routeTokenId: 0n,
      slippageBps: 50n,
      bonusBpsVsPrincipalClaim: bonusBpsVsPrincipalClaim(t.bonus, t.principal),
    });
    expect(q.bonusClaimWei).toBeGreaterThan(0n);
  });
});

describe("GET /quote/lock-via-furnace with ethAmountWei (FurnaceQuoter.quoteEnterWithEth)", () => {
  const ethQuote = (user: `0x${string}`, ethIn: bigint, target: bigint, duration: bigint, autoMax: boolean) =>
    d.chain.publicClient.readContract({
      address: d.deployment.addresses.FurnaceQuoter,
      abi: DEVNET_ABIS.FurnaceQuoter,
      functionName: "quoteEnterWithEth",
      args: [user, ethIn, target, duration, autoMax],
    });

  it("answers the on-chain quoteEnterWithEth at the same block, new lock and top-up, with one eth_call", async () => {
    const cases = [
      { user: fresh.address, eth: 2n * 10n ** 17n, target: 0n, duration: 90n * DAY, autoMax: false },
      { user: fresh.address, eth: 5n * 10n ** 17n, target: 0n, duration: 365n * DAY, autoMax: true },
      { user: carol.address, eth: 10n ** 15n, target: d.seed.tokenIds.carolFurnace, duration: 0n, autoMax: false },
    ];
    for (const c of cases) {
      d.proxy.reset();
      const q: Record<string, string | bigint | boolean> = { user: c.user, ethAmountWei: c.eth, slippageBps: 80n };
      if (c.target) q.targetTokenId = c.target;
      if (c.duration) q.durationSeconds = c.duration;
      if (c.autoMax) q.createAutoMax = true;
      const { status, body } = await d.get(d.app(), quotePath(q));
      expect(status, JSON.stringify(body)).toBe(200);
      expect([d.proxy.roundTrips(), d.proxy.count()]).toEqual([1, c.target === 0n ? 2 : 1]); // + a new lock's count
      const [principal, bonus, veOut] = await ethQuote(c.user, c.eth, c.target, c.duration, c.autoMax);
      expect(body).toMatchObject({
        principalClaimWei: String(principal),
        bonusClaimWei: String(bonus),
        veOutWei: String(veOut),
        minVeOutWei: String(applyMinVeOutClamp(veOut, 80n)),
        slippageBps: 80,
      });
      // The devnet's swap is its fixed rate: the same entry as that many tokens.
      const t = await chainQuote(c.user, c.eth * 10_000n, c.target, c.duration, c.autoMax);
      expect([principal, bonus, veOut]).toEqual([t.principal, t.bonus, t.veOut]);
    }
  });

  it("takes exactly one of claimAmountWei and ethAmountWei (BAD_PARAMS before any RPC)", async () => {
    d.proxy.reset();
    const both = await d.get(d.app(), quotePath({ user: fresh.address, claimAmountWei: 1n, ethAmountWei: 1n }));
    expect(both.status).toBe(400);
    expect(both.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "ethAmountWei" } });
    const neither = await d.get(d.app(), quotePath({ user: fresh.address, durationSeconds: 30n * DAY }));
    expect(neither.status).toBe(400);
    expect(neither.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "claimAmountWei" } });
    expect(d.proxy.count()).toBe(0);
  });

  it("a quoter revert is refused as for tokens: 0 ETH is AmountZero, too little ETH MinLockAmountNotMet", async () => {
    for (const [reason, eth] of [
      ["AmountZero", 0n],
      ["MinLockAmountNotMet", 10n ** 16n],
    ] as const) {
      const { status, body } = await d.get(
        d.app(),
        quotePath({ user: fresh.address, ethAmountWei: eth, durationSeconds: 30n * DAY }),
      );
      expect(status).toBe(502);
      expect(body).toMatchObject({ error: "QUOTE_FAILED", detail: { reason } });
    }
  });
});

describe("quoter reverts → 502 QUOTE_FAILED with the decoded custom error", () => {
  const cases = () =>
    [
      ["AmountZero", { user: fresh.address, claimAmountWei: 0n, durationSeconds: 30n * DAY }],
      ["MinLockAmountNotMet", { user: fresh.address, claimAmountWei: 900n * E18, durationSeconds: 7n * DAY }],
      [
        "InvalidDuration",
        { user: fresh.address, claimAmountWei: 2_000n * E18, durationSeconds: 180n * DAY, createAutoMax: true },
      ],
      // a top-up of an AutoMax lock with durationSeconds omitted (0, clamped to 7 days): not 365 days
      [
        "InvalidDuration",
        { user: alice.address, claimAmountWei: 10n * E18, targetTokenId: d.seed.tokenIds.aliceAutoMax },
      ],
      ["NotAuthorized", { user: fresh.address, claimAmountWei: 10n * E18, targetTokenId: d.seed.tokenIds.alicePlain }],
      // never minted, and burned: the published quoter's ownerOf fails → InvalidToken
      ["InvalidToken", { user: fresh.address, claimAmountWei: 10n * E18, targetTokenId: 999_999n }],
      [
        "InvalidToken",
        { user: alice.address, claimAmountWei: 10n * E18, targetTokenId: d.seed.tokenIds.aliceUnlocked },
      ],
      ["LockExpired", { user: carol.address, claimAmountWei: 10n * E18, targetTokenId: d.seed.tokenIds.carolExpired }],
    ] as const;

  it("each revert, through the route and through quoteLockViaFurnace", async () => {
    for (const [reason, q] of cases()) {
      d.proxy.reset();
      const { status, body, headers } = await d.get(d.app(), quotePath(q));
      expect(status, reason).toBe(502);
      expect(body, reason).toEqual({
        ok: false,
        error: "QUOTE_FAILED",
        message: expect.stringContaining(reason),
        detail: { reason },
      });
      expect(headers.get("cache-control")).toBe("no-store");
      // An InvalidDuration names what the published Furnace asks of a new lock or a top-up.
      if (reason === "InvalidDuration") {
        const top = "targetTokenId" in q && q.targetTokenId !== 0n;
        expect((body as { message: string }).message).toContain(
          top
            ? // more is clamped to 365 days and passes on Base too (published Furnace: the resolved duration)
              "A top-up of an AutoMax lock needs durationSeconds=31536000 (more is clamped to it)"
            : "A new AutoMax lock needs durationSeconds",
        );
      }
      // A new lock's count rode in the quote's batch; a member's revert has each read asked again alone (coalesce.ts).
      const newLock = !("targetTokenId" in q);
      expect(d.proxy.count("eth_call")).toBe(newLock ? 4 : 1);
      const thrown = await quoteLockViaFurnace(d, q).catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(QuoteFailedError);
      expect((thrown as QuoteFailedError).detail).toEqual({ reason });
    }
  });
});

describe("quote failures through the fault proxy", () => {
  const q = { user: fresh.address, claimAmountWei: 2_000n * E18, durationSeconds: 30n * DAY };
  const word = (n: bigint) => n.toString(16).padStart(64, "0");
  const forged = encodeFunctionResult({
    abi: DEVNET_ABIS.FurnaceQuoter,
    functionName: "quoteEnterWithClaim",
    result: [1000n, 10n, 199n, 0n],
  });

  it("a forged well-formed answer flows through the math (the harness reaches the decoder)", async () => {
    // The quoter's answer only (a new lock's count, read beside it, is answered by the node).
    d.proxy.setFault({ kind: "result", value: forged, match: (m, p) => ethCallSelector(m, p) === QUOTE_SELECTOR });
    const { status, body } = await d.get(d.app(), quotePath(q));
    expect(status).toBe(200);
    expect(body).toMatchObject({ veOutWei: "199", minVeOutWei: "198", bonusBpsVsPrincipalClaim: "100" });
  });

  it.each([
    ["node down", { kind: "down" }, { reason: null, upstream: "unreachable" }],
    ["HTTP 502", { kind: "http", status: 502 }, { reason: null, upstream: "http" }],
    [
      "JSON-RPC error without data",
      { kind: "rpcError", code: -32000, message: "boom" },
      { reason: null, upstream: "rpc" },
    ],
    [
      "a bare revert",
      { kind: "rpcError", code: 3, message: "execution reverted", data: "0x" },
      { reason: null, upstream: "rpc" },
    ],
    [
      "an unknown selector",
      { kind: "rpcError", code: 3, message: "execution reverted", data: "0xdeadbeef" },
      { reason: null, upstream: "rpc" },
    ],
    [
      "an injected AmountZero",
      {
        kind: "rpcError",
        code: 3,
        message: "execution reverted",
        data: encodeErrorResult({ abi: DEVNET_ABIS.FurnaceQuoter, errorName: "AmountZero" }),
      },
      { reason: "AmountZero" },
    ],
    [
      "an Error(string)",
      {
        kind: "rpcError",
        code: 3,
        message: "execution reverted",
        data: encodeErrorResult({ abi: parseAbi(["error Error(string)"]), errorName: "Error", args: ["paused"] }),
      },
      { reason: "Error", args: ["paused"] },
    ],
    [
      "a panic",
      {
        kind: "rpcError",
        code: 3,
        message: "execution reverted",
        data: encodeErrorResult({ abi: parseAbi(["error Panic(uint256)"]), errorName: "Panic", args: [0x11n] }),
      },
      { reason: "Panic", args: ["17"] },
    ],
    ["result 0x", { kind: "result", value: "0x" }, { reason: null, upstream: "invalid" }],
    ["result null", { kind: "result", value: null }, { reason: null, upstream: "invalid" }],
    ["three words", { kind: "result", value: forged.slice(0, 2 + 192) }, { reason: null, upstream: "invalid" }],
    ["five words", { kind: "result", value: `${forged}${word(0n)}` }, { reason: null, upstream: "invalid" }],
    ["non-hex", { kind: "result", value: `0x${"z".repeat(256)}` }, { reason: null, upstream: "invalid" }],
  ] as const)("%s → 502 QUOTE_FAILED", async (_label, fault, detail) => {
    d.proxy.setFault(fault as never);
    const { status, body } = await d.get(d.app(), quotePath(q));
    expect(status).toBe(502);
    expect(body).toMatchObject({ ok: false, error: "QUOTE_FAILED", detail });
  });

  it("a node slower than the timeout → 502 QUOTE_FAILED", async () => {
    d.proxy.setFault({ kind: "delay", ms: 3_000 });
    const rpc = createRpcClient({ url: d.proxy.url, timeoutMs: 300 });
    const { status, body } = await d.get(d.app({ rpc }), quotePath(q));
    expect(status).toBe(502);
    expect(body).toMatchObject({ error: "QUOTE_FAILED", detail: { upstream: "timeout" } });
  });

  it("no RPC configured → 502 QUOTE_FAILED", async () => {
    const { status, body } = await d.get(d.app({ rpc: null }), quotePath(q));
    expect(status).toBe(502);
    expect(body.error).toBe("QUOTE_FAILED");
  });

  it("no FurnaceQuoter in the manifest → 503 CHAIN_UNREADY, no RPC", async () => {
    const config = d.configWith((m) => ({ ...m, contracts: { ...m.contracts, FurnaceQuoter: undefined } }));
    const { status, body } = await d.get(d.app({ config }), quotePath(q));
    expect(status).toBe(503);
    expect(body).toMatchObject({ error: "CHAIN_UNREADY", detail: { contract: "FurnaceQuoter" } });
    await expect(quoteLockViaFurnace({ rpc: d.rpc, config }, q)).rejects.toBeInstanceOf(ChainUnreadyError);
    expect(d.proxy.count()).toBe(0);
  });

  it("reads are not gated: the quote answers while genesis is not finalized", async () => {
    const gateSeesClosed = d.app();
    await d.setStatusBitmask(0x7ffn);
    try {
      d.proxy.reset();
      const { status } = await d.get(gateSeesClosed, quotePath(q));
      expect(status).toBe(200);
      expect(d.proxy.count()).toBe(2); // the quote and the new lock's count only: no preflight read
    } finally {
      await d.setStatusBitmask(0x7fen);
    }
  });
});
