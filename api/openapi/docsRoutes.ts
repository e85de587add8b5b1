import type { Hono, MiddlewareHandler } from "hono";
import { memoizeSuccess } from "../cache/memo";
import { ifNoneMatchHits } from "../http/conditional";
import type { AppEnv } from "../http/env";
import { NotFoundError } from "../http/errors";
import { chargeRateLimit, type RateLimitOptions } from "../http/rateLimit";
import { chooseEncoding, type StaticAssets } from "../http/staticAssets";
import { DOCS_ASSETS_PATH, DOCS_PATH, OPENAPI_PATH } from "../paths";
import { DOCS_CSP, type DocsScripts, docsPage } from "./docsPage";
import { buildOpenApiDocument } from "./document";

/** A year: the longest max-age caches honour; a hashed name's bytes never change (RFC 8246 immutable). */
const IMMUTABLE = "public, max-age=31536000, immutable";

export type DocsRoutesOptions = {
  /** The built assets (api/http/staticAssets.ts); null → /docs serves its listing without the UI. */
  assets: StaticAssets | null;
  /** The docs, the document and the assets cost the `docs` budget of the client, like every other prefix. */
  rateLimit: RateLimitOptions;
};

/**
 * GET /api/mcp/v1/openapi.json, GET /docs and GET /docs/assets/<hashed name>. The document depends only on
 * the route definitions, so it is built once per app, on first request (a failed build is retried, never
 * cached). Assets are answered from the bytes loaded at start-up, pre-compressed, with a strong ETag per
 * representation and 304 on revalidation.
 */
export function registerDocsRoutes(app: Hono<AppEnv>, o: DocsRoutesOptions): void {
  const scripts: DocsScripts = (() => {
    const scalar = o.assets?.byName.get("scalar.js");
    const init = o.assets?.byName.get("docs-init.js");
    return scalar && init
      ? { scalar: `${DOCS_ASSETS_PATH}/${scalar.file}`, init: `${DOCS_ASSETS_PATH}/${init.file}` }
      : null;
  })();
  const load = memoizeSuccess(async () => {
    const doc = await buildOpenApiDocument();
    return { doc, json: JSON.stringify(doc), html: docsPage(doc, OPENAPI_PATH, scripts) };
  });
  const limited: MiddlewareHandler = async (c, next) => {
    await chargeRateLimit(c, "docs", o.rateLimit);
    await next();
  };
  const cacheControl = "public, max-age=300";
  app.get(OPENAPI_PATH, limited, async (c) =>
    c.body((await load()).json, 200, {
      "content-type": "application/json; charset=UTF-8",
      "cache-control": cacheControl,
    }),
  );
  app.get(DOCS_PATH, limited, async (c) =>
    c.body((await load()).html, 200, {
      "content-type": "text/html; charset=UTF-8",
      "cache-control": cacheControl,
      "content-security-policy": DOCS_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    }),
  );
  app.get(`${DOCS_ASSETS_PATH}/:file`, limited, async (c) => {
    const asset = o.assets?.byFile.get(c.req.param("file"));
    if (!asset) throw new NotFoundError("No such asset.");
    const encoding = chooseEncoding(c.req.header("accept-encoding"));
    const form = asset.forms[encoding];
    const headers: Record<string, string> = {
      "cache-control": IMMUTABLE,
      etag: form.etag,
      vary: "Accept-Encoding",
      "x-content-type-options": "nosniff",
    };
    // The 304 names the asset's type too: the server would write text/plain on a bodiless answer, and a cache
    // refreshes its stored headers from a 304's (RFC 9111 §4.3.4) — a script typed text/plain under nosniff is refused.
    if (ifNoneMatchHits(c.req.header("if-none-match"), form.etag))
      return c.body(null, 304, { ...headers, "content-type": asset.type });
    if (encoding !== "identity") headers["content-encoding"] = encoding;
    return c.body((await form.bytes()) as Uint8Array<ArrayBuffer>, 200, { ...headers, "content-type": asset.type });
  });
}
