/**
 * Citations of a document (and of a section of it) in source files, so a test can check that each names a file of
 * the repository and a heading that file has.
 *
 * The grammar, one citation per match (anything else that mentions a `.md` file is a bare mention):
 *
 *   citation = path [ "#" anchor | " " quoted | ", " quoted | " " sections ]
 *   path     = [ dir "/" ]… name ".md"     with a "/": from the repository root; a bare name: docs/<name>, else <name>
 *   anchor   = GitHub's id of a heading of that file (`headingSlug`, repeats get -1, -2, …)
 *   quoted   = '"' the text of a heading of that file, backticks dropped '"'
 *   sections = "§" n [ ("–" | "-") m ] { ", §" n [ ("–" | "-") m ] }    each number (and each of a range) a heading
 *              that begins "§n " (as docs/protocol.md numbers its sections); a "§" not followed by a number is an error
 *
 * A path inside a URL (`https://…/x.md`) is not a citation; `x.md: "…"` (a colon before a quote) quotes the
 * document's words, not a heading, and is a bare mention.
 */

export type DocCitation = {
  /** 1-based line of the citing file. */
  line: number;
  /** The citation as written (path and section), for the report. */
  text: string;
  /** The path as written. */
  path: string;
  section:
    | { kind: "none" }
    | { kind: "anchor"; anchor: string }
    | { kind: "title"; title: string }
    | { kind: "numbers"; numbers: string[] }
    | { kind: "malformed"; reason: string };
};

const CITATION =
  /(?<![\w./:-])((?:[\w.-]+\/)*[\w-][\w.-]*\.md)(?![\w])(#[A-Za-z0-9_\-%]*|,? "[^"\n]*"|(?: §[^\s,;)]*(?:,\s*§[^\s,;)]*)*))?/g;
const NUMBER = /^(\d+(?:\.\d+)*)(?:[–-](\d+))?$/;

/** Every citation of a `.md` file in a source text, in order. */
export function docCitations(source: string): DocCitation[] {
  const citations: DocCitation[] = [];
  source.split("\n").forEach((text, i) => {
    for (const m of text.matchAll(CITATION)) {
      const path = m[1]!;
      const tail = m[2] ?? "";
      citations.push({ line: i + 1, text: (path + tail).trim(), path, section: section(tail) });
    }
  });
  return citations;
}

function section(tail: string): DocCitation["section"] {
  if (tail === "") return { kind: "none" };
  if (tail.startsWith("#")) return { kind: "anchor", anchor: decodeURIComponent(tail.slice(1)) };
  if (/^,? "/.test(tail)) return { kind: "title", title: tail.slice(tail.indexOf('"') + 1, -1) };
  const numbers: string[] = [];
  for (const part of tail.split(/,\s*/)) {
    const written = part
      .trim()
      .replace(/^§/, "")
      .replace(/[.:'"]+$/, "");
    const m = written.match(NUMBER);
    if (!m) return { kind: "malformed", reason: `"§${written}" is not a section number (§n, §n–m, §n, §m)` };
    if (m[2] === undefined) numbers.push(m[1]!);
    else for (let n = Number(m[1]); n <= Number(m[2]); n++) numbers.push(String(n));
  }
  return { kind: "numbers", numbers };
}

/** The text of each heading of a Markdown file (backticks dropped), outside fenced code. */
export function headingTitles(markdown: string): string[] {
  const titles: string[] = [];
  let fenced = false;
  for (const text of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    const m = !fenced && text.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (m) titles.push(m[1]!.replace(/`/g, ""));
  }
  return titles;
}
