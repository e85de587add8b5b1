import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

// Strict parsing tables for every parameter of the three read routes (`BAD_PARAMS` in
// docs/api.md#errors-rate-limits-deadlines): a rejected form is 400 BAD_PARAMS naming the parameter, with no RPC
// touched; an accepted form reaches the chain (its answer may still be a quoter revert, never a 400).

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

const user = DEVNET_ACCOUNTS.fresh.address; // EIP-55 form
const body40 = user.slice(2);
const flipCase = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
const firstLetter = body40.search(/[a-fA-F]/);
const badChecksum = `0x${body40.slice(0, firstLetter)}${flipCase(body40[firstLetter]!)}${body40.slice(firstLetter + 1)}`;
const MAX = (2n ** 256n - 1n).toString();

/** Raw (already URL-encoded) address forms. */
const ADDRESS_ACCEPTED: [string, string][] = [
  ["EIP-55", user],
  ["lower-case", user.toLowerCase()],
  ["upper-case body", `0x${body40.toUpperCase()}`],
];
const ADDRESS_REJECTED: [string, string][] = [
  ["bad checksum", badChecksum],
  ["no 0x", body40],
  ["0X prefix", `0X${body40}`],
  ["39 hex digits", `0x${body40.slice(1)}`],
  ["41 hex digits", `0x${body40}0`],
  ["non-hex digit", `0x${body40.slice(1)}g`],
  ["leading space", `%20${user}`],
  ["trailing space", `${user}%20`],
  ["trailing newline", `${user}%0A`],
  ["bare 0x", "0x"],
  ["an ENS name", "vitalik.eth"],
  ["zero-padded to 32 bytes", `0x${"0".repeat(24)}${body40}`],
];

/** Raw uint256 forms rejected for every uint256 parameter. */
const UINT_REJECTED: [string, string][] = [
  ["empty", ""],
  ["leading zero", "01"],
  ["double zero", "00"],
  ["minus sign", "-1"],
  ["negative zero", "-0"],
  ["plus sign", "%2B1"],
  ["plus as space", "+1"],
  ["exponent", "1e3"],
  ["upper exponent", "1E3"],
  ["decimal point", "1.0"],
  ["trailing dot", "1."],
  ["hex", "0x10"],
  ["leading space", "%201"],
  ["trailing space", "1%20"],
  ["tab", "1%09"],
  ["underscore", "1_000"],
  ["comma", "1,000"],
  ["full-width digit", "%EF%BC%91"],
  ["Arabic-Indic digit", "%D9%A3"],
  ["Infinity", "Infinity"],
  ["NaN", "NaN"],
  ["2^256", (2n ** 256n).toString()],
  ["79 digits", "1".repeat(79)],
  ["2^256 with a leading zero", `0${MAX}`],
];

const BOOL_REJECTED: [string, string][] = [
  ["empty", ""],
  ["True", "True"],
  ["TRUE", "TRUE"],
  ["1", "1"],
  ["0", "0"],
  ["yes", "yes"],
  ["leading space", "%20true"],
  ["trailing space", "false%20"],
  ["quoted", "%22true%22"],
];

const QUOTE = "/api/mcp/v1/quote/lock-via-furnace";
const BASE: Record<string, string> = { user, claimAmountWei: "2000000000000000000000", durationSeconds: "2592000" };
const quoteWith = (over: Record<string, string | undefined>) => {
  const q = { ...BASE, ...over };
  return `${QUOTE}?${Object.entries(q)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`)
    .join("&")}`;
};

async function expectRejected(path: string, param: string) {
  d.proxy.reset();
  const { status, body } = await d.get(d.app(), path);
  expect(status, path).toBe(400);
  expect(body, path).toMatchObject({ ok: false, error: "BAD_PARAMS", detail: { param } });
  expect(typeof body.message).toBe("string");
  expect(d.proxy.count(), `${path} touched the RPC`).toBe(0);
}

async function expectAccepted(path: string) {
  d.proxy.reset();
  const { status, body } = await d.get(d.app(), path);
  expect(status, `${path} → ${JSON.stringify(body)}`).not.toBe(400);
  expect([200, 502]).toContain(status);
  // Accepted: the request reached the node (a new lock's quote reads the lock count beside the quote, MCP F7, and a
  // quoter revert has each read of the batch asked again alone).
  expect(d.proxy.count(), path).toBeGreaterThanOrEqual(1);
  return { status, body };
}

describe("state :address", () => {
  it.each(ADDRESS_ACCEPTED)("accepts %s", async (_l, raw) => {
    const { status } = await expectAccepted(`/api/mcp/v1/state/${raw}`);
    expect(status).toBe(200);
  });
  it.each(ADDRESS_REJECTED)("rejects %s", async (_l, raw) => {
    await expectRejected(`/api/mcp/v1/state/${raw}`, "address");
  });
  it("an empty address segment is not a state route (404)", async () => {
    const { status, body } = await d.get(d.app(), "/api/mcp/v1/state/");
    expect(status).toBe(404);
    expect(body.error).toBe("NOT_FOUND");
    expect(d.proxy.count()).toBe(0);
  });
  it.each([
    ["an unknown parameter", "?foo=1", "foo"],
    ["a repeated unknown parameter", "?a=1&a=1", "a"],
  ])("rejects %s", async (_l, qs, param) => {
    await expectRejected(`/api/mcp/v1/state/${user}${qs}`, param);
  });
});

describe("preflight", () => {
  it("accepts no parameters", async () => {
    const { status } = await d.get(d.app(), "/api/mcp/v1/preflight");
    expect(status).toBe(200);
  });
  it.each([
    ["?x=1", "x"],
    ["?finalized=true", "finalized"],
    ["?=1", ""],
  ])("rejects %s", async (qs, param) => {
    await expectRejected(`/api/mcp/v1/preflight${qs}`, param);
  });
});

describe("quote parameters", () => {
  it("the baseline request is a 200", async () => {
    const { status } = await expectAccepted(quoteWith({}));
    expect(status).toBe(200);
  });

  describe("user", () => {
    it.each(ADDRESS_ACCEPTED)("accepts %s", async (_l, raw) => {
      expect((await expectAccepted(quoteWith({ user: raw }))).status).toBe(200);
    });
    it.each(ADDRESS_REJECTED)("rejects %s", async (_l, raw) => {
      await expectRejected(quoteWith({ user: raw }), "user");
    });
    it("is required", async () => {
      await expectRejected(quoteWith({ user: undefined }), "user");
    });
  });

  describe("claimAmountWei", () => {
    it.each([
      ["0", "0"],
      ["1000e18 written out", "1000000000000000000000"],
      ["2^128 - 1", String(2n ** 128n - 1n)],
    ])("accepts %s", async (_l, raw) => {
      await expectAccepted(quoteWith({ claimAmountWei: raw }));
    });
    // Above 2^128 − 1 no wallet holds it (2^256 − 1 overflowed the quoter: 502 Panic 17).
    it.each([...UINT_REJECTED, ["2^128", String(2n ** 128n)], ["2^256 - 1", MAX]])("rejects %s", async (_l, raw) => {
      await expectRejected(quoteWith({ claimAmountWei: raw }), "claimAmountWei");
    });
    it("is required", async () => {
      await expectRejected(quoteWith({ claimAmountWei: undefined }), "claimAmountWei");
    });
  });

  describe.each([
    ["targetTokenId", ["0", "1", MAX]],
    ["durationSeconds", ["0", "604800", "31536000", MAX]],
  ])("%s", (param, accepted) => {
    it.each(accepted)("accepts %s", async (raw) => {
      await expectAccepted(quoteWith({ [param]: raw }));
    });
    it.each(UINT_REJECTED)("rejects %s", async (_l, raw) => {
      await expectRejected(quoteWith({ [param]: raw }), param);
    });
    it("is optional", async () => {
      await expectAccepted(quoteWith({ [param]: undefined }));
    });
  });

  describe("slippageBps", () => {
    it.each([
      ["0", "0"],
      ["50", "50"],
      ["10000", "10000"],
    ])("accepts %s and echoes it", async (_l, raw) => {
      const { body } = await expectAccepted(quoteWith({ slippageBps: raw }));
      expect(body.slippageBps).toBe(Number(raw));
    });
    it.each([...UINT_REJECTED, ["10001", "10001"], ["2^256 - 1", MAX]])("rejects %s", async (_l, raw) => {
      await expectRejected(quoteWith({ slippageBps: raw }), "slippageBps");
    });
    it("defaults to 50", async () => {
      expect((await expectAccepted(quoteWith({}))).body.slippageBps).toBe(50);
    });
  });

  describe("createAutoMax", () => {
    it.each([["true"], ["false"]])("accepts %s", async (raw) => {
      await expectAccepted(quoteWith({ createAutoMax: raw }));
    });
    it.each(BOOL_REJECTED)("rejects %s", async (_l, raw) => {
      await expectRejected(quoteWith({ createAutoMax: raw }), "createAutoMax");
    });
  });

  describe("repeated and unknown parameters", () => {
    it.each(["user", "claimAmountWei", "targetTokenId", "durationSeconds", "createAutoMax", "slippageBps"])(
      "%s given twice (even with the same value)",
      async (param) => {
        const value = {
          user,
          claimAmountWei: "1",
          targetTokenId: "0",
          durationSeconds: "0",
          createAutoMax: "false",
          slippageBps: "50",
        }[param]!;
        await expectRejected(`${quoteWith({ [param]: value })}&${param}=${value}`, param);
      },
    );
    it.each([["amount"], ["durationSecs"], ["USER"], ["slippage"], ["minVeOutWei"]])(
      "unknown %s lists the accepted names",
      async (param) => {
        d.proxy.reset();
        const { status, body } = await d.get(d.app(), `${quoteWith({})}&${param}=1`);
        expect(status).toBe(400);
        expect(body.detail).toEqual({
          param,
          accepted: [
            "user",
            "claimAmountWei",
            "targetTokenId",
            "durationSeconds",
            "createAutoMax",
            "slippageBps",
            "ethAmountWei",
          ],
        });
        expect(d.proxy.count()).toBe(0);
      },
    );
  });
});
