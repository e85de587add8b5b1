/**
 * What a tool call's arguments mean, through the MCP endpoint over real HTTP in both eras (a raw 2025-era POST, and the
 * 2026-07-28 envelope), against the seeded devnet: an AI assistant hands the batch to a wallet's send_calls, so an
 * argument that silently took another meaning (null as "not given": a new lock for an unresolved top-up target, no
 * simulation gate for requireSimulationOk) would lose the user's money.
 */
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createRpcClient } from "../../../../api/chain/rpc";
import { createMetrics } from "../../../../api/observability/metrics";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { MCP_ERAS, type McpEra, mcpRequestInit, toolCallInit } from "../../../support/mcpToolCall";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";

const ERAS = MCP_ERAS;
type Era = McpEra;

const E18 = 10n ** 18n;
const capped = DEVNET_ACCOUNTS.capped.address;
const alice = DEVNET_ACCOUNTS.alice.address;

let d: ReadsDevnet;
let base: string;
const servers: Server[] = [];

/** An app of the devnet served over HTTP on 127.0.0.1; its base URL. */
function listen(app: ReturnType<ReadsDevnet["app"]>): Promise<string> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
      resolve(`http://127.0.0.1:${info.port}`);
    }) as Server;
    servers.push(server);
  });
}

beforeAll(async () => {
  d = await startReadsDevnet();
  base = await listen(d.app());
}, 180_000);
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
  await d?.stop();
});

type Envelope = { ok: boolean; error?: string; message?: string; detail?: { param?: string }; [k: string]: unknown };

/** One tools/call POSTed raw in an era; the tool's envelope (or the JSON-RPC error). */
async function callIn(era: Era, name: string, args: Record<string, unknown>, at = base) {
  const res = await fetch(`${at}/api/mcp`, {
    ...toolCallInit(era, name, args, 3),
    signal: AbortSignal.timeout(30_000),
  });
  const answer = (await res.json()) as {
    result?: { isError?: boolean; content: { text: string }[] };
    error?: { code: number; message: string };
  };
  if (!answer.result) return { status: res.status, error: answer.error!, isError: true, body: undefined };
  const body = JSON.parse(answer.result.content[0]!.text) as Envelope;
  return { status: res.status, error: undefined, isError: answer.result.isError === true, body };
}

const lockViaFurnace = { user: capped, claimAmountWei: String(2000n * E18), durationSeconds: "604800" };

describe("null is no argument's default (docs/api.md: other types are BAD_PARAMS)", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    // the safety gate: null would hand out a batch without the simulation asked for
    ["prepare_lock_via_furnace", { ...lockViaFurnace, requireSimulationOk: null }, "requireSimulationOk"],
    // an unresolved top-up target: null would be a new 7-day lock (enterWithClaim(…, 0, …))
    [
      "prepare_lock_via_furnace",
      { ...lockViaFurnace, user: alice, targetTokenId: null, simulate: "false" },
      "targetTokenId",
    ],
    ["prepare_lock_via_furnace", { ...lockViaFurnace, user: alice, slippageBps: null }, "slippageBps"],
    ["prepare_lock_via_furnace", { ...lockViaFurnace, simulate: null }, "simulate"],
    ["prepare_lock_via_furnace", { ...lockViaFurnace, user: null }, "user"],
    // a lock would become an ETH payout, a compound a plain harvest, an AutoMax lock a plain one
    ["prepare_collect_all", { user: alice, mode: null }, "mode"],
    ["prepare_harvest_rewards", { user: alice, compound: null }, "compound"],
    [
      "prepare_lock",
      { user: alice, amountWei: String(2000n * E18), durationSecs: "31536000", autoMax: null },
      "autoMax",
    ],
    [
      "quote_lock_via_furnace",
      { user: alice, claimAmountWei: String(2000n * E18), targetTokenId: null },
      "targetTokenId",
    ],
    // reads too: one rule for every argument
    ["get_state", { address: alice, minBlock: null }, "minBlock"],
  ];
  for (const era of ERAS) {
    it.each(cases)(`${era}: %s with a null argument is BAD_PARAMS naming it (%#)`, async (name, args, param) => {
      const r = await callIn(era, name, args);
      expect(r.status).toBe(200);
      expect(r.isError).toBe(true);
      expect(r.body).toMatchObject({ ok: false, error: "BAD_PARAMS", detail: { param } });
      expect(r.body!.message).toContain("null");
    });
  }

  it("the same call without the argument takes its default (the gate answers, a batch is handed out)", async () => {
    const { requireSimulationOk: _, ...rest } = { ...lockViaFurnace, requireSimulationOk: null };
    const r = await callIn("2025", "prepare_lock_via_furnace", { ...rest, user: alice });
    expect(r.body).toMatchObject({ ok: true });
    // The 33rd lock is refused before any batch (LOCK_LIMIT_REACHED, lockLimit.test.ts), with or without the gate;
    // the gate's own refusal is of a batch that reaches the simulation and reverts there (Furnace-only createLockFor).
    const capped = await callIn("2026", "prepare_lock_via_furnace", { ...lockViaFurnace, requireSimulationOk: "true" });
    expect(capped.body).toMatchObject({ ok: false, error: "LOCK_LIMIT_REACHED" });
    const lock = { user: alice, amountWei: String(2000n * E18), durationSecs: "604800" };
    const gated = await callIn("2026", "prepare_lock", { ...lock, requireSimulationOk: "true" });
    expect(gated.body).toMatchObject({ ok: false, error: "SIMULATION_REVERTED" });
  });
});

describe("a node's 'method not found' for eth_simulateV1 is believed a minute, then asked again", () => {
  afterEach(() => {
    vi.useRealTimers();
    d.proxy.setFault(null);
  });

  it("the gate refuses saying when to retry, the gauge says 0; after 60 s a probe finds the method and the gate passes", async () => {
    const metrics = createMetrics();
    const rpc = createRpcClient({ url: d.proxy.url, timeoutMs: 5_000 });
    const at = await listen(d.app({ rpc, metrics }));
    const gauge = async () => (await metrics.render()).match(/^api_simulation_supported (\d)$/m)?.[1];
    const gated = { ...lockViaFurnace, user: DEVNET_ACCOUNTS.fresh.address, requireSimulationOk: "true" };
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    expect(await gauge()).toBeUndefined();
    // One answer "method not found" (a provider's plan limit, one node of a fleet), then the node answers normally.
    let answered = 0;
    d.proxy.setFault({
      kind: "rpcError",
      code: -32601,
      message: "rate limited, try later",
      match: (method) => method === "eth_simulateV1" && answered++ === 0,
    });
    const refused = await callIn("2025", "prepare_lock_via_furnace", gated, at);
    expect(refused.body).toMatchObject({ error: "SIMULATION_UNAVAILABLE", detail: { skipped: "unsupported" } });
    expect(refused.body!.message).toMatch(/kept for 60 s/);
    expect(await gauge()).toBe("0");
    // Within the minute: the same answer, without asking the node.
    d.proxy.reset();
    vi.setSystemTime(Date.now() + 59_000);
    const again = await callIn("2026", "prepare_lock_via_furnace", gated, at);
    expect(again.body).toMatchObject({ error: "SIMULATION_UNAVAILABLE", detail: { skipped: "unsupported" } });
    expect(d.proxy.count("eth_simulateV1")).toBe(0);
    // A minute on: the node is asked again, simulates, and the gate hands out the batch.
    vi.setSystemTime(Date.now() + 2_000);
    for (const era of ERAS) {
      const passed = await callIn(era, "prepare_lock_via_furnace", gated, at);
      expect(passed.body).toMatchObject({ ok: true, simulation: { ok: true } });
    }
    expect(d.proxy.count("eth_simulateV1")).toBe(2);
    expect(await gauge()).toBe("1");
  });
});

/** One raw JSON-RPC request of an era (no tool call): its result. */
async function requestIn(era: Era, method: string, params: Record<string, unknown>, name?: string) {
  const res = await fetch(`${base}/api/mcp`, mcpRequestInit(era, method, params, 4, name));
  return ((await res.json()) as { result: Record<string, unknown> }).result;
}

describe("lock, topup and extend say they are Furnace-only (docs/limitations.md)", () => {
  const furnaceOnly = /only the Furnace may call/;
  const tokenId = () => String(d.seed.tokenIds.alicePlain);
  const furnaceOnlyCalls = (): [string, Record<string, unknown>][] => [
    ["prepare_lock", { user: alice, amountWei: String(2000n * E18), durationSecs: "604800" }],
    ["prepare_topup", { user: alice, tokenId: tokenId(), amountWei: String(10n * E18) }],
    ["prepare_extend", { user: alice, tokenId: tokenId(), newEnd: "9999999999" }],
  ];

  it("in tools/list (both eras), the guide resource and the OpenAPI document", async () => {
    for (const era of ERAS) {
      const { tools } = (await requestIn(era, "tools/list", {})) as { tools: { name: string; description: string }[] };
      for (const name of ["prepare_lock", "prepare_topup", "prepare_extend"]) {
        expect(tools.find((t) => t.name === name)!.description, `${era} ${name}`).toMatch(furnaceOnly);
      }
      expect(tools.find((t) => t.name === "prepare_lock_via_furnace")!.description).not.toMatch(furnaceOnly);
      const read = (await requestIn(era, "resources/read", { uri: "asset://guide" }, "asset://guide")) as {
        contents: { text: string }[];
      };
      const guide = JSON.parse(read.contents[0]!.text) as { tools: { name: string; description: string }[] };
      for (const name of ["prepare_lock", "prepare_topup", "prepare_extend"]) {
        expect(guide.tools.find((t) => t.name === name)!.description, `${era} guide ${name}`).toMatch(furnaceOnly);
      }
    }
    const openapi = (await (await fetch(`${base}/api/mcp/v1/openapi.json`)).json()) as {
      paths: Record<string, { get: { description: string } }>;
    };
    for (const action of ["lock", "topup", "extend"]) {
      expect(openapi.paths[`/api/mcp/v1/prepare/${action}`]!.get.description).toMatch(furnaceOnly);
    }
  });

  for (const era of ERAS) {
    it(`${era}: every answer whose simulation did not run or did not pass carries the warning`, async () => {
      for (const [name, args] of furnaceOnlyCalls()) {
        for (const simulate of ["false", "true"]) {
          const r = await callIn(era, name, { ...args, simulate });
          expect(r.body, `${name} simulate=${simulate}`).toMatchObject({ ok: true });
          // On the devnet, as on the published contracts, the wallet's call reverts: simulated, it did not pass.
          expect(r.body!.simulation).toMatchObject(
            simulate === "false" ? { ok: null, skipped: "disabled" } : { ok: false },
          );
          const warning = r.body!.warning as { message: string; action?: string; path?: string };
          expect(warning.message, name).toMatch(/only the Furnace may call this function.*reverts NotAuthorized/);
          if (name === "prepare_extend") expect(warning.message).toMatch(/extendWithBonus/);
          else
            expect(warning).toMatchObject({
              action: "lock-via-furnace",
              path: expect.stringContaining("/prepare/lock-via-furnace?"),
            });
        }
      }
      // A Furnace entry is a wallet's own action: no warning.
      const entry = await callIn(era, "prepare_lock_via_furnace", {
        ...lockViaFurnace,
        user: alice,
        simulate: "false",
      });
      expect(entry.body).toMatchObject({ ok: true });
      expect(entry.body).not.toHaveProperty("warning");
    });
  }
});

describe("quote_lock_via_furnace keeps the reference's defaults; the prompt asks for a new lock's duration", () => {
  const entry = { user: DEVNET_ACCOUNTS.fresh.address, claimAmountWei: String(2000n * E18), slippageBps: "50" };
  const DAY = 86_400n;
  it("a quote without durationSeconds answers (protocol.md §5: default 0, the quoter clamps); the prompt asks first", async () => {
    for (const era of ERAS) {
      const quote = await callIn(era, "quote_lock_via_furnace", entry);
      expect(quote.body, era).toMatchObject({ ok: true });
      const terms = { ...entry, durationSeconds: String(7n * DAY) };
      const prepare = await callIn(era, "prepare_lock_via_furnace", { ...terms, simulate: "false" });
      expect(prepare.body).toMatchObject({ ok: true });
      const prompt = (await requestIn(
        era,
        "prompts/get",
        { name: "lock_via_furnace", arguments: { address: entry.user, amountWei: entry.claimAmountWei } },
        "lock_via_furnace",
      )) as { messages: { content: { text: string } }[] };
      const text = prompt.messages[0]!.content.text;
      expect(text, era).toMatch(/ask the user how long to lock/);
      expect(text).toContain("durationSeconds=<the duration the user chose>");
    }
  });
});

describe("an amount no wallet holds is BAD_PARAMS before any RPC (it overflowed the quoter: 502 Panic 17)", () => {
  const huge = [String(2n ** 256n - 1n), `1${"0".repeat(73)}`, String(2n ** 128n)];
  for (const era of ERAS) {
    it(`${era}: quote (tokens or ETH) and prepare_lock_via_furnace`, async () => {
      const terms = { user: alice, durationSeconds: "604800" };
      // The genesis gate reads the preflight once (spec §4.3 step 1), then keeps it: read it before counting.
      await callIn(era, "prepare_lock_via_furnace", { ...terms, claimAmountWei: huge[0] });
      for (const amount of huge) {
        d.proxy.reset();
        const calls: [string, Record<string, unknown>, string][] = [
          ["quote_lock_via_furnace", { ...terms, claimAmountWei: amount }, "claimAmountWei"],
          ["quote_lock_via_furnace", { ...terms, ethAmountWei: amount }, "ethAmountWei"],
          ["prepare_lock_via_furnace", { ...terms, claimAmountWei: amount }, "claimAmountWei"],
        ];
        for (const [name, args, param] of calls) {
          const r = await callIn(era, name, args);
          expect(r.body, `${name} ${amount}`).toMatchObject({ ok: false, error: "BAD_PARAMS", detail: { param } });
        }
        expect(d.proxy.count()).toBe(0);
      }
    });

    // The actions that approve: an amount no wallet holds would be an effectively unlimited approve step, left
    // standing when a wallet sends the calls one by one and the main call reverts (review rvmcp F1).
    it(`${era}: prepare_lock, prepare_topup and prepare_stake_lp (no unlimited approve step)`, async () => {
      for (const amount of huge) {
        d.proxy.reset();
        const calls: [string, Record<string, unknown>][] = [
          ["prepare_lock", { user: alice, amountWei: amount, durationSecs: "604800", simulate: "false" }],
          ["prepare_topup", { user: alice, tokenId: "1", amountWei: amount, simulate: "false" }],
          ["prepare_stake_lp", { user: alice, amountWei: amount, simulate: "false" }],
        ];
        for (const [name, args] of calls) {
          const r = await callIn(era, name, args);
          expect(r.body, `${name} ${amount}`).toMatchObject({
            ok: false,
            error: "BAD_PARAMS",
            detail: { param: "amountWei", max: String(2n ** 128n - 1n) },
          });
        }
        expect(d.proxy.count()).toBe(0);
      }
      // The largest amount still prepares (an approve step of it first, as the allowance is short).
      const r = await callIn(era, "prepare_stake_lp", {
        user: alice,
        amountWei: String(2n ** 128n - 1n),
        simulate: "false",
      });
      expect(r.body, JSON.stringify(r.body)).toMatchObject({ ok: true });
    });
  }
});

describe("the zero address is no signing wallet (prepares and the quote); reads may name it", () => {
  const zero = `0x${"0".repeat(40)}`;
  for (const era of ERAS) {
    it(`${era}: BAD_PARAMS naming user`, async () => {
      const calls: [string, Record<string, unknown>][] = [
        ["prepare_lock_via_furnace", { ...lockViaFurnace, user: zero, simulate: "false" }],
        ["quote_lock_via_furnace", { ...lockViaFurnace, user: zero }],
        ["prepare_lock", { user: zero, amountWei: String(2000n * E18), durationSecs: "604800", simulate: "false" }],
        ["prepare_collect_all", { user: zero }],
        ["prepare_stake_lp", { user: zero, amountWei: String(E18) }],
      ];
      for (const [name, args] of calls) {
        const r = await callIn(era, name, args);
        expect(r.body, name).toMatchObject({ ok: false, error: "BAD_PARAMS", detail: { param: "user" } });
      }
      const state = await callIn(era, "get_state", { address: zero });
      expect(state.body).toMatchObject({ ok: true });
    });
  }
});

describe("a tools/call with a 2025-11-25 task is processed normally (no tasks capability is declared)", () => {
  for (const era of ERAS) {
    it(`${era}: the tool's answer, as without the task`, async () => {
      const res = await fetch(`${base}/api/mcp`, toolCallInit(era, "get_preflight", {}, 8, { task: { ttl: 1000 } }));
      const answer = (await res.json()) as { result?: { content: { text: string }[] }; error?: unknown };
      expect(answer.error, era).toBeUndefined();
      expect(JSON.parse(answer.result!.content[0]!.text)).toMatchObject({ ok: true, finalized: true });
    });
  }
});
