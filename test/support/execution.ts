import { type Address, createWalletClient, type Hex, http, parseEventLogs, type TransactionReceipt } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { expect } from "vitest";
import type { createApp } from "../../api/app";
import type { PrepareEnvelope } from "../../api/mcp/v1/prepare";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { decodeRevert } from "./devnet";
import type { ReadsDevnet } from "./readsDevnet";

/**
 * Test-side helpers to GET a prepare route and to send its answer the way a wallet's `send_calls` would:
 * every transaction in order, from the user's own account, with exactly `to`, `data`, `value`, `chainId`.
 */

type App = ReturnType<typeof createApp>;

export const preparePath = (action: string, params: Record<string, string | bigint | boolean> = {}) => {
  const q = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  return `/api/mcp/v1/prepare/${action}${q ? `?${q}` : ""}`;
};

/** GETs a prepare route and insists on a 200 success envelope of spec §2.4. */
export async function prepareOk(
  d: ReadsDevnet,
  app: App,
  action: string,
  params: Record<string, string | bigint | boolean> = {},
): Promise<PrepareEnvelope> {
  const { status, body } = await d.get(app, preparePath(action, params));
  expect(status, JSON.stringify(body)).toBe(200);
  expect(body.ok).toBe(true);
  expect(body.chain).toBe(d.deployment.manifest.chain);
  expect(body.chainId).toBe(d.deployment.manifest.chainId);
  expect(body.transactions.length).toBeGreaterThan(0);
  for (const tx of body.transactions) {
    expect(
      Object.keys(tx)
        .filter((k) => k !== "gas")
        .sort(),
    ).toEqual(["chainId", "data", "step", "to", "value"]);
    expect(tx.value).toBe("0x0");
    expect(tx.chainId).toBe(d.deployment.manifest.chainId);
    expect(tx.to).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(tx.data).toMatch(/^0x([0-9a-f]{2})+$/);
  }
  return body as PrepareEnvelope;
}

/** Sends the envelope's transactions in order from `privateKey`; every one must be mined successfully. */
export async function execute(
  d: ReadsDevnet,
  privateKey: Hex,
  envelope: PrepareEnvelope,
): Promise<TransactionReceipt[]> {
  const wallet = d.chain.walletFor(privateKey);
  const receipts: TransactionReceipt[] = [];
  for (const tx of envelope.transactions) receipts.push(await sendPrepared(d, wallet, tx, "the wallet"));
  return receipts;
}

/** One prepared transaction with exactly its `to`, `data`, `value` on its chain; mined, and must succeed. */
async function sendPrepared(
  d: ReadsDevnet,
  wallet: Pick<ReturnType<ReadsDevnet["chain"]["walletFor"]>, "sendTransaction">,
  tx: PreparedTx,
  who: string,
): Promise<TransactionReceipt> {
  expect(tx.chainId).toBe(d.chain.chain.id);
  // biome-ignore lint/suspicious/noExplicitAny: wallets with a local or a json-rpc account take the same request
  const hash = await (wallet.sendTransaction as any)({
    to: tx.to,
    data: tx.data,
    value: BigInt(tx.value),
    chain: d.chain.chain,
  });
  const receipt = await d.chain.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status, `${tx.step} from ${who} reverted`).toBe("success");
  return receipt;
}

/** The VeLockNFT events of a receipt, decoded. */
export function lockEvents(d: ReadsDevnet, receipt: TransactionReceipt) {
  return parseEventLogs({
    abi: DEVNET_ABIS.VeLockNFT,
    logs: receipt.logs.filter((l) => l.address.toLowerCase() === d.deployment.addresses.VeLockNFT.toLowerCase()),
  });
}

export async function blockTime(d: ReadsDevnet, receipt: TransactionReceipt): Promise<bigint> {
  return (await d.chain.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp;
}

type PreparedTx = PrepareEnvelope["transactions"][number];

/**
 * What the user's wallet meets sending the batch in order: steps are sent while they succeed; the first one that
 * would revert (eth_call from the user at the current state) is reported with its decoded error, or null if all pass.
 */
export async function walletSees(
  d: ReadsDevnet,
  privateKey: Hex,
  envelope: PrepareEnvelope,
): Promise<{ step: string; error: string } | null> {
  const from = privateKeyToAccount(privateKey).address;
  for (const tx of envelope.transactions) {
    try {
      await d.chain.publicClient.call({ account: from, to: tx.to, data: tx.data, value: BigInt(tx.value) });
    } catch (error) {
      return { step: tx.step, error: decodeRevert(error) };
    }
    await execute(d, privateKey, { ...envelope, transactions: [tx] });
  }
  return null;
}

/** Sends one prepared transaction from any address (e.g. the Furnace) by anvil impersonation; must succeed. */
export async function executeAs(d: ReadsDevnet, from: Address, tx: PreparedTx): Promise<TransactionReceipt> {
  const rpc = d.chain.testClient;
  await rpc.impersonateAccount({ address: from });
  try {
    await rpc.setBalance({ address: from, value: 10n ** 20n });
    const wallet = createWalletClient({ chain: d.chain.chain, transport: http(d.anvil.rpcUrl), account: from });
    return await sendPrepared(d, wallet, tx, from);
  } finally {
    await rpc.stopImpersonatingAccount({ address: from });
  }
}

/** The decoded error the answer's simulation gives for `step`, or null when that step simulated fine. */
export function simulatedError(envelope: PrepareEnvelope, step: string): string | null {
  const sim = (envelope as unknown as { simulation?: { steps?: { step: string; error?: { name: string } }[] } })
    .simulation;
  const found = sim?.steps?.find((s) => s.step === step);
  if (!found) throw new Error(`no simulated step ${step} in ${JSON.stringify(sim)}`);
  return found.error?.name ?? null;
}
