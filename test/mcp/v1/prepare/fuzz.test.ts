import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { createApp } from "../../../../api/app";
import { ERROR_STATUS } from "../../../../api/http/errors";
import { ACTIONS } from "../../../../api/mcp/v1/prepare";
import { DEVNET_ACCOUNTS } from "../../../../devnet/seed";
import { CLAIM_WORD } from "../../../support/narration";
import { type ReadsDevnet, startReadsDevnet } from "../../../support/readsDevnet";

// Bad input never breaks a prepare route (issue 6 §6): thousands of generated query strings per route —
// random and known keys, unicode, huge and signed numbers, repeated keys, valid and broken %-encodings —
// get only a success envelope (when they happen to be valid) or a documented error envelope whose code
// matches its status. Never a 500, never a hang: each request has a deadline and the whole run a budget.

const PER_ROUTE = 2_000;
const REQUEST_DEADLINE_MS = 5_000;
/**
 * What a prepare route may answer on a healthy, finalized devnet (SIMULATION_REVERTED: a generated query that
 * happens to be valid and sets requireSimulationOk=true for a batch that reverts).
 */
const ALLOWED = new Set(["BAD_PARAMS", "QUOTE_FAILED", "STATE_READ_FAILED", "SIMULATION_REVERTED"]);

let d: ReadsDevnet;
let app: ReturnType<typeof createApp>;
beforeAll(async () => {
  d = await startReadsDevnet();
  // The per-IP budget is the rate limiter's concern (429 is documented): lift it so every request reaches the route.
  app = d.app({ config: { ...d.config, rateLimit: { max: 1_000_000, windowSec: 60 } } });
});
afterAll(async () => {
  await d?.stop();
});

const knownKeys = [...new Set(ACTIONS.flatMap((a) => Object.keys(a.params)))];
const user = DEVNET_ACCOUNTS.fresh.address;

/** A query component, raw (as it goes on the wire): some percent-encoded, some deliberately malformed. */
const rawText = fc.oneof(
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.string({ unit: "grapheme", maxLength: 8 }).map(encodeURIComponent),
  fc.string({ unit: "binary", maxLength: 8 }).map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, "?"))),
  fc.constantFrom(
    "%",
    "%Z",
    "%ZZ",
    "%E0%A4%A",
    "%00",
    "%C3%28",
    "%FF%FE",
    "%2",
    "%%",
    "+",
    "%20",
    "%2B1",
    "&",
    "=",
    "==",
  ),
  fc.stringMatching(/^[a-zA-Z0-9_.~-]{0,10}$/),
);
const numberish = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }).map(String),
  fc.bigInt({ min: 2n ** 256n, max: 2n ** 300n }).map(String), // just past uint256
  fc.bigInt({ min: -(2n ** 256n), max: -1n }).map(String),
  fc.constantFrom(
    "0",
    "00",
    "01",
    "1e18",
    "1E3",
    "0x10",
    "1.5",
    " 1",
    "1 ",
    "+1",
    "١٢٣",
    "∞",
    "NaN",
    "true",
    "TRUE",
    "",
  ),
  fc.nat({ max: 20 }).map((n) => "9".repeat(70 + n)),
  fc.constantFrom(
    user,
    user.toLowerCase(),
    `0x${user.slice(2).toUpperCase()}`,
    `${user}0`,
    user.slice(0, 41),
    "0x",
    "0xZZ",
  ),
);
const key = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...knownKeys) }, { weight: 1, arbitrary: rawText });
const value = fc.oneof(numberish.map(encodeURIComponent), numberish, rawText);
const pair = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(key, value).map(([k, v]) => `${k}=${v}`) },
  { weight: 1, arbitrary: key }, // a key without "="
  { weight: 1, arbitrary: rawText },
);
/** Pairs, sometimes with one repeated, joined by & (and the odd stray separator). */
const query = fc
  .tuple(fc.array(pair, { maxLength: 8 }), fc.boolean(), fc.constantFrom("&", "&&", ";"))
  .map(([pairs, repeat, sep]) => {
    const list = repeat && pairs.length ? [...pairs, pairs[0]!] : pairs;
    return list.join(sep === ";" ? "&" : sep);
  });

type Outcome = { status: number; body: unknown };

async function request(path: string): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${REQUEST_DEADLINE_MS} ms: ${path}`)),
      REQUEST_DEADLINE_MS,
    );
  });
  try {
    const res = await Promise.race([app.request(path), deadline]);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body };
  } finally {
    clearTimeout(timer);
  }
}

function assertDocumented(path: string, { status, body }: Outcome, codes: Map<string, number>) {
  const b = body as { ok?: unknown; error?: unknown; message?: unknown; transactions?: unknown };
  expect(status, path).not.toBe(500);
  if (status === 200) {
    expect(b.ok, path).toBe(true);
    expect(Array.isArray(b.transactions)).toBe(true);
    codes.set("200", (codes.get("200") ?? 0) + 1);
    return;
  }
  expect(b.ok, path).toBe(false);
  expect(typeof b.error, path).toBe("string");
  expect(typeof b.message, path).toBe("string");
  const code = b.error as keyof typeof ERROR_STATUS;
  expect(ERROR_STATUS[code], `${path} → ${code}`).toBe(status);
  codes.set(code, (codes.get(code) ?? 0) + 1);
}

describe("fuzzed query strings on every prepare route", () => {
  for (const a of ACTIONS) {
    it(`${a.action}: ${PER_ROUTE} bad queries → documented envelopes only`, async () => {
      const codes = new Map<string, number>();
      const t0 = Date.now();
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          const path = `/api/mcp/v1/prepare/${a.action}?${q}`;
          const outcome = await request(path);
          assertDocumented(path, outcome, codes);
          if (outcome.status !== 200) {
            const b = outcome.body as { error: string; message: string };
            expect(ALLOWED.has(b.error), `${path} → ${b.error}`).toBe(true);
            // Messages narrate without the verb (an echoed parameter name is the client's own word).
            if (!/Unknown parameter|given more than once/.test(b.message)) expect(b.message).not.toMatch(CLAIM_WORD);
          }
        }),
        { numRuns: PER_ROUTE },
      );
      // The generator must reach the parser's rejections (not trivially pass on one code path).
      expect(codes.get("BAD_PARAMS") ?? 0).toBeGreaterThan(PER_ROUTE / 2);
      expect(Date.now() - t0).toBeLessThan(30_000);
    });
  }

  it("fuzzed action names and paths → 404 NOT_FOUND (or the route's own envelope), never 500", async () => {
    const codes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(rawText, query, async (name, q) => {
        const path = `/api/mcp/v1/prepare/${name}?${q}`;
        let outcome: Outcome;
        try {
          outcome = await request(path);
        } catch (error) {
          // A path the URL parser itself refuses never reaches the app; that is not a server answer.
          if (error instanceof TypeError) return;
          throw error;
        }
        assertDocumented(path, outcome, codes);
      }),
      { numRuns: 2_000 },
    );
    expect(codes.get("NOT_FOUND") ?? 0).toBeGreaterThan(1_000);
    expect(codes.has("INTERNAL_ERROR")).toBe(false);
  });
});
