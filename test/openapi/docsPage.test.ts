import { describe, expect, it } from "vitest";
import { DOCS_CSP, docsPage } from "../../api/openapi/docsPage";
import type { OpenApiDocument } from "../../api/openapi/document";

// A document whose text would break the page (or inject markup) if any of it reached the HTML unescaped.
const hostile = {
  openapi: "3.1.0",
  info: { title: `Locks <script>alert("t")</script> & 'co'` },
  paths: {
    "/api/x/{id}": {
      get: { summary: "Reads <b>x</b>", "x-user-facing-verb": "lock up <i>now</i>", "x-mcp-tool": "get_x&y" },
    },
  },
  security: [],
} as unknown as OpenApiDocument;

describe("docsPage", () => {
  const scripts = { scalar: "/docs/assets/scalar.abc.js", init: "/docs/assets/docs-init.def.js" };
  const html = docsPage(hostile, "/api/openapi.json?a=1&b=2", scripts);

  it("escapes the title in <title> and the heading", () => {
    const escaped = "Locks &lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt; &amp; &#39;co&#39;";
    expect(html).toContain(`<title>${escaped}</title>`);
    expect(html).toContain(`<h1>${escaped}</h1>`);
    expect(html).not.toContain('alert("t")');
  });

  it("escapes a verb with a space, the summary and the tool name in the listing", () => {
    expect(html).toContain("<td>lock up &lt;i&gt;now&lt;/i&gt;</td>");
    expect(html).toContain("Reads &lt;b&gt;x&lt;/b&gt;");
    expect(html).toContain("get_x&amp;y");
    expect(html).toContain('href="/api/openapi.json?a=1&amp;b=2"');
  });

  it("loads every asset from this process: no third-party origin anywhere in the page", () => {
    expect(html).toContain(`<script src="${scripts.scalar}"></script>`);
    expect(html).toContain(`<script src="${scripts.init}" data-spec-url="/api/openapi.json?a=1&amp;b=2"></script>`);
    expect(html).not.toMatch(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
  });

  it("has no inline script, so its CSP can allow scripts of its own origin only", () => {
    expect(html.match(/<script[^>]*>/g)).toHaveLength(2);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(DOCS_CSP).toContain("script-src 'self';");
    expect(DOCS_CSP).toContain("default-src 'self';");
    expect(DOCS_CSP).not.toMatch(/https?:|\*/);
  });

  it("without built assets, serves the listing and no script", () => {
    expect(docsPage(hostile, "/spec.json", null)).not.toContain("<script");
  });
});
