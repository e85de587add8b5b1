import { encodeErrorResult, type Hex, toFunctionSelector } from "viem";
import { describe, expect, it } from "vitest";
import { decodeWith, type RpcClient, type RpcRequest } from "../../../../api/chain/rpc";
import { loadConfig } from "../../../../api/config";
import { SimulationRevertedError } from "../../../../api/http/errors";
import { extend, lock, topup } from "../../../../api/mcp/v1/prepare/lock";
import { stakeLp } from "../../../../api/mcp/v1/prepare/lp";
import type { PrepareAction } from "../../../../api/mcp/v1/prepare/pipeline";
import { gasWithHeadroom } from "../../../../api/mcp/v1/prepare/simulation";

// The mapping from a node's eth_simulateV1 answer to `simulation` and `gas`, for answers the devnet cannot
// produce before its lock functions are restricted to the Furnace: NotAuthorized on lock/topup/extend and
// its hint. The answer below is the shape anvil and geth send (test/mcp/v1/prepare/simulation.test.ts runs the
// real node). The devnet path is exercised by test/mcp/v1/prepare/simulationTruth.test.ts.

const NOT_AUTHORIZED = toFunctionSelector("error NotAuthorized()") as Hex;
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** A node whose simulation lets approves pass and reverts every other call with `revert`. */
function node(revert: Hex, seen: RpcRequest[] = []): RpcClient {
  const answer = (req: RpcRequest): unknown => {
    seen.push(req);
    if (req.method === "eth_call") return `0x${"0".repeat(64)}`; // allowance 0: the approve step comes first
    const calls = (req.params[0] as { blockStateCalls: { calls: { data: Hex }[] }[] }).blockStateCalls[0]!.calls;
    return [
      {
        number: "0x10",
        calls: calls.map((c) =>
          c.data.startsWith("0x095ea7b3")
            ? { status: "0x1", gasUsed: "0xb4a0", returnData: `0x${"0".repeat(63)}1`, logs: [] }
            : { status: "0x0", gasUsed: "0x7530", returnData: revert, logs: [], error: { code: -32000 } },
        ),
      },
    ];
  };
  return {
    redactedUrl: "test:",
    request: async (r, o) => decodeWith(answer(r), o?.decode),
    batch: async (rs, o) => rs.map((r, i) => decodeWith(answer(r), o?.decode?.[i])),
  };
}

const config = loadConfig({ NETWORK: "base" });
const run = (action: PrepareAction, query: string, rpc: RpcClient) =>
  action.run(
    { gate: { assertFinalized: async () => {} }, rpc, config },
    `http://x/api/mcp/v1/prepare/${action.action}?${query}`,
  );

describe("simulation answers → simulation and gas", () => {
  it("NotAuthorized on lock: decoded, and the hint is the lock-via-furnace call with the same terms", async () => {
    const seen: RpcRequest[] = [];
    const env = await run(
      lock,
      `user=${WALLET}&amountWei=2000000000000000000000&durationSecs=31536000&autoMax=true`,
      node(NOT_AUTHORIZED, seen),
    );
    const sim = env.simulation as Extract<typeof env.simulation, { steps: unknown }>;
    expect(sim.ok).toBe(false);
    expect(sim.blockNumber).toBe("16");
    expect(sim.steps).toEqual([
      { step: "approve", ok: true, gasUsed: "46240" },
      {
        step: "lock",
        ok: false,
        gasUsed: "30000",
        error: { name: "NotAuthorized", args: [], selector: NOT_AUTHORIZED },
      },
    ]);
    expect(sim.hint).toEqual({
      message: expect.stringMatching(/Furnace/),
      action: "lock-via-furnace",
      params: {
        user: WALLET,
        claimAmountWei: "2000000000000000000000",
        targetTokenId: "0",
        durationSeconds: "31536000",
        createAutoMax: "true",
      },
      path: `/api/mcp/v1/prepare/lock-via-furnace?user=${WALLET}&claimAmountWei=2000000000000000000000&targetTokenId=0&durationSeconds=31536000&createAutoMax=true`,
    });
    expect(env.transactions.map((t) => t.gas)).toEqual([
      `0x${gasWithHeadroom(46_240n).toString(16)}`,
      `0x${gasWithHeadroom(30_000n).toString(16)}`,
    ]);
    // Simulated as the wallet, at the latest block, in one request.
    const sim1 = seen.filter((r) => r.method === "eth_simulateV1");
    expect(sim1).toHaveLength(1);
    expect(sim1[0]!.params[1]).toBe("latest");
    const payload = sim1[0]!.params[0] as { blockStateCalls: { calls: { from: string }[] }[]; validation: boolean };
    expect(payload.validation).toBe(false);
    for (const c of payload.blockStateCalls[0]!.calls) expect(c.from).toBe(WALLET);
  });

  it("NotAuthorized on topup: hint tops the same lock up via the Furnace; on extend: names the wallet's extensions", async () => {
    const t = await run(topup, `user=${WALLET}&tokenId=7&amountWei=5000000000000000000`, node(NOT_AUTHORIZED));
    const th = (t.simulation as { hint?: { action?: string; params?: Record<string, string> } }).hint;
    expect(th).toMatchObject({
      action: "lock-via-furnace",
      params: { user: WALLET, claimAmountWei: "5000000000000000000", targetTokenId: "7" },
    });
    const e = await run(extend, `user=${WALLET}&tokenId=7&newEnd=1900000000`, node(NOT_AUTHORIZED));
    const eh = (e.simulation as { hint?: { action?: string; message: string } }).hint;
    expect(eh?.action).toBeUndefined();
    // On Base a wallet extends a plain lock with Furnace.extendWithBonus or setAutoMax(id, true): never "impossible".
    expect(eh?.message).toContain("Furnace.extendWithBonus(7, durationSeconds, minBonusOut)");
    expect(eh?.message).toContain("VeLockNFT.setAutoMax(7, true)");
    expect(eh?.message).not.toMatch(/no wallet call/);
  });

  it("stake-lp on Base: the LP token (Aerodrome pool, OpenZeppelin 4.x) reverts reason strings; both carry a hint", async () => {
    const reason = (text: string) =>
      encodeErrorResult({
        abi: [{ type: "error", name: "Error", inputs: [{ type: "string", name: "message" }] }],
        errorName: "Error",
        args: [text],
      });
    const stake = async (text: string) => {
      const env = await run(stakeLp, `user=${WALLET}&amountWei=1000000000000000000`, node(reason(text)));
      return env.simulation as { steps: { step: string; error?: unknown }[]; hint?: { message: string } };
    };
    const balance = await stake("ERC20: transfer amount exceeds balance");
    expect(balance.steps[1]).toMatchObject({
      step: "stake",
      error: { name: "Error", args: ["ERC20: transfer amount exceeds balance"], selector: "0x08c379a0" },
    });
    expect(balance.hint).toEqual({ message: "The wallet does not hold enough of the token for this amount." });
    const allowance = await stake("ERC20: insufficient allowance");
    expect(allowance.hint?.message).toMatch(/^The wallet has not approved .* for this amount/);
    // any other reason string gets no hint
    expect((await stake("ERC20: something else")).hint).toBeUndefined();
  });

  it("the token's OpenZeppelin v5 errors (published token, every Furnace entry) carry the same hints as the protocol's names", async () => {
    const oz = [
      {
        type: "error",
        name: "ERC20InsufficientBalance",
        inputs: [
          { type: "address", name: "sender" },
          { type: "uint256", name: "balance" },
          { type: "uint256", name: "needed" },
        ],
      },
      {
        type: "error",
        name: "ERC20InsufficientAllowance",
        inputs: [
          { type: "address", name: "spender" },
          { type: "uint256", name: "allowance" },
          { type: "uint256", name: "needed" },
        ],
      },
    ] as const;
    const hintOf = async (revert: Hex) => {
      const env = await run(stakeLp, `user=${WALLET}&amountWei=1000000000000000000`, node(revert));
      return env.simulation as { steps: { error?: unknown }[]; hint?: { message: string } };
    };
    const balance = await hintOf(
      encodeErrorResult({ abi: oz, errorName: "ERC20InsufficientBalance", args: [WALLET, 0n, 10n ** 18n] }),
    );
    expect(balance.steps[1]!.error).toEqual({
      name: "ERC20InsufficientBalance",
      args: [WALLET, "0", "1000000000000000000"],
      selector: "0xe450d38c",
    });
    const protocolBalance = await hintOf(toFunctionSelector("error InsufficientTokenBalance()") as Hex);
    expect(balance.hint).toEqual(protocolBalance.hint);
    expect(balance.hint).toEqual({ message: "The wallet does not hold enough of the token for this amount." });
    const allowance = await hintOf(
      encodeErrorResult({ abi: oz, errorName: "ERC20InsufficientAllowance", args: [WALLET, 0n, 10n ** 18n] }),
    );
    const protocolAllowance = await hintOf(toFunctionSelector("error InsufficientTokenAllowance()") as Hex);
    expect(allowance.hint).toEqual(protocolAllowance.hint);
    expect(allowance.hint?.message).toMatch(/^The wallet has not approved .* for this amount/);
  });

  it("an unknown selector keeps the selector with name null; a revert without data has neither", async () => {
    const unknown = await run(extend, `user=${WALLET}&tokenId=7&newEnd=1900000000`, node("0xdeadbeef"));
    expect((unknown.simulation as { steps: unknown[] }).steps[0]).toMatchObject({
      ok: false,
      error: { name: null, args: [], selector: "0xdeadbeef" },
    });
    const bare = await run(extend, `user=${WALLET}&tokenId=7&newEnd=1900000000`, node("0x"));
    expect((bare.simulation as { steps: unknown[]; hint?: unknown }).steps[0]).toMatchObject({
      error: { name: null, selector: null },
    });
    expect((bare.simulation as { hint?: unknown }).hint).toBeUndefined();
  });
});

describe("requireSimulationOk=true: the refusal names the revert as it was decoded", () => {
  const query = `user=${WALLET}&tokenId=7&newEnd=1900000000&requireSimulationOk=true`;
  const refusal = async (revert: Hex) => {
    const error = await run(extend, query, node(revert)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SimulationRevertedError);
    return error as SimulationRevertedError;
  };

  it("a published error by name, Error(reason) with its reason, an unknown one by selector, a bare revert as such", async () => {
    const named = await refusal(NOT_AUTHORIZED);
    expect(named.status).toBe(409);
    expect(named.message).toBe(
      "Step 0 (extend) of the batch reverts in simulation: NotAuthorized. The batch was not returned " +
        "(requireSimulationOk=true).",
    );
    expect(named.detail).toMatchObject({ index: 0, step: "extend", blockNumber: "16", hint: { message: /Furnace/ } });
    const reason = encodeErrorResult({
      abi: [{ type: "error", name: "Error", inputs: [{ type: "string", name: "message" }] }],
      errorName: "Error",
      args: ["too late"],
    });
    expect((await refusal(reason)).message).toContain("reverts in simulation: Error(too late).");
    const unknown = await refusal("0xdeadbeef");
    expect(unknown.message).toContain("reverts in simulation: an unknown error (selector 0xdeadbeef).");
    expect(unknown.detail).toMatchObject({ revert: { name: null, args: [], selector: "0xdeadbeef" } });
    expect((await refusal("0x")).message).toContain("reverts in simulation: a revert without data.");
  });
});
