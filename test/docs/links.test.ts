import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { headingAnchors, headingSlug, relativeLinks } from "../support/markdownLinks";

const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");

// The README is the front door (at most 300 lines; the reference lives in docs/), and no link of it or of
// docs/ may lead nowhere: every relative link names a file that exists, and a #anchor into Markdown a heading.

const README_MAX_LINES = 300;
const documents = [
  "README.md",
  ...readdirSync(path.join(REPO_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

describe("README.md", () => {
  it(`has at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8").trimEnd().split("\n").length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("links every document in docs/", () => {
    const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    const linked = new Set(relativeLinks(readme).map((l) => l.path));
    expect(documents.filter((d) => d.startsWith("docs/") && !linked.has(d))).toEqual([]);
  });
});

describe.each(documents)("%s", (file) => {
  it("has only relative links that resolve (file, and heading when there is an anchor)", () => {
    const text = readFileSync(path.join(REPO_ROOT, file), "utf8");
    const broken: string[] = [];
    for (const link of relativeLinks(text)) {
      const target =
        link.path === "" ? path.join(REPO_ROOT, file) : path.resolve(REPO_ROOT, path.dirname(file), link.path);
      if (!target.startsWith(REPO_ROOT) || !existsSync(target)) {
        broken.push(`${file}:${link.line} ${link.target} (no such file)`);
        continue;
      }
      if (link.anchor !== null && target.endsWith(".md") && statSync(target).isFile()) {
        if (!headingAnchors(readFileSync(target, "utf8")).has(link.anchor)) {
          broken.push(`${file}:${link.line} ${link.target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});

describe("the link reader", () => {
  it("finds relative links outside code, and anchors as GitHub makes them", () => {
    const md = [
      "See [a](docs/a.md#some-heading) and [`b`](b.md), not [web](https://x.org/y) nor `[c](c.md)`.",
      "```",
      "[d](d.md)",
      "```",
      "[e](#local)",
    ].join("\n");
    expect(relativeLinks(md).map((l) => [l.path, l.anchor])).toEqual([
      ["docs/a.md", "some-heading"],
      ["b.md", null],
      ["", "local"],
    ]);
    expect(headingSlug("Preparation API v1 — prepare")).toBe("preparation-api-v1--prepare");
    expect(headingSlug("What `npm start` runs, and why")).toBe("what-npm-start-runs-and-why");
    expect([...headingAnchors("# A\n## A\n```\n# not a heading\n```\n")]).toEqual(["a", "a-1"]);
  });
});
