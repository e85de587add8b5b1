/**
 * prompts/get's arguments (api/mcp/prompts.ts, judged in api/mcp/gatekeeper.ts before either SDK), in both eras of
 * POST /api/mcp through the app: an argument the prompt does not take is -32602 naming it, whatever its name —
 * `constructor` and `__proto__` (which the SDKs' record schemas cannot pass on) exactly like `nope` — and the two eras
 * answer alike. No index is read: a prompt is free of I/O.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";

const app = createApp({
  config: { ...loadConfig({ NETWORK: "base" }), rateLimit: { max: 1e6, windowSec: 60 } },
  rpc: null,
  logger: silentLogger,
});
const MODERN = "2026-07-28";
const ENVELOPE = `"_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN}","io.modelcontextprotocol/clientCapabilities":{}}`;
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const ADDRESS = '"0x1111111111111111111111111111111111111111"';

/** One prompts/get with `argsText` sent as written (JSON.parse makes an own `__proto__` of it, as off the wire). */
async function getPrompt(era: "2025" | "2026", name: string, argsText: string) {
  const meta = era === "2026" ? `,${ENVELOPE}` : "";
  const body = `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":${JSON.stringify(name)},"arguments":${argsText}${meta}}}`;
  const modern = { "mcp-protocol-version": MODERN, "mcp-method": "prompts/get", "mcp-name": name };
  const res = await app.request("/api/mcp", {
    method: "POST",
    headers: era === "2026" ? { ...HEADERS, ...modern } : HEADERS,
    body,
  });
  return {
    status: res.status,
    json: (await res.json()) as { id: number; result?: unknown; error?: { code: number; message: string } },
  };
}

describe("prompts/get: an argument the prompt does not take", () => {
  it("is -32602 naming it, whatever its name (constructor and __proto__ as any other), alike in both eras", async () => {
    for (const era of ["2025", "2026"] as const) {
      for (const name of ["nope", "toString", "slippagebps", "constructor", "__proto__"]) {
        const { status, json } = await getPrompt(
          era,
          "lock_via_furnace",
          `{"address":${ADDRESS},"amountWei":"1",${JSON.stringify(name)}:"1"}`,
        );
        expect([status, json.id, json.error], `${era} ${name}`).toEqual([
          200,
          7,
          { code: -32602, message: `Invalid params: prompt lock_via_furnace takes no argument ${name}.` },
        ]);
      }
    }
  });

  it("an unknown prompt is -32602 whatever its arguments, alike in both eras; the prompt's own arguments are answered", async () => {
    for (const era of ["2025", "2026"] as const) {
      for (const args of [`{"address":${ADDRESS}}`, `{"constructor":"1"}`, `{"__proto__":"1"}`]) {
        const { json } = await getPrompt(era, "nope_prompt", args);
        expect(json.error, `${era} ${args}`).toEqual({
          code: -32602,
          message: "Invalid params: unknown prompt nope_prompt.",
        });
      }
      const ok = await getPrompt(era, "lock_via_furnace", `{"address":${ADDRESS},"amountWei":"1","slippageBps":"100"}`);
      expect(JSON.stringify(ok.json.result), era).toContain("slippageBps=100");
      const typed = await getPrompt(era, "review_my_locks", `{"address":5}`);
      expect(typed.json.error?.message, era).toBe("Invalid params: prompt argument address must be a string.");
    }
  });
});

describe("prompts/get: each argument in the form the tool it is handed to takes", () => {
  it("a value the tool would refuse is -32602 naming the argument, alike in both eras; a good one renders", async () => {
    const zero = '"0x0000000000000000000000000000000000000000"';
    const cases: [string, string, string][] = [
      ["review_my_locks", `{"address":"0xabc"}`, "Argument address must be a 0x-prefixed 20-byte hex address."],
      ["review_my_locks", `{"address":"alice.eth"}`, "Argument address must be a 0x-prefixed 20-byte hex address."],
      ["collect_everything", `{"address":${ADDRESS},"mode":"1"}`, ""],
      [
        "review_my_locks",
        `{"address":"0xAbcdef0000000000000000000000000000000000"}`,
        "Argument address has an invalid EIP-55 checksum.",
      ],
      [
        "lock_via_furnace",
        `{"address":${zero},"amountWei":"1"}`,
        "Argument address is the zero address: give the wallet that signs.",
      ],
      [
        "lock_via_furnace",
        `{"address":${ADDRESS},"amountWei":"1e18"}`,
        "Argument amountWei must be a non-negative integer in canonical decimal form.",
      ],
      [
        "lock_via_furnace",
        `{"address":${ADDRESS},"amountWei":"0"}`,
        "Argument amountWei must be between 1 and 340282366920938463463374607431768211455.",
      ],
      [
        "lock_via_furnace",
        `{"address":${ADDRESS},"amountWei":"340282366920938463463374607431768211456"}`,
        "Argument amountWei must be between 1 and 340282366920938463463374607431768211455.",
      ],
      [
        "lock_via_furnace",
        `{"address":${ADDRESS},"amountWei":"1","durationSeconds":"86400"}`,
        "Argument durationSeconds must be between 604800 and 31536000.",
      ],
      [
        "lock_via_furnace",
        `{"address":${ADDRESS},"amountWei":"1","targetTokenId":"-1"}`,
        "Argument targetTokenId must be a non-negative integer in canonical decimal form.",
      ],
      [
        "lock_via_furnace",
        `{"address":${ADDRESS},"amountWei":"1","slippageBps":"10001"}`,
        "Argument slippageBps must be between 0 and 10000.",
      ],
    ];
    for (const era of ["2025", "2026"] as const) {
      for (const [name, args, message] of cases) {
        const { status, json } = await getPrompt(era, name, args);
        expect(status).toBe(200);
        if (message === "") {
          expect(json.error, `${era} ${args}`).toBeUndefined();
          continue;
        }
        expect(json.error, `${era} ${name} ${args}`).toEqual({ code: -32602, message: `Invalid params: ${message}` });
      }
      const ok = await getPrompt(
        era,
        "lock_via_furnace",
        `{"address":${ADDRESS},"amountWei":"340282366920938463463374607431768211455","durationSeconds":"604800","targetTokenId":"0","slippageBps":"0"}`,
      );
      const text = JSON.stringify(ok.json.result);
      expect(text, era).toContain("claimAmountWei=340282366920938463463374607431768211455");
      expect(text, era).toContain("durationSeconds=604800");
      expect(text, era).toContain("slippageBps=0");
    }
  });
});
