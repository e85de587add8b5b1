/**
 * A real devnet for a test file: its own anvil on a free port, the devnet contracts deployed, optionally seeded.
 * Call `stop()` in afterAll.
 */
import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createWalletClient,
  decodeErrorResult,
  type Hex,
  http,
  isHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import {
  DEVNET_ERRORS_ABI,
  type DevnetClients,
  type DevnetDeployment,
  deployDevnet,
  devnetClients,
  sendTx,
} from "../../devnet/deploy";
import { type SeedResult, seedDevnet } from "../../devnet/seed";

export interface TestDevnet {
  anvil: AnvilHandle;
  rpcUrl: string;
  deployment: DevnetDeployment;
  addresses: DevnetDeployment["addresses"];
  clients: DevnetClients;
  stop(): Promise<void>;
}

export async function startDevnet(): Promise<TestDevnet>;
export async function startDevnet(opts: { seed: true }): Promise<TestDevnet & { seed: SeedResult }>;
export async function startDevnet(opts: { seed?: boolean } = {}): Promise<TestDevnet & { seed?: SeedResult }> {
  const anvil = await startAnvil();
  try {
    const deployment = await deployDevnet({ rpcUrl: anvil.rpcUrl });
    const seed = opts.seed ? await seedDevnet({ rpcUrl: anvil.rpcUrl, manifest: deployment.manifest }) : undefined;
    return {
      anvil,
      rpcUrl: anvil.rpcUrl,
      deployment,
      addresses: deployment.addresses,
      clients: devnetClients(anvil.rpcUrl, deployment.chainId),
      seed,
      stop: () => anvil.stop(),
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

export interface DevCall {
  address: Address;
  abi: Abi;
  functionName: string;
  args?: readonly unknown[];
  value?: bigint;
}

/** Sends `call` from the account of `privateKey` and waits for it (throws on revert). */
export function send(devnet: TestDevnet, privateKey: Hex, call: DevCall) {
  return sendTx(devnet.clients, privateKey, call);
}

/**
 * Sends `call` from any address (a contract such as the Furnace, or a user without a key) by anvil impersonation,
 * funding it with gas money first; waits for the receipt and throws on revert.
 */
export async function sendAs(devnet: TestDevnet, from: Address, call: DevCall) {
  const { testClient, publicClient, chain } = devnet.clients;
  await testClient.impersonateAccount({ address: from });
  try {
    if ((await publicClient.getBalance({ address: from })) < 10n ** 18n) {
      await testClient.setBalance({ address: from, value: 10n ** 20n });
    }
    const wallet = createWalletClient({ chain, transport: http(devnet.rpcUrl), account: from });
    // biome-ignore lint/suspicious/noExplicitAny: the call shape is checked by viem at runtime against `abi`
    const request = { ...call, chain, account: from } as any;
    const gas = await publicClient.estimateContractGas(request);
    const hash = await wallet.writeContract({ ...request, gas: gas + gas / 4n + 30_000n });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`${call.functionName} from ${from} reverted in ${hash}`);
    return receipt;
  } finally {
    await testClient.stopImpersonatingAccount({ address: from });
  }
}

/** The custom error name a call reverts with when simulated from any address (eth_call; nothing mined). */
export async function revertNameFrom(devnet: TestDevnet, from: Address, call: DevCall): Promise<string> {
  try {
    await devnet.clients.publicClient.simulateContract({ ...call, account: from } as Parameters<
      DevnetClients["publicClient"]["simulateContract"]
    >[0]);
  } catch (error) {
    return decodeRevert(error);
  }
  throw new Error(`${call.functionName} from ${from} did not revert`);
}

/**
 * The custom error name a call reverts with, simulated from `privateKey`'s account (eth_call, nothing mined).
 * Errors that bubble up from nested calls are decoded against every devnet error. Throws if the call succeeds.
 */
export async function revertName(devnet: TestDevnet, privateKey: Hex, call: DevCall): Promise<string> {
  try {
    await devnet.clients.publicClient.simulateContract({
      ...call,
      account: privateKeyToAccount(privateKey),
    } as Parameters<DevnetClients["publicClient"]["simulateContract"]>[0]);
  } catch (error) {
    return decodeRevert(error);
  }
  throw new Error(`${call.functionName} did not revert`);
}

export function decodeRevert(error: unknown): string {
  if (!(error instanceof BaseError)) throw error;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError) {
    if (reverted.raw && reverted.raw !== "0x") {
      try {
        return decodeErrorResult({ abi: DEVNET_ERRORS_ABI, data: reverted.raw }).errorName;
      } catch {
        return `unknown error ${reverted.raw.slice(0, 10)}`;
      }
    }
    if (reverted.data?.errorName) return reverted.data.errorName;
    return reverted.reason ?? "reverted without data";
  }
  const withData = error.walk((e) => isHex((e as { data?: unknown }).data));
  const data = (withData as { data?: Hex } | null)?.data;
  if (data) return decodeErrorResult({ abi: DEVNET_ERRORS_ABI, data }).errorName;
  throw error;
}
