import { describe, expect, it } from "vitest";
import { scanJson } from "../../api/mcp/rawJson";

// The text scan behind the MCP gatekeeper's refusals (api/mcp/gatekeeper.ts vetText): what JSON.parse hides.
const all = () => true;

describe("scanJson", () => {
  it("finds a member given twice, by its decoded name, with the object's path; escaped quotes do not end a string", () => {
    const text = `{"params":{"arguments":{"a\\"b":"x\\\\","amountWei":"5","amount\\u0057ei":"6"}},"id":1}`;
    expect(JSON.parse(text)).toBeTruthy();
    expect(scanJson(text, all).findings).toEqual([
      { kind: "duplicate", path: ["params", "arguments"], name: "amountWei" },
    ]);
  });

  it("a batch's paths start with the message's index; the same name in two objects is no duplicate", () => {
    const text = `[{"a":1,"b":{"a":2}},{"x":[{"k":1},{"k":2,"k":3}]}]`;
    expect(scanJson(text, all).findings).toEqual([{ kind: "duplicate", path: [1, "x", 1], name: "k" }]);
  });

  it("numbers that are not plain integers, where asked, with their text", () => {
    const text = `{"id":1.0,"params":{"arguments":{"a":1.0000000000000000001,"b":5e3,"c":-0,"d":-12,"e":0,"f":[1.5]}}}`;
    const at = (p: readonly (string | number)[]) => p.length === 3 && p[1] === "arguments";
    expect(scanJson(text, at).findings).toEqual([
      { kind: "inexact", path: ["params", "arguments", "a"], source: "1.0000000000000000001" },
      { kind: "inexact", path: ["params", "arguments", "b"], source: "5e3" },
      { kind: "inexact", path: ["params", "arguments", "c"], source: "-0" },
    ]);
  });

  it("the deepest nesting under each top-level element", () => {
    expect(scanJson(`{"a":{"b":[1,{"c":2}]}}`, all).depths).toEqual([4]);
    expect(scanJson(`[{"a":1},{"a":{"b":{}}},3]`, all).depths).toEqual([1, 3]);
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    expect(scanJson(`[${deep}]`, all).depths).toEqual([5000]);
    expect(scanJson("7", all).depths).toEqual([0]);
  });
});
