import type { Abi, Address, ContractFunctionName } from "viem";
import { readView, type ViewCall, type ViewResult, viewFailure } from "../../../chain/readView";
import { StateReadFailedError } from "../../../http/errors";
import { lockCountCall, lockNftAddress, refuseAtLockLimit, TOP_UP_INSTEAD } from "../lockLimit";
import type { PrepareDeps } from "./pipeline";

/**
 * One view of the user's state a prepare action reads before it encodes (an allowance, the pending royalties), through
 * the app's RpcClient. No RPC endpoint, a failed call or anything but a strict answer is STATE_READ_FAILED (502),
 * naming the read (`detail.read`: the function) and `what` in its message ("The token allowance").
 */
export async function readStateView<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "view" | "pure">>(
  deps: Pick<PrepareDeps, "rpc">,
  what: string,
  call: ViewCall<TAbi, TName>,
): Promise<ViewResult<TAbi, TName>> {
  const read = String(call.functionName);
  if (!deps.rpc) {
    throw new StateReadFailedError(`${what} could not be read: no RPC endpoint is configured.`, {
      read,
      upstream: "unconfigured",
    });
  }
  try {
    return await readView(deps.rpc, call);
  } catch (error) {
    const failure = viewFailure({ functionName: read }, error);
    const malformed = failure.kind === "malformed";
    throw new StateReadFailedError(
      malformed ? `${what} answer is malformed.` : `${what} could not be read (${failure.kind}).`,
      { read, upstream: malformed ? "invalid" : failure.kind },
      { cause: failure },
    );
  }
}

/**
 * A new lock's room (lockLimit.ts): the wallet's live lock count (VeLockNFT.balanceOf; a failed read is
 * STATE_READ_FAILED naming `balanceOf`), refused as LOCK_LIMIT_REACHED at the limit with `instead` said.
 */
export async function refuseNewLockAtLimit(
  deps: Pick<PrepareDeps, "rpc" | "config">,
  user: Address,
  instead: string = TOP_UP_INSTEAD,
): Promise<void> {
  const call = lockCountCall(lockNftAddress(deps.config.manifest), user);
  refuseAtLockLimit(user, await readStateView(deps, "The wallet's lock count", call), instead);
}
