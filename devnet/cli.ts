/**
 * Devnet command line.
 *   npx tsx devnet/cli.ts deploy --rpc http://127.0.0.1:8545 [--seed] [--out deployments/local.json]
 *       deploys to a running node (anvil), optionally seeds history, writes the manifest.
 *   npx tsx devnet/cli.ts up [--port 8545] [--seed] [--out deployments/local.json]
 *       starts anvil itself, then the same, and keeps the chain running until Ctrl-C.
 */
import { parseArgs } from "node:util";
import { type AnvilHandle, startAnvil } from "./anvil";
import { deployDevnet, writeLocalManifest } from "./deploy";
import { seedDevnet } from "./seed";

const USAGE = `usage:
  npx tsx devnet/cli.ts deploy --rpc <url> [--seed] [--out <file>]
  npx tsx devnet/cli.ts up [--port <n>] [--seed] [--out <file>]`;

async function deployAndMaybeSeed(rpcUrl: string, seed: boolean, out: string): Promise<void> {
  const started = Date.now();
  const deployment = await deployDevnet({ rpcUrl });
  console.log(`deployed to ${rpcUrl} (chain id ${deployment.chainId}) from ${deployment.deployer}:`);
  for (const [name, entry] of Object.entries(deployment.manifest.contracts)) {
    console.log(`  ${name.padEnd(22)} ${entry?.address}  block ${entry?.startBlock}`);
  }
  console.log(
    `  ${"lpToken".padEnd(22)} ${deployment.manifest.lpToken?.address}  block ${deployment.manifest.lpToken?.startBlock}`,
  );
  if (seed) {
    const result = await seedDevnet({ rpcUrl, manifest: deployment.manifest });
    console.log(
      `seeded ${result.txCount} transactions up to block ${result.lastBlock}: ` +
        `${result.liveTokenIds.length} live locks, burned ${result.burnedTokenIds.join(", ")}`,
    );
    for (const [role, account] of Object.entries(result.accounts))
      console.log(`  ${role.padEnd(9)} ${account.address}`);
  }
  console.log(`wrote ${writeLocalManifest(deployment.manifest, out)} (${Date.now() - started} ms)`);
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      rpc: { type: "string" },
      port: { type: "string" },
      seed: { type: "boolean", default: false },
      out: { type: "string", default: "deployments/local.json" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  if (command === "deploy") {
    if (!values.rpc) throw new Error(`deploy needs --rpc\n${USAGE}`);
    await deployAndMaybeSeed(values.rpc, values.seed, values.out);
    return;
  }
  if (command === "up") {
    const port = values.port === undefined ? 8545 : Number(values.port);
    if (!Number.isInteger(port) || port <= 0 || port > 65_535) throw new Error(`bad --port ${values.port}`);
    const anvil: AnvilHandle = await startAnvil({ port });
    console.log(`anvil on ${anvil.rpcUrl}`);
    const stop = () => void anvil.stop().then(() => process.exit(0));
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    try {
      await deployAndMaybeSeed(anvil.rpcUrl, values.seed, values.out);
    } catch (error) {
      await anvil.stop();
      throw error;
    }
    console.log("running; Ctrl-C stops anvil");
    return;
  }
  throw new Error(`unknown command ${command}\n${USAGE}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
