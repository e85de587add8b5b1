import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startAnvil } from "../../devnet/anvil";
import { REPO_ROOT } from "../support/ponder";

// anvil moves the states of blocks older than a few hundred to disk, by default under ~/.foundry/anvil/tmp, and never
// removes them (1.3 MB a block: 10,000 blocks left 4.6 GB there). devnet/anvil.ts gives each anvil a folder of its own
// and removes it when that anvil exits: on stop(), and when the process that started it exits without stopping it.

const FOUNDRY_TMP = path.join(os.homedir(), ".foundry", "anvil", "tmp");
const foundryFolders = () => (existsSync(FOUNDRY_TMP) ? readdirSync(FOUNDRY_TMP) : []);
const filesUnder = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce(
    (n, e) => n + (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : 1),
    0,
  );

async function rpc(url: string, method: string, params: unknown[]) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result?: unknown; error?: { message: string } }) ?? {};
}

describe("anvil's states on disk", () => {
  it("are kept in the anvil's own folder, read back for old blocks, and removed on stop()", async () => {
    const before = foundryFolders();
    const anvil = await startAnvil();
    try {
      expect(anvil.statesDir.startsWith(os.tmpdir())).toBe(true);
      for (let i = 0; i < 7; i++) await rpc(anvil.rpcUrl, "anvil_mine", ["0x64"]);
      // 700 blocks: the oldest states are on disk now, in this anvil's folder and nowhere else.
      expect(filesUnder(anvil.statesDir)).toBeGreaterThan(0);
      expect(foundryFolders()).toEqual(before);
      // A state moved to disk still answers (historical reads as on an archive node, ~3,900 blocks back).
      const old = await rpc(anvil.rpcUrl, "eth_getBalance", ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x5"]);
      expect(old.error).toBeUndefined();
      expect(BigInt(old.result as string)).toBe(10_000n * 10n ** 18n);
    } finally {
      await anvil.stop();
    }
    expect(existsSync(anvil.statesDir)).toBe(false);
  }, 60_000);

  it("are removed when the process that started anvil exits without stopping it", () => {
    const script = `
      import { startAnvil } from "./devnet/anvil.ts";
      const anvil = await startAnvil();
      for (let i = 0; i < 5; i++) {
        await fetch(anvil.rpcUrl, { method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_mine", params: ["0x64"] }) });
      }
      console.log(JSON.stringify({ statesDir: anvil.statesDir }));
      process.exit(3);
    `;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      timeout: 45_000,
    });
    expect(run.status, run.stderr).toBe(3);
    const { statesDir } = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as { statesDir: string };
    expect(statesDir.startsWith(os.tmpdir())).toBe(true);
    expect(existsSync(statesDir)).toBe(false);
  }, 60_000);
});
