import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { headingAnchors } from "../support/markdownLinks";

const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");
const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), "utf8");

// docs/benchmarks.md is a table of the current figures, one short cell each; the history of each figure lives in
// docs/benchmarks-log.md, one section per benchmark. A long line means a figure's history is growing in the table.

const MAX_LINE = 1_000;
// What `npm run bench` runs (bench/run.ts: a file with a `-` in its name), and the soak (`npm run bench:soak`).
const BENCHMARKS = [
  ...readdirSync(path.join(REPO_ROOT, "bench"))
    .filter((f) => f.endsWith(".ts") && f !== "run.ts" && f.includes("-"))
    .map((f) => f.slice(0, -".ts".length)),
  "soak",
].sort();

describe("docs/benchmarks.md", () => {
  it(`has no line over ${MAX_LINE.toLocaleString("en")} characters`, () => {
    const long = read("docs/benchmarks.md")
      .split("\n")
      .flatMap((line, i) => ([...line].length > MAX_LINE ? [`line ${i + 1}: ${[...line].length} characters`] : []));
    expect(long).toEqual([]);
  });

  it("has a row for every benchmark, its name linking to the benchmark's section of the log", () => {
    const rows = read("docs/benchmarks.md")
      .split("\n")
      .flatMap((line) => line.match(/^\| \[`([\w-]+)`\]\(benchmarks-log\.md#([\w-]+)\)/)?.slice(1, 3) ?? []);
    const named = new Set<string>();
    for (let i = 0; i < rows.length; i += 2) {
      expect(rows[i + 1], `the row of ${rows[i]} links to its own section`).toBe(rows[i]);
      named.add(rows[i]!);
    }
    expect([...named].sort()).toEqual(BENCHMARKS);
  });
});

describe("docs/benchmarks-log.md", () => {
  it("has a section for every benchmark", () => {
    const anchors = headingAnchors(read("docs/benchmarks-log.md"));
    expect(BENCHMARKS.filter((b) => !anchors.has(b))).toEqual([]);
  });
});
