import { DOCS_SCRIPT_PATH } from "../paths";
import type { OpenApiDocument } from "./document";

/**
 * The /docs page: Scalar's interactive reference over the document we serve. Every asset comes from this
 * process (the reference UI is the standalone bundle of the exact @scalar/api-reference version pinned in
 * package.json, served at SCALAR_SCRIPT), so the page works offline and loads nothing from a third party
 * (no CDN, no web fonts). The page also carries a plain listing of every operation rendered from the same
 * document, visible until the UI has started (or without JavaScript).
 */

/** Where this process serves the pinned Scalar bundle (api/openapi/docsRoutes.ts). */
export const SCALAR_SCRIPT = DOCS_SCRIPT_PATH;

export const htmlEscape = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

function listing(doc: OpenApiDocument): string {
  const rows = Object.entries(doc.paths).map(([path, { get }]) => {
    const verb = get["x-user-facing-verb"];
    return (
      `<tr><td><code>GET ${htmlEscape(path)}</code></td><td>${htmlEscape(get.summary as string)}</td>` +
      `<td>${verb ? htmlEscape(String(verb)) : ""}</td><td><code>${htmlEscape(String(get["x-mcp-tool"] ?? ""))}</code></td></tr>`
    );
  });
  return `<table><thead><tr><th>Route</th><th>What it does</th><th>Verb to use with users</th><th>MCP tool</th></tr></thead>
<tbody>${rows.join("\n")}</tbody></table>`;
}

export function docsPage(doc: OpenApiDocument, specUrl: string): string {
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
<script src="${SCALAR_SCRIPT}"></script>
<script>
  if (window.Scalar && typeof window.Scalar.createApiReference === "function") {
    document.getElementById("fallback").remove();
    window.Scalar.createApiReference("#app", { url: ${JSON.stringify(specUrl)}, withDefaultFonts: false });
  }
</script>
</body>
</html>`;
}
