/**
 * What a tool call's arguments mean, through the MCP endpoint over real HTTP in both eras (a raw 2025-era POST, and the
 * 2026-07-28 envelope), against the seeded devnet: an AI assistant hands the batch to a wallet's send_calls, so an
 * argument that silently took another meaning (null as "not given": a new lock for an unresolved top-up target, no
 * simulation gate for requireSimulationOk) would lose the user's money.
 */
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";

const MODERN = "2026-07-28";
const PV = "io.modelcontextprotocol/protocolVersion";
const CAPS = "io.modelcontextprotocol/clientCapabilities";
const ERAS = ["2025", "2026"] as const;
type Era = (typeof ERAS)[number];

const E18 = 10n ** 18n;
const capped = DEVNET_ACCOUNTS.capped.address;
const alice = DEVNET_ACCOUNTS.alice.address;

let d: ReadsDevnet;
let base: string;
let server: Server;

beforeAll(async () => {
  d = await startReadsDevnet();
  const app = d.app();
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
      base = `http://127.0.0.1:${info.port}`;
      resolve();
    }) as Server;
  });
}, 180_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done));
  await d?.stop();
});

type Envelope = { ok: boolean; error?: string; message?: string; detail?: { param?: string }; [k: string]: unknown };

/** One tools/call POSTed raw in an era; the tool's envelope (or the JSON-RPC error). */
export async function callIn(era: Era, name: string, args: Record<string, unknown>) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const params: Record<string, unknown> = { name, arguments: args };
  if (era === "2026") {
    Object.assign(headers, { "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name });
    params._meta = { [PV]: MODERN, [CAPS]: {} };
  }
  const res = await fetch(`${base}/api/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params }),
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
    // the safety gate: null would hand out the 33rd lock's batch, which reverts, without the simulation asked for
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
    ["prepare_lock", { user: alice, amountWei: String(2000n * E18), durationSecs: "31536000", autoMax: null }, "autoMax"],
    ["quote_lock_via_furnace", { user: alice, claimAmountWei: String(2000n * E18), targetTokenId: null }, "targetTokenId"],
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
    const gated = await callIn("2026", "prepare_lock_via_furnace", { ...lockViaFurnace, requireSimulationOk: "true" });
    expect(gated.body).toMatchObject({ ok: false, error: "SIMULATION_REVERTED" });
  });
});
