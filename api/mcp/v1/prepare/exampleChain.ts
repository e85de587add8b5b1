import { encodeAbiParameters, toFunctionSelector } from "viem";
import { decodeWith, type RpcClient, type RpcRequest } from "../../../chain/rpc";

/**
 * A fixed chain state the documentation's prepare examples are computed against: every allowance is 0
 * (so the approve step shows), the wallet holds 3 locks (room for a new one) and every Furnace quote is the
 * one below. The examples then come out of the very pipeline that serves the routes (gate → manifest →
 * parse → reads → encode) instead of hand-written calldata that could drift from it. Used for documentation only, never to serve a request.
 */

/** The quote every example entry gets: 5,000 tokens in, 25 % bonus, a full-length lock. */
export const EXAMPLE_QUOTE = {
  principalClaimWei: 5_000n * 10n ** 18n,
  bonusClaimWei: 1_250n * 10n ** 18n,
  veOutWei: 6_250n * 10n ** 18n,
  routeTokenId: 0n,
} as const;

const ALLOWANCE = toFunctionSelector("allowance(address,address)");
/** VeLockNFT.balanceOf: the example wallet's lock count, read before a new lock (well below the limit of 32). */
const BALANCE_OF = toFunctionSelector("balanceOf(address)");
const EXAMPLE_LOCK_COUNT = 3n;
const QUOTE = toFunctionSelector("quoteEnterWithClaim(address,uint256,uint256,uint256,bool)");

/**
 * The functions only the Furnace may call on the published contracts (protocol.md §1, limitations.md): a wallet's call
 * reverts NotAuthorized, so their examples show that revert, its hint and the answer's `warning`, as a live answer does.
 */
const FURNACE_ONLY = new Set(
  [
    "createLockFor(address,uint256,uint256,bool)",
    "addToLockFor(address,uint256,uint256)",
    "extendLockToFor(address,uint256,uint256)",
  ].map((signature) => toFunctionSelector(signature)),
);
const NOT_AUTHORIZED = toFunctionSelector("NotAuthorized()");

/** Every other example batch simulates cleanly: each call succeeds with a typical gas figure. */
function simulated(req: RpcRequest) {
  const calls = (req.params[0] as { blockStateCalls: { calls: { data: string }[] }[] }).blockStateCalls[0]!.calls;
  return [
    {
      number: "0x1a2b3c4",
      calls: calls.map((call) =>
        FURNACE_ONLY.has(call.data.slice(0, 10) as `0x${string}`)
          ? { status: "0x0", gasUsed: "0x5dc0", returnData: NOT_AUTHORIZED, logs: [] }
          : { status: "0x1", gasUsed: "0x249f0", returnData: "0x", logs: [] },
      ),
    },
  ];
}

function answer(req: RpcRequest): unknown {
  if (req.method === "eth_simulateV1") return simulated(req);
  const call = req.params[0] as { data?: string } | undefined;
  const selector = req.method === "eth_call" ? call?.data?.slice(0, 10) : undefined;
  if (selector === ALLOWANCE) return encodeAbiParameters([{ type: "uint256" }], [0n]);
  if (selector === BALANCE_OF) return encodeAbiParameters([{ type: "uint256" }], [EXAMPLE_LOCK_COUNT]);
  if (selector === QUOTE) {
    const q = EXAMPLE_QUOTE;
    return encodeAbiParameters(
      [{ type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }],
      [q.principalClaimWei, q.bonusClaimWei, q.veOutWei, q.routeTokenId],
    );
  }
  throw new Error(`the example chain has no answer for ${req.method} ${selector ?? ""}`);
}

export const exampleChain: RpcClient = {
  redactedUrl: "example:",
  request: async (req, options) => decodeWith(answer(req), options?.decode),
  batch: async (reqs, options) => reqs.map((req, i) => decodeWith(answer(req), options?.decode?.[i])),
};
