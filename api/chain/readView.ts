/**
 * The one way the service reads a contract view: encode by ABI → eth_call → decode by ABI, where the
 * answer counts only if it is exactly the canonical encoding of what it decodes to (no short or long
 * answer, no trailing bytes, no dirty padding, no bool that is neither 0 nor 1). Every failure is one
 * typed ViewReadError that names the view and keeps its cause. The state snapshot's Multicall3 read goes
 * through here too, its outer call (readView) and each member's answer (decodeView): api/chain/multicall.ts.
 *
 * The coder is viem's, with two measured exceptions on the state route's hot path, each pinned to viem's
 * coder by test (test/chain/readView.test.ts, test/chain/aggregateCodec.test.ts) and held to the same
 * decode → re-encode → compare rule:
 * - a view whose outputs are all one-word types (uint256, bool, address, bytes32) is decoded word by word;
 * - a call may bring its own ViewCodec (Multicall3's tryBlockAndAggregate: api/chain/aggregateCodec.ts).
 * Measured (bench/view-codec.ts, this 2-core machine under load, medians of alternating rounds): a state
 * answer's Multicall3 result with its 19 members, decoded and re-encoded, costs 682 µs through viem's coder
 * and 101 µs through these (0.15×) — against ~1 ms for the whole state answer.
 */
import {
  type Abi,
  type AbiFunction,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  decodeFunctionResult,
  deploylessCallViaBytecodeBytecode,
  encodeFunctionResult,
  getAbiItem,
  getAddress,
  type Hex,
} from "viem";
import { encodeCall } from "./encode";
import { type RpcCallOptions, type RpcClient, RpcError, type RpcFailureKind, type RpcRequest } from "./rpc";

/** A hand coder for one hot view, pinned to viem's coder by test: its call data, its answer both ways. */
export type ViewCodec<TArgs, TResult> = {
  encodeCall(args: TArgs): Hex;
  decodeResult(raw: Hex): TResult;
  encodeResult(value: TResult): Hex;
};

export type ViewCall<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "view" | "pure">> = {
  address: Address;
  abi: TAbi;
  functionName: TName;
  args?: ContractFunctionArgs<TAbi, "view" | "pure", TName>;
  /**
   * The contract's creation code, for a view of a contract that is not deployed: the call then runs it
   * "deployless" inside the eth_call (viem's deploylessCallViaBytecode wrapper), and `address` is unused.
   */
  code?: Hex;
  codec?: ViewCodec<
    ContractFunctionArgs<TAbi, "view" | "pure", TName>,
    ContractFunctionReturnType<TAbi, "view" | "pure", TName>
  >;
};

export type ViewResult<
  TAbi extends Abi,
  TName extends ContractFunctionName<TAbi, "view" | "pure">,
> = ContractFunctionReturnType<TAbi, "view" | "pure", TName>;

export type ViewReadFailure =
  /** No RPC endpoint is configured. */
  | "unconfigured"
  /** The node's answer is not the canonical encoding of the view's outputs. */
  | "malformed"
  | RpcFailureKind;

export class ViewReadError extends Error {
  override name = "ViewReadError";
  /** For a member of a multicall: its position in the call (api/chain/multicall.ts). */
  readonly member: number | undefined;
  constructor(
    readonly view: string,
    readonly kind: ViewReadFailure,
    options?: { cause?: unknown; member?: number },
  ) {
    super(`${view}: ${kind}`, options);
    this.member = options?.member;
  }
  /** The revert data when the node reported a revert (kind "rpc"), for decodeRevert. */
  get revertData(): string | undefined {
    return this.cause instanceof RpcError ? this.cause.info.data : undefined;
  }
}

const label = (call: { functionName: string }) => `${call.functionName}()`;

const word = (n: number) => n.toString(16).padStart(64, "0");
const padded = (hexBody: string) => hexBody.padEnd(Math.ceil(hexBody.length / 64) * 64, "0");

/**
 * Everything of a deployless call's data up to its second constructor argument: the wrapper's code, the two
 * argument offsets and the creation code. It depends on the code alone, so it is ABI-encoded once per code
 * (the same bytes viem's encodeDeployData produces, pinned by test/chain/readView.test.ts).
 */
const deploylessPrefixes = new Map<Hex, string>();
function deploylessPrefix(code: Hex): string {
  let prefix = deploylessPrefixes.get(code);
  if (prefix === undefined) {
    const body = code.slice(2);
    const secondOffset = 0x40 + 32 + padded(body).length / 2;
    prefix = `${deploylessCallViaBytecodeBytecode}${word(0x40)}${word(secondOffset)}${word(body.length / 2)}${padded(body)}`;
    if (deploylessPrefixes.size < 8) deploylessPrefixes.set(code, prefix);
  }
  return prefix;
}

/** The call data of a view run on `code` deployed inside the call: deploylessCallViaBytecode(code, data). */
export function deploylessData(code: Hex, data: Hex): Hex {
  const body = data.slice(2);
  return `${deploylessPrefix(code)}${word(body.length / 2)}${padded(body)}` as Hex;
}

/** The eth_call request of a view, at `block` (default latest), for a batch or a single call. */
export function viewRequest<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "view" | "pure">>(
  call: ViewCall<TAbi, TName>,
  block: Hex | "latest" = "latest",
): RpcRequest {
  const args = (call.args ?? []) as ContractFunctionArgs<TAbi, "view" | "pure", TName>;
  const data = call.codec
    ? call.codec.encodeCall(args)
    : encodeCall(call.abi, call.functionName as never, args as never);
  const tx = call.code ? { data: deploylessData(call.code, data) } : { to: call.address, data };
  return { method: "eth_call", params: [tx, block] };
}

type ResultCoder = { decode(raw: Hex): unknown; encode(value: unknown): Hex };

const ONE_WORD_TYPES = new Set(["uint256", "bool", "address", "bytes32"]);

/**
 * A view whose outputs are all one-word types, word by word — what viem's decodeFunctionResult returns
 * (one output: the value; several: the array), and its canonical encoding back.
 */
function oneWordCoder(types: readonly string[]): ResultCoder {
  const decodeWord = (type: string, w: string): unknown => {
    switch (type) {
      case "uint256":
        return BigInt(`0x${w}`);
      case "bool":
        if (w !== word(0) && w !== word(1)) throw new Error("a bool that is neither 0 nor 1");
        return w === word(1);
      case "address":
        return getAddress(`0x${w.slice(24)}`);
      default:
        return `0x${w}`;
    }
  };
  const encodeWord = (type: string, v: unknown): string => {
    switch (type) {
      case "uint256":
        return (v as bigint).toString(16).padStart(64, "0");
      case "bool":
        return word(v ? 1 : 0);
      case "address":
        return (v as string).slice(2).toLowerCase().padStart(64, "0");
      default:
        return (v as string).slice(2);
    }
  };
  return {
    decode(raw) {
      if (raw.length !== 2 + 64 * types.length) throw new Error(`not ${types.length} word(s)`);
      const values = types.map((t, i) => decodeWord(t, raw.slice(2 + 64 * i, 2 + 64 * (i + 1))));
      return values.length === 1 ? values[0] : values;
    },
    encode(value) {
      const values = types.length === 1 ? [value] : (value as unknown[]);
      return `0x${types.map((t, i) => encodeWord(t, values[i])).join("")}` as Hex;
    },
  };
}

/** The coder of each (ABI, function), worked out once: one-word outputs word by word, anything else viem's. */
const coders = new WeakMap<Abi, Map<string, ResultCoder>>();
function resultCoder(abi: Abi, functionName: string): ResultCoder {
  let byName = coders.get(abi);
  if (!byName) {
    byName = new Map();
    coders.set(abi, byName);
  }
  let coder = byName.get(functionName);
  if (!coder) {
    const item = getAbiItem({ abi, name: functionName } as never) as AbiFunction | undefined;
    if (item?.type !== "function") throw new Error(`${functionName} is not a function of the ABI`);
    const types = item.outputs.map((o) => o.type);
    if (types.length > 0 && types.every((t) => ONE_WORD_TYPES.has(t))) coder = oneWordCoder(types);
    else {
      // viem's own coder over the one ABI item (no name lookup per call).
      const one = [item] as Abi;
      coder = {
        decode: (data) => decodeFunctionResult({ abi: one, functionName, data } as never),
        encode: (result) => encodeFunctionResult({ abi: one, functionName, result } as never),
      };
    }
    byName.set(functionName, coder);
  }
  return coder;
}

/** Decodes a raw eth_call result strictly (see the file comment); throws ViewReadError "malformed". */
export function decodeView<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "view" | "pure">>(
  call: ViewCall<TAbi, TName>,
  raw: unknown,
): ViewResult<TAbi, TName> {
  if (typeof raw !== "string" || !/^0x(?:[0-9a-fA-F]{2})*$/.test(raw))
    throw new ViewReadError(label(call), "malformed");
  let value: unknown;
  try {
    const { codec } = call;
    const coder: ResultCoder = codec
      ? { decode: (r) => codec.decodeResult(r), encode: (v) => codec.encodeResult(v as never) }
      : resultCoder(call.abi as Abi, call.functionName as string);
    value = coder.decode(raw as Hex);
    const canonical = coder.encode(value);
    if (canonical.toLowerCase() !== raw.toLowerCase()) throw new Error("not the canonical encoding");
  } catch (cause) {
    throw new ViewReadError(label(call), "malformed", { cause });
  }
  return value as ViewResult<TAbi, TName>;
}

/** Wraps a failed RPC call as the view's ViewReadError (kind from the RpcError), keeping the cause. */
export function viewFailure(call: { functionName: string }, cause: unknown): ViewReadError {
  if (cause instanceof ViewReadError) return cause;
  return new ViewReadError(label(call), cause instanceof RpcError ? cause.kind : "unreachable", { cause });
}

/** One view, read and decoded strictly. */
export async function readView<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "view" | "pure">>(
  rpc: RpcClient | null,
  call: ViewCall<TAbi, TName>,
  options: RpcCallOptions & {
    block?: Hex | "latest";
    /** A further check of the decoded value; what it throws fails the read, counted as a malformed answer. */
    accept?: (value: ViewResult<TAbi, TName>) => void;
  } = {},
): Promise<ViewResult<TAbi, TName>> {
  if (rpc === null) throw new ViewReadError(label(call), "unconfigured");
  try {
    // Decoded inside the call, so a malformed answer is counted as the call's failure ("invalid"), not "ok".
    return await rpc.request(viewRequest(call, options.block), {
      signal: options.signal,
      deadline: options.deadline,
      decode: (raw) => {
        const value = decodeView(call, raw);
        options.accept?.(value);
        return value;
      },
    });
  } catch (cause) {
    throw viewFailure(call, cause);
  }
}
