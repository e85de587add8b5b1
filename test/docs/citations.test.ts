import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type DocCitation, docCitations, headingTitles } from "../support/docCitations";
import { headingAnchors } from "../support/markdownLinks";

const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");

// Code and tests cite the documents that hold their facts: `docs/api.md#errors-rate-limits-deadlines`,
// `docs/api.md "GraphQL (/graphql)"`, `protocol.md §1, §8`, or a document alone (`design.md`). Each citation must
// name a file of this repository and, when it names a section, a heading of that file; test/support/docCitations.ts
// holds the grammar. A failure names the citing file and line, the citation, and what is missing.

const SOURCE_ROOTS = ["api", "src", "indexer", "devnet", "scripts", "test", "bench"];
const ROOT_FILES = [
  "ponder.config.ts",
  "ponder.schema.ts",
  "vite.config.ts",
  "vitest.config.ts",
  "compose.yaml",
  "Dockerfile",
  ".env.example",
];
const SOURCE_FILE = /\.(ts|mts|cts|js|mjs|cjs|sol|sh|yaml)$/;
const SKIPPED_DIRS = new Set(["node_modules", "out", "dist", "generated", "coverage"]);
// Files whose `.md` strings are examples of the grammar, not citations.
const FIXTURES = new Set(["test/docs/links.test.ts", "test/docs/citations.test.ts", "test/support/docCitations.ts"]);

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith(".") && !entry.name.startsWith("_")) {
        files.push(...sourceFiles(rel));
      }
    } else if (SOURCE_FILE.test(entry.name) && !FIXTURES.has(rel)) {
      files.push(rel);
    }
  }
  return files;
}

/** The repository file a citation names: a path with a directory from the root; a bare name in docs/, else at the root. */
function resolveDocument(cited: string): string | null {
  const candidates = cited.includes("/") ? [cited] : [`docs/${cited}`, cited];
  return (
    candidates.find((c) => existsSync(path.join(REPO_ROOT, c)) && statSync(path.join(REPO_ROOT, c)).isFile()) ?? null
  );
}

/** Why the citation does not resolve, or null when it does. */
function brokenBecause(citation: DocCitation): string | null {
  const document = resolveDocument(citation.path);
  if (document === null) return "no such file in the repository";
  const { section } = citation;
  if (section.kind === "none") return null;
  if (section.kind === "malformed") return section.reason;
  const markdown = readFileSync(path.join(REPO_ROOT, document), "utf8");
  if (section.kind === "anchor") {
    return headingAnchors(markdown).has(section.anchor)
      ? null
      : `${document} has no heading with the anchor #${section.anchor}`;
  }
  const titles = headingTitles(markdown);
  if (section.kind === "title") {
    return titles.includes(section.title) ? null : `${document} has no heading "${section.title}"`;
  }
  const missing = section.numbers.filter((n) => !titles.some((t) => t.startsWith(`§${n} `) || t === `§${n}`));
  return missing.length === 0 ? null : `${document} has no heading ${missing.map((n) => `§${n}`).join(", ")}`;
}

const files = [...SOURCE_ROOTS.flatMap(sourceFiles), ...ROOT_FILES.filter((f) => existsSync(path.join(REPO_ROOT, f)))];
const citations = files.flatMap((file) =>
  docCitations(readFileSync(path.join(REPO_ROOT, file), "utf8")).map((c) => ({ file, ...c })),
);

describe("citations of documents in the source", () => {
  it("are found (the scan reads the source folders)", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(citations.filter((c) => c.section.kind !== "none").length).toBeGreaterThan(50);
  });

  it("each name a file of the repository, and a heading of it when they name a section", () => {
    const broken = citations.flatMap((c) => {
      const why = brokenBecause(c);
      return why === null ? [] : [`${c.file}:${c.line}: ${c.text} — ${why}`];
    });
    expect(broken, `broken citations:\n${broken.join("\n")}`).toEqual([]);
  });
});

describe("the citation reader", () => {
  it("reads each form of the grammar, and leaves URLs and quotations of a document's words alone", () => {
    const source = [
      '// (docs/api.md#errors-rate-limits-deadlines) and docs/api.md "GraphQL (/graphql)"',
      "/* protocol.md §1, §8). Also protocol.md §1–2 and spec §4.3 */",
      '// design.md: "Redis when REDIS_URL is set", see https://example.org/x/README.md',
      '// design.md § Rate limit; (docs/operations.md, "Drain"); protocol.md\'s; "protocol.md §4", () =>',
    ].join("\n");
    expect(docCitations(source).map((c) => [c.line, c.path, c.section])).toEqual([
      [1, "docs/api.md", { kind: "anchor", anchor: "errors-rate-limits-deadlines" }],
      [1, "docs/api.md", { kind: "title", title: "GraphQL (/graphql)" }],
      [2, "protocol.md", { kind: "numbers", numbers: ["1", "8"] }],
      [2, "protocol.md", { kind: "numbers", numbers: ["1", "2"] }],
      [3, "design.md", { kind: "none" }],
      [4, "design.md", { kind: "malformed", reason: '"§" is not a section number (§n, §n–m, §n, §m)' }],
      [4, "docs/operations.md", { kind: "title", title: "Drain" }],
      [4, "protocol.md", { kind: "none" }],
      [4, "protocol.md", { kind: "numbers", numbers: ["4"] }],
    ]);
  });

  it("reports a citation of a section that does not exist, and one of a file that does not", () => {
    const at = (text: string) => ({ file: "x.ts", ...docCitations(text)[0]! });
    expect(brokenBecause(at('design.md "No such section"'))).toBe('docs/design.md has no heading "No such section"');
    expect(brokenBecause(at("docs/api.md#rate-limit"))).toBe("docs/api.md has no heading with the anchor #rate-limit");
    expect(brokenBecause(at("protocol.md §2, §99"))).toBe("docs/protocol.md has no heading §99");
    expect(brokenBecause(at("docs/nowhere.md"))).toBe("no such file in the repository");
    expect(brokenBecause(at("protocol.md §3"))).toBeNull();
    expect(brokenBecause(at("README.md"))).toBeNull();
  });
});
