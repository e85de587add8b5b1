import type { OpenApiDocument } from "./document";

/**
 * The /docs page: Scalar's interactive reference over the document we serve. Every asset comes from this
 * process (the reference UI is the standalone bundle of the exact @scalar/api-reference version pinned in
 * package.json, built into dist/static under a content-hashed name), so the page works offline and loads
 * nothing from a third party (no CDN, no web fonts). No inline script: the UI starts from a script file of
 * ours, so the page's Content-Security-Policy allows scripts of its own origin only (DOCS_CSP). The page
 * also carries a plain listing of every operation rendered from the same document, visible until the UI
 * has started (or without JavaScript).
 */

/** Where the page's scripts are: the hashed asset paths (api/openapi/docsRoutes.ts), null when not built. */
export type DocsScripts = { scalar: string; init: string } | null;

/**
 * Only this origin: scripts and connections (the UI fetches the document and, when a reader tries a route,
 * the route) stay on it. Styles also allow inline: Scalar's Vue components set style attributes and inject
 * their stylesheet at run time; that admits no other origin. No framing, no plugins, no <base> rewrites.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export const htmlEscape = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

function listing(doc: OpenApiDocument): string {
  const rows = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => {
      const verb = op["x-user-facing-verb"];
      return (
        `<tr><td><code>${method.toUpperCase()} ${htmlEscape(path)}</code></td><td>${htmlEscape(op.summary as string)}</td>` +
        `<td>${verb ? htmlEscape(String(verb)) : ""}</td><td><code>${htmlEscape(String(op["x-mcp-tool"] ?? ""))}</code></td></tr>`
      );
    }),
  );
  return `<table><thead><tr><th>Route</th><th>What it does</th><th>Verb to use with users</th><th>MCP tool</th></tr></thead>
<tbody>${rows.join("\n")}</tbody></table>`;
}

export function docsPage(doc: OpenApiDocument, specUrl: string, scripts: DocsScripts): string {
  const title = htmlEscape(String(doc.info.title));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 0; }
  #fallback { max-width: 70rem; margin: 2rem auto; padding: 0 1rem; }
  table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #ddd; padding: .4rem; text-align: left; }
</style>
</head>
<body>
<div id="app"></div>
<div id="fallback">
<h1>${title}</h1>
<p>OpenAPI 3.1 document: <a href="${htmlEscape(specUrl)}">${htmlEscape(specUrl)}</a>. MCP endpoint: <code>POST /api/mcp</code> (Streamable HTTP).
The interactive reference starts below; without JavaScript, this listing is the same document.</p>
${listing(doc)}
</div>
${
  scripts
    ? `<script src="${htmlEscape(scripts.scalar)}"></script>
<script src="${htmlEscape(scripts.init)}" data-spec-url="${htmlEscape(specUrl)}"></script>`
    : ""
}
</body>
</html>`;
}
