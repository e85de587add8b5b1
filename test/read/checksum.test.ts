import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { getAddress } from "viem";
import { describe, expect, it } from "vitest";
import { checksumMemo } from "../../api/read/checksum";

const address = (i: number) => `0x${(i * 2654435761).toString(16).padStart(40, "0").slice(-40)}`;

describe("checksumMemo", () => {
  it("answers what getAddress answers, for addresses seen, forgotten and seen again", () => {
    const shown = checksumMemo(8);
    for (const round of [0, 1]) {
      for (let i = 0; i < 40; i++) {
        const a = address(i + round * 5);
        expect(shown(a)).toBe(getAddress(a));
        expect(shown(a)).toBe(getAddress(a)); // a hit
      }
    }
    // Any case in, EIP-55 out.
    const mixed = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    expect(shown(mixed.toLowerCase())).toBe(mixed);
    expect(shown(mixed.toUpperCase().replace("0X", "0x"))).toBe(mixed);
  });

  it("refuses what is not an address, and remembers nothing for it", () => {
    const shown = checksumMemo(8);
    expect(() => shown("0x1234")).toThrow();
    expect(() => shown("0x1234")).toThrow();
  });

  it("keeps no text its keys were cut from (a ranking's 2.5 MB text is not held by one address of it)", () => {
    // In a process of its own with the collector exposed: ten texts of 60,000 addresses each, one address cut from
    // each remembered, the texts dropped. A Map keeping the cut addresses themselves is the control: V8 keeps a
    // substring as a slice of its text, so the control holds ~25 MB where the memo holds a few kB.
    const dir = mkdtempSync(path.join(tmpdir(), "checksum-"));
    const script = path.join(dir, "retained.ts");
    writeFileSync(
      script,
      `import { checksumMemo } from ${JSON.stringify(path.resolve(import.meta.dirname, "../../api/read/checksum.ts"))};
const gc = (globalThis as { gc?: () => void }).gc!;
const text = (k: number) => Array.from({ length: 60_000 }, (_, i) => "0x" + (i * 2654435761 + k).toString(16).padStart(40, "0").slice(-40)).join(" ");
// (The texts are made in a frame of their own, gone when the collector runs: the interpreter's registers keep a dead
// variable's value while its frame lives.)
const fill = (keep: (address: string) => void) => {
  for (let k = 0; k < 10; k++) { const t = text(k); keep(t.slice(43 * 7, 43 * 7 + 42)); }
  // The last subject a regular expression matched is kept by V8 until the next match (getAddress tests its input).
  /y/.test("y");
};
const grown = (keep: (address: string) => void) => {
  gc();
  const before = process.memoryUsage().heapUsed;
  fill(keep);
  gc();
  return process.memoryUsage().heapUsed - before;
};
const memo = checksumMemo(100);
const control = new Map<string, number>();
const memoGrew = grown((a) => void memo(a));
const cut: string[] = [];
const controlGrew = grown((a) => { cut.push(a); control.set(a, 1); });
console.log(JSON.stringify({ memoGrew, controlGrew, kept: cut.length + control.size }));`,
    );
    const run = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", script], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      encoding: "utf8",
      timeout: 60_000,
    });
    rmSync(dir, { recursive: true, force: true });
    expect(run.status, run.stderr).toBe(0);
    const { memoGrew, controlGrew } = JSON.parse(run.stdout.trim().split("\n").pop()!) as Record<string, number>;
    expect(controlGrew).toBeGreaterThan(15_000_000);
    expect(memoGrew).toBeLessThan(2_000_000);
  }, 60_000);
});
