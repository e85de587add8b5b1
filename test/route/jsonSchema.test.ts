import fc from "fast-check";
import { getAddress } from "viem";
import { describe, expect, it } from "vitest";
import { parseAddress, parseBool, parseUint256 } from "../../api/http/params";
import { mcpTools, toolCallPath } from "../../api/mcp/server";
import { ADDRESS_PATTERN, BOOL_PATTERN, paramSchema, UINT256_PATTERN } from "../../api/route/jsonSchema";
import { V1_OPERATIONS } from "../../api/routes";

// The documented parameter patterns against the strict parsers that serve the routes: a pattern must
// accept exactly what its parser accepts, except what no regular expression can check (the uint256
// upper bound, the EIP-55 checksum of a mixed-case address), which the descriptions state.

const accepts = (parse: (p: string, raw: string) => unknown, raw: string) => {
  try {
    parse("p", raw);
    return true;
  } catch {
    return false;
  }
};

const MAX = 2n ** 256n - 1n;
const digits = fc.stringMatching(/^[0-9+\-eE. x]{0,80}$/);
const hexish = fc.oneof(
  fc.stringMatching(/^(0x|0X)?[0-9a-fA-FgG]{0,42}$/),
  fc.stringMatching(/^0x[0-9a-fA-F]{40}$/), // right length, mostly a wrong checksum
  fc.uint8Array({ minLength: 20, maxLength: 20 }).chain((bytes) => {
    const lower = `0x${Buffer.from(bytes).toString("hex")}`;
    return fc.constantFrom(lower, getAddress(lower), `0x${lower.slice(2).toUpperCase()}`);
  }),
);

describe("parameter patterns agree with the parsers", () => {
  it("uint256: same verdict on any digit-like text up to 2^256 − 1; above it only the parser refuses", () => {
    const re = new RegExp(UINT256_PATTERN);
    fc.assert(
      fc.property(fc.oneof(digits, fc.bigInt({ min: 0n, max: 2n ** 260n }).map(String)), (raw) => {
        const overRange = re.test(raw) && BigInt(raw) > MAX;
        expect(accepts(parseUint256, raw)).toBe(re.test(raw) && !overRange);
      }),
      { numRuns: 2000 },
    );
    expect(re.test(MAX.toString())).toBe(true);
    expect(re.test((MAX + 1n).toString())).toBe(true); // 78 digits: the parser's range check refuses it
    expect(accepts(parseUint256, (MAX + 1n).toString())).toBe(false);
    expect(re.test(`1${"0".repeat(78)}`)).toBe(false);
  });

  it("address: same verdict, except a mixed-case address with a bad checksum", () => {
    const re = new RegExp(ADDRESS_PATTERN);
    fc.assert(
      fc.property(hexish, (raw) => {
        const body = raw.slice(2);
        const mixed = body !== body.toLowerCase() && body !== body.toUpperCase();
        const badChecksum = re.test(raw) && mixed && getAddress(raw) !== raw;
        expect(accepts(parseAddress, raw)).toBe(re.test(raw) && !badChecksum);
      }),
      { numRuns: 2000 },
    );
  });

  it("bool: exactly true or false", () => {
    const re = new RegExp(BOOL_PATTERN);
    for (const raw of ["true", "false", "True", "TRUE", "1", "0", "", "yes", "true ", " false"]) {
      expect(accepts(parseBool, raw), raw).toBe(re.test(raw));
    }
    expect(paramSchema({ kind: "bool", default: "false", description: "x" })).toMatchObject({
      enum: ["true", "false"],
      default: "false",
    });
  });
});

describe("MCP tool calls become the REST request", () => {
  const tool = (name: string) => mcpTools(V1_OPERATIONS).find((t) => t.name === name)!.operation;

  it("puts path parameters in the path and the rest in the query, as given; a path parameter is judged by its kind first", () => {
    const address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    expect(toolCallPath(tool("get_state"), { address })).toBe(`/api/mcp/v1/state/${address}`);
    // A segment that would name another route (`..` is removed by URL parsing, encoded or not) never becomes a path.
    for (const bad of ["0xAbC/..?x", "..", ".", ""]) {
      expect(() => toolCallPath(tool("get_state"), { address: bad }), bad).toThrow(/address must be a 0x-prefixed/);
    }
    expect(toolCallPath(tool("prepare_lock"), { user: "0x1", amountWei: "1e3", extra: "y" })).toBe(
      "/api/mcp/v1/prepare/lock?user=0x1&amountWei=1e3&extra=y",
    );
    // null is not "omitted": refused naming the argument (it would silently take the default; red team mcp F1).
    expect(() => toolCallPath(tool("prepare_lock"), { user: "0x1", amountWei: "1e3", durationSecs: null })).toThrow(
      /durationSecs is null/,
    );
    expect(toolCallPath(tool("prepare_withdraw_lp"), {})).toBe("/api/mcp/v1/prepare/withdraw-lp");
  });

  it("refuses only what a URL cannot carry as given: floats, unsafe integers, other types, a missing path parameter", () => {
    for (const amountWei of [1.5, 2 ** 53, 1e21, Number.NaN, [1], { n: 1 }]) {
      expect(() => toolCallPath(tool("prepare_lock"), { amountWei })).toThrow(/amountWei must be a string/);
    }
    expect(() => toolCallPath(tool("get_state"), {})).toThrow(/Missing required parameter address/);
  });

  it("safe integers and booleans sent as JSON values are written as the route's strict parser reads them", () => {
    expect(toolCallPath(tool("prepare_lock"), { amountWei: 1000, autoMax: true, durationSecs: 2 ** 53 - 1 })).toBe(
      "/api/mcp/v1/prepare/lock?amountWei=1000&autoMax=true&durationSecs=9007199254740991",
    );
    // A negative integer goes through as written: the route refuses it as BAD_PARAMS, naming it.
    expect(toolCallPath(tool("prepare_lock"), { amountWei: -1 })).toBe("/api/mcp/v1/prepare/lock?amountWei=-1");
    expect(toolCallPath(tool("get_preflight"), { flag: true })).toBe("/api/mcp/v1/preflight?flag=true");
  });
});
