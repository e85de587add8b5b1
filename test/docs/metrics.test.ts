/**
 * docs/operations.md's metrics table (## Observability) is the API process's metrics, each once: every family
 * /api/metrics serves (createMetrics().render(), what api/http/probes.ts and the metrics listener answer) has exactly
 * one row, with its type; no row names a metric the process does not serve. prom-client's default process metrics
 * (`process_*`, `nodejs_*`) are one row of their own. The table once held `api_index_db_query_duration_seconds` three
 * times, in three versions, and left out a third of the families (the streams', the webhooks', the connections').
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../api/observability/metrics";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const HEADER = "| metric | type | labels | meaning |";
const DEFAULTS_ROW = "prom-client's defaults";
const DEFAULT_PREFIXES = /^(process|nodejs)_/;

type Row = { line: number; names: string[]; type: string };

/** The rows of the metrics table under `## Observability`: the metric names of each first cell, and its type. */
function tableRows(markdown: string): Row[] {
  const lines = markdown.split("\n");
  const section = lines.indexOf("## Observability");
  const header = lines.indexOf(HEADER, section);
  expect(section, "## Observability").toBeGreaterThan(-1);
  expect(header, `${HEADER} under ## Observability`).toBeGreaterThan(section);
  const rows: Row[] = [];
  for (let i = header + 2; i < lines.length && lines[i]!.startsWith("|"); i++) {
    const [first, type] = lines[i]!.slice(1).split(" | ", 2);
    const names = [...(first ?? "").matchAll(/`([a-z][a-z0-9_]*)`/g)].map((m) => m[1]!);
    rows.push({ line: i + 1, names, type: (type ?? "").trim() });
  }
  return rows;
}

/** Every family the process serves, with its type (# TYPE lines). */
async function servedFamilies(): Promise<Map<string, string>> {
  const text = await createMetrics().render();
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

describe("docs/operations.md's metrics table", () => {
  const rows = tableRows(readFileSync(path.join(ROOT, "docs", "operations.md"), "utf8"));
  const ours = rows.filter((r) => !r.names.some((n) => DEFAULT_PREFIXES.test(n)));

  it("names each metric in one row only, with its full name", () => {
    const seen = new Map<string, number>();
    const twice: string[] = [];
    for (const row of ours) {
      expect(row.names.length, `line ${row.line} names no metric`).toBeGreaterThan(0);
      for (const name of row.names) {
        if (seen.has(name)) twice.push(`${name} (lines ${seen.get(name)} and ${row.line})`);
        seen.set(name, row.line);
      }
    }
    expect(twice).toEqual([]);
  });

  it("lists every family the API process serves, with its type, and nothing it does not serve", async () => {
    const served = await servedFamilies();
    const listed = new Map(ours.flatMap((r) => r.names.map((n) => [n, r.type] as const)));
    const missing = [...served.keys()].filter((n) => !DEFAULT_PREFIXES.test(n) && !listed.has(n));
    const stale = [...listed.keys()].filter((n) => !served.has(n));
    expect({ missing, stale }).toEqual({ missing: [], stale: [] });
    const wrongType = [...listed].filter(([n, type]) => !type.startsWith(served.get(n)!));
    expect(wrongType).toEqual([]);
  });

  it("has one row for prom-client's default process metrics, naming only ones served", async () => {
    const served = await servedFamilies();
    const defaults = rows.filter((r) => r.names.some((n) => DEFAULT_PREFIXES.test(n)));
    expect(defaults).toHaveLength(1);
    expect(readFileSync(path.join(ROOT, "docs", "operations.md"), "utf8")).toContain(DEFAULTS_ROW);
    expect(defaults[0]!.names.filter((n) => !served.has(n))).toEqual([]);
  });
});
