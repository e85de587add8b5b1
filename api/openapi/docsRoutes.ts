import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Hono } from "hono";
import { memoizeSuccess } from "../cache/memo";
import { DOCS_PATH, OPENAPI_PATH } from "../paths";
import { docsPage, SCALAR_SCRIPT } from "./docsPage";
import { buildOpenApiDocument } from "./document";

/**
 * GET /api/mcp/v1/openapi.json and GET /docs. The document depends only on the route definitions, so it
 * is built once per app, on first request (a failed build is retried, never cached).
 */
export function registerDocsRoutes(app: Hono): void {
  const load = memoizeSuccess(async () => {
    const doc = await buildOpenApiDocument();
    return { doc, json: JSON.stringify(doc), html: docsPage(doc, OPENAPI_PATH) };
  });
  const cacheControl = "public, max-age=300";
  app.get(OPENAPI_PATH, async (c) =>
    c.body((await load()).json, 200, {
      "content-type": "application/json; charset=UTF-8",
      "cache-control": cacheControl,
    }),
  );
  app.get(DOCS_PATH, async (c) =>
    c.body((await load()).html, 200, { "content-type": "text/html; charset=UTF-8", "cache-control": cacheControl }),
  );
  const script = memoizeSuccess(() => readFile(scalarBundlePath()));
  app.get(SCALAR_SCRIPT, async (c) => {
    return c.body(new Uint8Array(await script()), 200, {
      "content-type": "text/javascript; charset=UTF-8",
      "cache-control": "public, max-age=86400",
    });
  });
}

/** The standalone browser bundle inside the pinned @scalar/api-reference (its exports name only style.css). */
function scalarBundlePath(): string {
  const css = createRequire(import.meta.url).resolve("@scalar/api-reference/style.css");
  return path.join(path.dirname(css), "browser", "standalone.js");
}
