/**
 * `npm run bench`: runs every benchmark in bench/ one after another (each in its own process, so
 * none disturbs another's measurements) and prints each one's figure — its last output line.
 * `npm run bench -- supply` runs only the files whose name contains "supply".
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { buildOnce } from "../test/support/build";

const dir = import.meta.dirname;
const filter = process.argv[2] ?? "";
// Modules that other benches import (fixtures, servers) have no `-` in their names by convention.
const benches = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && f.includes("-") && f.includes(filter))
  .sort();

// The benches that spawn the API process run the built bundle, as production does.
buildOnce();
const figures: string[] = [];
let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file}`);
  const res = spawnSync(process.execPath, ["--import", "tsx", path.join(dir, file)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 10 * 60_000,
  });
  process.stdout.write(res.stdout ?? "");
  const last = (res.stdout ?? "").trim().split("\n").pop() ?? "";
  if (res.status !== 0) failed++;
  figures.push(`${file.padEnd(28)} ${res.status === 0 ? last : `FAILED (exit ${res.status ?? res.signal})`}`);
}
console.log(`\n=== figures\n${figures.join("\n")}`);
process.exit(failed > 0 ? 1 : 0);
