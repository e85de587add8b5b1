/**
 * The one way the service reads a contract view: encode by ABI → eth_call → decode by ABI, where the
 * answer counts only if it is exactly the canonical encoding of what it decodes to (no short or long
 * answer, no trailing bytes, no dirty padding, no bool that is neither 0 nor 1). Every failure is one
 * typed ViewReadError that names the view and keeps its cause.
 */
import {
  type Abi,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  decodeFunctionResult,
  encodeFunctionResult,
  type Hex,
} from "viem";
import { encodeCall } from "./encode";
import { type RpcCallOptions, type RpcClient, RpcError, type RpcFailureKind, type RpcRequest } from "./rpc";

export type ViewCall<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "view" | "pure">> = {
  address: Address;
  abi: TAbi;
  functionName: TName;
  args?: ContractFunctionArgs<TAbi, "view" | "pure", TName>;
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
  constructor(
    readonly view: string,
    readonly kind: ViewReadFailure,
    options?: { cause?: unknown },
  ) {
    super(`${view}: ${kind}`, options);
  }
  /** The revert data when the node reported a revert (kind "rpc"), for decodeRevert. */
  get revertData(): string | undefined {
    return this.cause instanceof RpcError ? this.cause.info.data : undefined;
  }
}

const label = (call: { functionName: string }) => `${call.functionName}()`;

/** The eth_call request of a view, at `block` (default latest), for a batch or a single call. */
export function viewRequest<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "view" | "pure">>(
  call: ViewCall<TAbi, TName>,
  block: Hex | "latest" = "latest",
): RpcRequest {
  const data = encodeCall(call.abi, call.functionName as never, (call.args ?? []) as never);
  return { method: "eth_call", params: [{ to: call.address, data }, block] };
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
    // Typed at the call site (ViewResult); viem's generic parameter types are too deep to carry through here.
    const abi = call.abi as Abi;
    const functionName = call.functionName as string;
    value = decodeFunctionResult({ abi, functionName, data: raw as Hex } as never);
    const canonical = encodeFunctionResult({ abi, functionName, result: value } as never);
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
  options: RpcCallOptions & { block?: Hex | "latest" } = {},
): Promise<ViewResult<TAbi, TName>> {
  if (rpc === null) throw new ViewReadError(label(call), "unconfigured");
  let raw: unknown;
  try {
    raw = await rpc.request(viewRequest(call, options.block), options);
  } catch (cause) {
    throw viewFailure(call, cause);
  }
  return decodeView(call, raw);
}
