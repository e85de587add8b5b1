/**
 * The query parsers every index route runs (api/http/params.ts parseQuery, api/read/atLeast.ts parseAtLeast) skip
 * parsing a URL when the text shows there is nothing to parse; what they answer must be what a full parse answers,
 * percent-escaped names included (a minBlock ignored would answer an older block than the client asked for).
 */
import { describe, expect, it } from "vitest";
import { parseQuery } from "../../api/http/params";
import { AT_PARAMS, PAGE_PARAMS } from "../../api/index/query";
import { parseAtLeast } from "../../api/read/atLeast";

const BASE = "http://127.0.0.1:8080/api/index/v1";

describe("parseQuery", () => {
  it("a URL without a query: the defaults (the same as an empty query)", () => {
    expect(parseQuery(`${BASE}/accounts/0xabc/events`, PAGE_PARAMS)).toEqual(
      parseQuery(`${BASE}/accounts/0xabc/events?`, PAGE_PARAMS),
    );
    expect(parseQuery(`${BASE}/accounts/0xabc/events`, PAGE_PARAMS).limit).toBe(100n);
    expect(parseQuery(`${BASE}/locks/1`, AT_PARAMS)).toEqual(parseQuery(`${BASE}/locks/1?`, AT_PARAMS));
  });

  it("a query is parsed as before: values, escapes, unknown and repeated names", () => {
    expect(parseQuery(`${BASE}/x?limit=5&block=7`, PAGE_PARAMS)).toMatchObject({ limit: 5n, block: 7n });
    expect(parseQuery(`${BASE}/x?%6Cimit=6`, PAGE_PARAMS).limit).toBe(6n);
    expect(() => parseQuery(`${BASE}/x?nope=1`, PAGE_PARAMS)).toThrow(/Unknown parameter nope/);
    expect(() => parseQuery(`${BASE}/x?limit=1&limit=2`, PAGE_PARAMS)).toThrow(/more than once/);
  });
});

describe("parseAtLeast", () => {
  it("none without either name", () => {
    expect(parseAtLeast(`${BASE}/stats`)).toBeUndefined();
    expect(parseAtLeast(`${BASE}/accounts/0xabc/events?limit=5&block=9`)).toBeUndefined();
  });

  it("the names plain or percent-escaped", () => {
    expect(parseAtLeast(`${BASE}/stats?minBlock=12`)).toEqual({ minBlock: 12n, waitMs: expect.any(Number) });
    expect(parseAtLeast(`${BASE}/stats?min%42lock=12&waitMs=100`)).toEqual({ minBlock: 12n, waitMs: 100 });
    expect(parseAtLeast(`${BASE}/stats?minBlock=12&%77aitMs=250`)).toEqual({ minBlock: 12n, waitMs: 250 });
    expect(() => parseAtLeast(`${BASE}/stats?%77aitMs=100`)).toThrow(/waitMs is only taken with minBlock/);
  });
});
