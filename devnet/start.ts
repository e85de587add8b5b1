/**
 * `npm start`: the whole local stack with no configuration — anvil, deploy, seed, then `ponder start`
 * indexing into PGlite, with the API served on $HOST:$PORT (127.0.0.1:42069) by the API process's own server
 * (api/server/server.ts, the code `npm run serve:api` runs) inside Ponder's process (src/api/index.ts,
 * API_PORT); Ponder's own HTTP server listens on a free internal port that is not advertised. Ctrl-C /
 * SIGTERM stops everything this script started, so a second `npm start` works after the first.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startAnvil } from "./anvil";
import { deployDevnet, writeLocalManifest } from "./deploy";
import { SEED_CHAIN_ADVANCE_SECONDS, seedDevnet } from "./seed";
import { startSettings, urlHost } from "./startSettings";

const root = path.resolve(import.meta.dirname, "..");
/** Ponder's own HTTP server, internal and not advertised, stays on loopback whatever HOST says. */
const loopback = "127.0.0.1";
/** The webhook routes' bearer on the local stack (OPERATOR_TOKEN), printed at start; a set variable wins. */
const operatorToken = process.env.OPERATOR_TOKEN || "local-operator-token";

let ponder: ChildProcess | null = null;
let anvil: Awaited<ReturnType<typeof startAnvil>> | null = null;
let stopping = false;
/**
 * This run's folder (gitignored, named by pid, removed at exit): its PGlite database and its devnet's manifest. The
 * manifest is not written over the tracked deployments/local.json, which left the checkout modified (every later
 * build stamped `-dirty`) and was shared by two runs from one checkout.
 */
const runDir = path.join(root, ".ponder", "local", `run-${process.pid}`);
const pgliteDir = path.join(runDir, "pglite");
const manifestFile = path.join(runDir, "local.json");

async function shutdown(code: number) {
  if (stopping) return;
  stopping = true;
  console.log("\nstopping local stack…");
  if (ponder && ponder.exitCode === null) {
    const exited = new Promise((r) => ponder?.once("exit", r));
    ponder.kill("SIGTERM");
    const timer = setTimeout(() => ponder?.kill("SIGKILL"), 8_000);
    await exited;
    clearTimeout(timer);
  }
  await anvil?.stop();
  rmSync(runDir, { recursive: true, force: true });
  process.exit(code);
}

process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

/** Fails at once, naming the variable, when a port is taken (another `npm start` from this checkout, say). */
function assertPortFree(port: number, host: string, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `${variable}=${port} is in use on ${host}: set ${variable} to a free port`
            : `HOST=${host} cannot be listened on (${error.code ?? error.message}): set HOST to an address of this machine`,
        ),
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** Base's block time. */
const BASE_BLOCK_SECONDS = 2;

async function main() {
  const { port, anvilPort, host } = startSettings();
  await assertPortFree(port, host, "PORT");
  await assertPortFree(anvilPort, loopback, "ANVIL_PORT");
  // As on Base, the chain's clock is the wall clock and a block comes every 2 s, so an index answer's
  // `indexLagSeconds` and `stale` mean what they say: anvil starts as far in the past as the seed moves time ahead,
  // and mines a block every 2 s beside each transaction's own (automine keeps the seed fast).
  const genesisTimestamp = Math.floor(Date.now() / 1000) - SEED_CHAIN_ADVANCE_SECONDS;
  anvil = await startAnvil({ port: anvilPort, genesisTimestamp, blockTime: BASE_BLOCK_SECONDS, mixedMining: true });
  console.log(`anvil      ${anvil.rpcUrl} (chain id 31337)`);
  const { manifest } = await deployDevnet({ rpcUrl: anvil.rpcUrl });
  // A fresh anvil reuses chain id and addresses, so Ponder's sync cache from an earlier run would
  // be stale: every run starts on an empty folder of its own (named by pid), so a second run from the
  // same checkout (e.g. `npm test`'s local-stack test beside a developer's `npm start`) never deletes
  // the database under the first, nor writes over its manifest; shutdown removes it.
  rmSync(runDir, { recursive: true, force: true });
  writeLocalManifest(manifest, manifestFile);
  console.log(`deployed   ${manifestFile}`);
  await seedDevnet({ rpcUrl: anvil.rpcUrl, manifest });
  console.log("seeded     devnet activity");

  // ponder's package exports hide its bin: resolve the entry (dist/esm/index.js) and step to bin/.
  const ponderBin = path.join(path.dirname(fileURLToPath(import.meta.resolve("ponder"))), "bin", "ponder.js");
  const ponderPort = await freePort();
  ponder = spawn(
    process.execPath,
    [ponderBin, "start", "--schema", "local", "--port", String(ponderPort), "--hostname", loopback],
    {
      cwd: root,
      stdio: "inherit",
      env: {
        ...process.env,
        NETWORK: "local",
        MANIFEST_FILE: manifestFile,
        RPC_URL: anvil.rpcUrl,
        API_PORT: String(port),
        HOST: host,
        PORT: undefined, // Ponder reads PORT before --port; its own server stays on the internal port
        PGLITE_DIR: pgliteDir,
        PONDER_TELEMETRY_DISABLED: "true",
        DATABASE_URL: "",
        DATABASE_PRIVATE_URL: "",
        OPERATOR_TOKEN: operatorToken,
        // Receivers on this machine (a bot under development) are what local webhooks are for.
        WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE || "loopback",
      },
    },
  );
  ponder.once("exit", (code) => {
    if (!stopping) {
      console.error(`ponder exited (${code}); stopping`);
      void shutdown(code ?? 1);
    }
  });
  console.log(`api        http://${urlHost(host)}:${port}  (/health, /ready, /api/supply/total, /api/mcp/v1/…)`);
  console.log(`rpc        ${anvil.rpcUrl}`);
  console.log(
    `webhooks   POST http://${urlHost(host)}:${port}/api/index/v1/webhooks  (Authorization: Bearer ${operatorToken})`,
  );
}

main().catch(async (error) => {
  console.error(error instanceof Error ? error.message : error);
  await shutdown(1);
});
