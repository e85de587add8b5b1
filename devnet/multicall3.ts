import { createPublicClient, type Hex, http } from "viem";
import { MULTICALL3_ADDRESS } from "../api/chain/multicall";
import { MULTICALL3_CREATION_CODE } from "../api/chain/multicall3Bytecode";

/**
 * Puts Multicall3 at its canonical address on an anvil devnet, as Base and Base Sepolia have it, so the API
 * reads the devnet exactly as it reads production (one small eth_call to 0xcA11…, not 12 KB of deployless
 * bytecode). The runtime code is what Multicall3's creation code returns when run: an eth_call with no `to`
 * executes the constructor and answers the code it would deploy, which anvil_setCode then installs. No block
 * is mined and no account nonce moves, so the devnet's precomputed contract addresses are unaffected.
 */
export async function installMulticall3(rpcUrl: string): Promise<void> {
  const client = createPublicClient({ transport: http(rpcUrl) });
  const present = await client.getCode({ address: MULTICALL3_ADDRESS });
  if (present && present !== "0x") return;
  const runtime = (await client.request({
    method: "eth_call",
    params: [{ data: MULTICALL3_CREATION_CODE }, "latest"],
  })) as Hex;
  if (typeof runtime !== "string" || runtime.length < 4)
    throw new Error("Multicall3 creation code returned no runtime code");
  await client.request({ method: "anvil_setCode" as "eth_call", params: [MULTICALL3_ADDRESS, runtime] as never });
  const installed = await client.getCode({ address: MULTICALL3_ADDRESS });
  if (installed !== runtime) throw new Error("anvil_setCode did not install Multicall3");
}
