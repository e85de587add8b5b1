/**
 * The relative links of a Markdown file and the anchors its headings make, as GitHub renders them, so a test
 * can check that every link of the README and docs/ lands on a file (and heading) that exists.
 */

export type MarkdownLink = { line: number; target: string; path: string; anchor: string | null };

/** Inline links and images `[text](target)` outside code; absolute URLs (scheme:) and mailto are left out. */
export function relativeLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  let fenced = false;
  markdown.split("\n").forEach((text, i) => {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    if (fenced) return;
    const prose = text.replace(/`[^`]*`/g, "``");
    for (const m of prose.matchAll(/\]\(([^()\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf("#");
      links.push({
        line: i + 1,
        target,
        path: hash === -1 ? target : target.slice(0, hash),
        anchor: hash === -1 ? null : decodeURIComponent(target.slice(hash + 1)),
      });
    }
  });
  return links;
}

/** GitHub's heading id: lower case, punctuation dropped (letters, digits, `_`, `-` and spaces kept), spaces → `-`. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor the file's headings make; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const text of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    const m = !fenced && text.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!m) continue;
    const slug = headingSlug(m[1]!);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}
