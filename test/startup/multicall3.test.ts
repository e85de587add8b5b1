/**
 * Multicall3 is checked at start-up (api/startup/multicall3.ts, MULTICALL3): the check itself against anvil (the
 * canonical build found by its code hash, another build found by the probe, no contract, a contract that is not
 * Multicall3, a node that does not answer), then the API process as operators run it (api/server/main.ts) on a
 * devnet whose Multicall3 is removed: under `auto` state reads still work (deployless), under `canonical` the
 * process refuses to start with one line naming MULTICALL3; and a malformed upstream answer counts as an error in
 * /api/metrics, not as an ok call.
 */
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { type Address, type Hex, keccak256 } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MULTICALL3_ADDRESS } from "../../api/chain/multicall";
import { MULTICALL3_CREATION_CODE, MULTICALL3_RUNTIME_CODE_HASH } from "../../api/chain/multicall3Bytecode";
import { createRpcClient } from "../../api/chain/rpc";
import { ConfigError } from "../../api/config";
import { createLogger, type Logger } from "../../api/observability/logger";
import { checkMulticall3 } from "../../api/startup/multicall3";
import { freePort } from "../../devnet/anvil";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { REPO_ROOT, writeManifest } from "../support/ponder";
import { spawnService } from "../support/replica";
import { type RpcProxy, startRpcProxy } from "../support/rpcProxy";

let devnet: TestDevnet;
let proxy: RpcProxy;
let manifestFile: string;

beforeAll(async () => {
  devnet = await startDevnet();
  proxy = await startRpcProxy({ upstream: devnet.rpcUrl });
  manifestFile = writeManifest(devnet.deployment.manifest);
});
afterAll(async () => {
  await proxy?.stop();
  await devnet?.stop();
  if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
});

const anvilRpc = async (method: string, params: unknown[]) => {
  const res = await fetch(devnet.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
};
const setCode = (address: Address, code: Hex) => anvilRpc("anvil_setCode", [address, code]);
const runtime = async () => (await anvilRpc("eth_call", [{ data: MULTICALL3_CREATION_CODE }, "latest"])) as Hex;

function logged(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger({ level: "info", write: (l) => lines.push(JSON.parse(l)) }) };
}
const rpc = () => createRpcClient({ url: proxy.url, timeoutMs: 1_000 });

describe("checkMulticall3", () => {
  it("the canonical build at the canonical address: used, found by its code hash", async () => {
    await setCode(MULTICALL3_ADDRESS, await runtime());
    const { logger, lines } = logged();
    for (const setting of ["auto", "canonical"] as const) {
      expect(await checkMulticall3({ rpc: rpc(), setting, logger })).toBe(MULTICALL3_ADDRESS);
    }
    expect(lines.at(-1)).toMatchObject({ msg: "multicall3: using the contract", verifiedBy: "code hash" });
  });

  it("another build of Multicall3 at an address of MULTICALL3's: found by the probe", async () => {
    const code = await runtime();
    // The CBOR metadata's last bytes are never executed: the same contract, another hash.
    const other = `${code.slice(0, -12)}${"ab".repeat(4)}0033` as Hex;
    expect(keccak256(other)).not.toBe(MULTICALL3_RUNTIME_CODE_HASH);
    const at = "0x000000000000000000000000000000000000bEEF";
    await setCode(at, other);
    const { logger, lines } = logged();
    expect(await checkMulticall3({ rpc: rpc(), setting: at, logger })).toBe(at);
    expect(lines.at(-1)).toMatchObject({ verifiedBy: "probe", address: "0x0000…bEEF" });
  });

  it("no contract: auto runs deployless and says why; canonical refuses, naming MULTICALL3", async () => {
    await setCode(MULTICALL3_ADDRESS, "0x");
    const { logger, lines } = logged();
    expect(await checkMulticall3({ rpc: rpc(), setting: "auto", logger })).toBe("deployless");
    // Logs shorten every address (api/observability/logger.ts); the refusal below names it in full.
    expect(lines.at(-1)).toMatchObject({ level: "warn", reason: "no contract at 0xcA11…CA11" });
    await expect(checkMulticall3({ rpc: rpc(), setting: "canonical", logger })).rejects.toThrow(
      new ConfigError(
        `invalid configuration: MULTICALL3=canonical requires Multicall3 at ${MULTICALL3_ADDRESS} on RPC_URL at ` +
          `${new URL(proxy.url).origin}, but no contract at ${MULTICALL3_ADDRESS}; set MULTICALL3=auto ` +
          "(deployless when absent) or deployless",
      ),
    );
    // A URL from Ponder's per-chain variable is named by it (config.rpcUrlVariable).
    const variable = "PONDER_RPC_URL_8453";
    await expect(checkMulticall3({ rpc: rpc(), setting: "canonical", logger, variable })).rejects.toThrow(
      `requires Multicall3 at ${MULTICALL3_ADDRESS} on PONDER_RPC_URL_8453 at ${new URL(proxy.url).origin}`,
    );
  });

  it("a contract that is not Multicall3 at MULTICALL3's address: refused", async () => {
    const at = "0x000000000000000000000000000000000000cafe";
    await setCode(at, "0x60006000fd"); // revert(0, 0) whatever is asked
    const { logger } = logged();
    await expect(checkMulticall3({ rpc: rpc(), setting: at, logger })).rejects.toThrow(
      /MULTICALL3=0x0{36}cafe requires Multicall3 .* but the contract at 0x0{36}cafe does not answer as Multicall3/,
    );
  });

  it("a node that does not answer: auto runs deployless, canonical refuses; deployless never asks", async () => {
    proxy.setFault({ kind: "down" });
    try {
      const { logger, lines } = logged();
      const fast = { attempts: 2, retryDelayMs: 10 };
      expect(await checkMulticall3({ rpc: rpc(), setting: "auto", logger, ...fast })).toBe("deployless");
      expect(String(lines.at(-1)?.reason)).toMatch(/^its code could not be read \(RPC eth_getCode: node unreachable\)/);
      await expect(checkMulticall3({ rpc: rpc(), setting: "canonical", logger, ...fast })).rejects.toThrow(
        /MULTICALL3=canonical .* its code could not be read/,
      );
      proxy.reset();
      expect(await checkMulticall3({ rpc: rpc(), setting: "deployless", logger })).toBe("deployless");
      expect(proxy.count()).toBe(0);
    } finally {
      proxy.setFault(null);
    }
  });
});

describe("the API process on a node without Multicall3", () => {
  const state = `/api/mcp/v1/state/${DEVNET_ACCOUNTS.alice.address}`;
  const api = (env: Record<string, string>) =>
    spawnService({
      command: "api",
      rpcUrl: proxy.url,
      manifestFile,
      schema: "none",
      env: { LOG_LEVEL: "info", ...env },
    });
  const rpcCalls = async (base: string, outcome: string) => {
    const text = await (await fetch(`${base}/api/metrics`)).text();
    const line = text
      .split("\n")
      .find((l) => l.startsWith(`api_rpc_calls_total{method="eth_call",outcome="${outcome}"}`));
    return line ? Number(line.split(" ").at(-1)) : 0;
  };

  it("a malformed upstream answer is counted as an error, not as an ok call", async () => {
    await setCode(MULTICALL3_ADDRESS, await runtime());
    const p = await api({});
    try {
      await p.waitFor200("/health", 30_000);
      expect((await fetch(`${p.url}${state}`)).status).toBe(200);
      await setCode(MULTICALL3_ADDRESS, "0x"); // gone after the start-up check: every answer is now "0x"
      const ok = await rpcCalls(p.url, "ok");
      const res = await fetch(`${p.url}${state}`);
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ error: "STATE_READ_FAILED", detail: { upstream: "malformed" } });
      expect(await rpcCalls(p.url, "invalid")).toBe(1);
      expect(await rpcCalls(p.url, "ok")).toBe(ok);
    } finally {
      await p.stop("SIGKILL");
    }
  });

  it("MULTICALL3 unset (auto): starts, says why it runs deployless, and state reads work", async () => {
    await setCode(MULTICALL3_ADDRESS, "0x");
    const p = await api({});
    try {
      await p.waitFor200("/health", 30_000);
      proxy.reset();
      const res = await fetch(`${p.url}${state}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, source: "rpc" });
      // Deployless: the call carries Multicall3's creation code instead of going to its address.
      const tx = proxy.calls.find((c) => c.method === "eth_call")?.params[0] as { to?: string; data: string };
      expect(tx.to).toBeUndefined();
      expect(tx.data).toContain(MULTICALL3_CREATION_CODE.slice(2, 200));
      expect(p.log()).toMatch(
        /"msg":"multicall3: not found; state reads run it deployless[^"]*".*"reason":"no contract at/,
      );
    } finally {
      await p.stop("SIGKILL");
    }
  });

  it("MULTICALL3=canonical: exit 1 and one line naming MULTICALL3", async () => {
    await setCode(MULTICALL3_ADDRESS, "0x");
    const run = spawnSync(process.execPath, ["--import", "tsx", "api/server/main.ts"], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NETWORK: "local",
        MANIFEST_FILE: manifestFile,
        // Straight to anvil: spawnSync blocks this process, and with it the proxy.
        RPC_URL: devnet.rpcUrl,
        MULTICALL3: "canonical",
        PORT: String(await freePort()),
        HOST: "127.0.0.1",
        DATABASE_URL: "",
        LOG_LEVEL: "error",
      },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^invalid configuration: MULTICALL3=canonical requires Multicall3 at 0xcA11.*no contract/),
    ]);
    expect(run.stdout).not.toContain('"listening"');
  });
});
