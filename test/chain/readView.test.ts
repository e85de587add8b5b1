import fc from "fast-check";
import { decodeFunctionResult, encodeFunctionResult, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { AssetTokenAbi, LaunchControllerAbi } from "../../abis";
import { decodeView, readView, ViewReadError, viewFailure } from "../../api/chain/readView";
import { RpcError } from "../../api/chain/rpc";

const word = (n: bigint) => n.toString(16).padStart(64, "0");
const ADDRESS = "0x0000000000000000000000000000000000000001";
const totalSupply = { address: ADDRESS, abi: AssetTokenAbi, functionName: "totalSupply" } as const;
const preflight = { address: ADDRESS, abi: LaunchControllerAbi, functionName: "preflight" } as const;
const flagAbi = [
  {
    type: "function",
    name: "flag",
    stateMutability: "view",
    inputs: [],
    outputs: [
      { name: "a", type: "uint256" },
      { name: "b", type: "bool" },
    ],
  },
] as const;
const flag = { address: ADDRESS, abi: flagAbi, functionName: "flag" } as const;

const malformed = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof ViewReadError && error.kind === "malformed";
  }
  return false;
};

describe("decodeView: the answer must be the exact canonical encoding", () => {
  it("decodes one word and several words by the ABI", () => {
    expect(decodeView(totalSupply, `0x${word(12345n)}`)).toBe(12345n);
    expect(decodeView(preflight, `0x${word(0x7ffn)}${word(42n)}`)).toEqual([0x7ffn, 42n]);
    expect(decodeView(flag, `0x${word(7n)}${word(1n)}`)).toEqual([7n, true]);
  });

  it.each([
    ["0x", "0x"],
    ["short", `0x${word(1n).slice(2)}`],
    ["trailing bytes", `0x${word(1n)}00`],
    ["a word too many", `0x${word(1n)}${word(2n)}`],
    ["non-hex", `0x${"g".repeat(64)}`],
    ["odd length", `0x${word(1n)}0`],
    ["no 0x", word(1n)],
    ["null", null],
    ["a number", 5],
  ])("%s → malformed", (_name, raw) => {
    expect(malformed(() => decodeView(totalSupply, raw))).toBe(true);
  });

  it("one word where the view returns two is malformed", () => {
    expect(malformed(() => decodeView(preflight, `0x${word(1n)}`))).toBe(true);
  });

  it("a bool that is neither 0 nor 1 is not trusted (dirty padding)", () => {
    expect(malformed(() => decodeView(flag, `0x${word(7n)}${word(2n)}`))).toBe(true);
  });

  it("keeps the cause and the view's name", () => {
    try {
      decodeView(preflight, `0x${word(1n)}`);
    } catch (error) {
      expect((error as ViewReadError).message).toBe("preflight(): malformed");
      expect((error as ViewReadError).cause).toBeInstanceOf(Error);
    }
  });
});

describe("readView and viewFailure", () => {
  it("no RPC → unconfigured", async () => {
    await expect(readView(null, totalSupply)).rejects.toMatchObject({ kind: "unconfigured" });
  });

  it("an RPC failure keeps its kind, its cause and, for a revert, its data", () => {
    const revert = new RpcError("rpc", "reverted", { method: "eth_call", code: 3, data: "0x1234abcd" });
    const failure = viewFailure(totalSupply, revert);
    expect([failure.kind, failure.cause, failure.revertData]).toEqual(["rpc", revert, "0x1234abcd"]);
    expect(viewFailure(totalSupply, new RpcError("timeout", "t")).kind).toBe("timeout");
    expect(viewFailure(totalSupply, failure)).toBe(failure);
  });
});

describe("one-word outputs are decoded word by word, exactly as viem does", () => {
  const abi = [
    {
      type: "function",
      name: "words",
      stateMutability: "view",
      inputs: [],
      outputs: [
        { name: "a", type: "uint256" },
        { name: "b", type: "bool" },
        { name: "c", type: "address" },
        { name: "d", type: "bytes32" },
      ],
    },
    { type: "function", name: "one", stateMutability: "view", inputs: [], outputs: [{ name: "", type: "address" }] },
  ] as const;
  const words = { address: ADDRESS, abi, functionName: "words" } as const;
  const one = { address: ADDRESS, abi, functionName: "one" } as const;
  const hexWord = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString("hex"));

  it("any four words: the same value as viem's decodeFunctionResult, or malformed exactly when viem's decode + re-encode disagrees", () => {
    const viaViem = (fn: "words" | "one", data: Hex) => {
      try {
        const value = decodeFunctionResult({ abi, functionName: fn, data });
        const again = encodeFunctionResult({ abi, functionName: fn, result: value as never });
        return again.toLowerCase() === data.toLowerCase() ? { value } : "malformed";
      } catch {
        return "malformed";
      }
    };
    const ours = (call: typeof words | typeof one, data: Hex) => {
      try {
        return { value: decodeView(call as typeof words, data) as unknown };
      } catch (error) {
        return error instanceof ViewReadError && error.kind === "malformed" ? "malformed" : "other";
      }
    };
    // Words that are often canonical: small numbers, 0/1 bools, clean addresses.
    const likely = fc.oneof(
      hexWord,
      fc.bigInt({ min: 0n, max: 2n }).map((n) => word(n)),
      fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Buffer.from(b).toString("hex").padStart(64, "0")),
    );
    fc.assert(
      fc.property(fc.array(likely, { minLength: 0, maxLength: 5 }), (ws) => {
        const data = `0x${ws.join("")}` as Hex;
        expect(ours(words, data)).toEqual(viaViem("words", data));
        expect(ours(one, data)).toEqual(viaViem("one", data));
      }),
      { numRuns: 500 },
    );
  });
});
