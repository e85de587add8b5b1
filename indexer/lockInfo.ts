/**
 * The listing flag the MetadataUpdate handler reads from getLockInfo (src/index.ts). The read is made at the
 * event's block, i.e. the state at the END of that block: on Base a market sale runs unlist → transfer to the
 * Furnace → burn in one transaction, so at the unlist's MetadataUpdate the lock may already be gone.
 *
 * The published getLockInfo answers a burned id with zeros (listed = false; `delete _locks[id]`), and the devnet
 * does the same. Should a deployment's getLockInfo revert instead, the lock is not listed: a revert is the
 * contract's own answer for that block and will be the same on every replay, so it must never stop the indexer
 * (an uncaught error in a handler halts Ponder). Anything else (transport errors, an empty answer because there is
 * no code at the address) is not a contract answer and is rethrown, so Ponder retries or stops as it should.
 */
import { BaseError, ContractFunctionRevertedError } from "viem";

export type LockInfo = readonly [amount: bigint, lockEnd: bigint, autoMax: boolean, listed: boolean];

/** True if `error` is a contract revert (viem's ContractFunctionRevertedError anywhere in its cause chain). */
export function isContractRevert(error: unknown): boolean {
  return error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionRevertedError) !== null;
}

/** getLockInfo's `listed` at the read's block; a reverted read counts as not listed (`reverted` says so). */
export async function listedFlag(read: () => Promise<LockInfo>): Promise<{ listed: boolean; reverted: boolean }> {
  try {
    const [, , , listed] = await read();
    return { listed, reverted: false };
  } catch (error) {
    if (isContractRevert(error)) return { listed: false, reverted: true };
    throw error;
  }
}
