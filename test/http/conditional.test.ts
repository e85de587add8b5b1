import { describe, expect, it } from "vitest";
import { ifNoneMatchHits } from "../../api/http/conditional";

describe("ifNoneMatchHits (RFC 9110 §13.1.2, weak comparison)", () => {
  it.each([
    ['"a"', '"a"', true],
    ['W/"a"', '"a"', true], // a weak tag matches a strong one by weak comparison
    ['"a"', 'W/"a"', true],
    ['W/"a"', 'W/"a"', true],
    ['"b", "a"', '"a"', true], // a list
    ['"b",W/"a"', 'W/"a"', true],
    ['  "b" ,  "a"  ', '"a"', true],
    ["*", '"a"', true],
    [" * ", 'W/"a"', true],
    ['"a,b"', '"a,b"', true], // a comma is a tag character, not a separator, inside the quotes
    ['"a,b"', '"a"', false],
    ['"a-br"', '"a"', false],
    ['"A"', '"a"', false], // character by character
    ['"8453-12"', 'W/"8453-1"', false],
    ["", '"a"', false],
    [undefined, '"a"', false],
    ["a", '"a"', false], // unquoted: not a tag
  ] as const)("If-None-Match %s, ETag %s → %s", (field, etag, want) => {
    expect(ifNoneMatchHits(field, etag)).toBe(want);
  });
});
