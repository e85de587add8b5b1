import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import {
  builtStaticAssets,
  chooseEncoding,
  defaultStaticDir,
  loadStaticAssets,
  StaticAssetsMissingError,
} from "../../api/http/staticAssets";
import { createLogger } from "../../api/observability/logger";

const logger = createLogger({ level: "error" });
const appWith = (env: Record<string, string> = {}) =>
  createApp({ config: loadConfig({ NETWORK: "base", ...env }), rpc: null, logger });
const packaged = readFileSync(
  path.join(
    path.dirname(createRequire(import.meta.url).resolve("@scalar/api-reference/style.css")),
    "browser",
    "standalone.js",
  ),
);

async function scriptPath(app: ReturnType<typeof appWith>): Promise<string> {
  const html = await (await app.request("/docs")).text();
  return html.match(/<script src="(\/docs\/assets\/scalar\.[^"]+)">/)![1]!;
}

describe("chooseEncoding (RFC 9110 §12.5.3)", () => {
  it.each([
    [undefined, "identity"],
    ["", "identity"],
    ["gzip, deflate, br", "br"],
    ["gzip", "gzip"],
    ["br;q=0, gzip;q=0.5", "gzip"],
    ["BR;Q=0.1", "br"],
    ["*", "br"],
    ["*;q=0, gzip", "gzip"],
    ["identity", "identity"],
    ["br;q=0, gzip;q=0", "identity"],
    ["br;q=abc", "identity"],
    ["x-gzip", "gzip"],
  ] as const)("%s → %s", (header, want) => {
    expect(chooseEncoding(header)).toBe(want);
  });
});

describe("loadStaticAssets", () => {
  it("names the missing build instead of failing obscurely", () => {
    expect(() => loadStaticAssets("/nonexistent")).toThrow(StaticAssetsMissingError);
    expect(() => loadStaticAssets("/nonexistent")).toThrow(/npm run build/);
  });

  it("is loaded once per process: every app shares the same bytes, each form read on its first request", async () => {
    const a = builtStaticAssets(logger);
    expect(a).not.toBeNull();
    expect(builtStaticAssets(logger)).toBe(a);
    const identity = a!.byName.get("scalar.js")!.forms.identity;
    const bytes = await identity.bytes();
    expect(bytes.length).toBe(packaged.length);
    expect(await identity.bytes()).toBe(bytes);
  });

  it("checks every form's file at start-up, and reads none of them until asked", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "static-"));
    try {
      cpSync(defaultStaticDir(), dir, { recursive: true });
      const assets = loadStaticAssets(dir);
      const br = assets.byName.get("scalar.js")!.forms.br;
      // Removed after loading: nothing was read yet, so the first request finds it gone (and is not kept failing).
      const file = path.join(dir, `${assets.byName.get("scalar.js")!.file}.br`);
      const saved = readFileSync(file);
      rmSync(file);
      await expect(br.bytes()).rejects.toThrow(/ENOENT/);
      writeFileSync(file, saved);
      expect(Buffer.from(await br.bytes()).equals(saved)).toBe(true);
      // A form missing at start-up is the build cut short: said at once, as the manifest's absence is.
      rmSync(path.join(dir, `${assets.byName.get("scalar.js")!.file}.gz`));
      expect(() => loadStaticAssets(dir)).toThrow(StaticAssetsMissingError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("GET /docs/assets/<hashed name>", () => {
  const app = appWith();

  it("serves brotli, gzip or identity by Accept-Encoding, each decoding to the pinned package's bytes", async () => {
    const src = await scriptPath(app);
    const tags = new Set<string>();
    for (const [accept, enc, decode] of [
      ["br, gzip", "br", brotliDecompressSync],
      ["gzip", "gzip", gunzipSync],
      ["identity", null, (b: Buffer) => b],
    ] as const) {
      const res = await app.request(src, { headers: { "accept-encoding": accept } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding")).toBe(enc);
      expect(res.headers.get("vary")).toBe("Accept-Encoding");
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("etag")).toMatch(/^"[\w-]+"$/);
      tags.add(res.headers.get("etag")!);
      const body = Buffer.from(await res.arrayBuffer());
      expect(decode(body).equals(packaged)).toBe(true);
    }
    expect(tags.size).toBe(3); // a strong ETag per representation
    // brotli is what a browser gets: about a fifth of the bytes
    const br = await app.request(src, { headers: { "accept-encoding": "br" } });
    expect((await br.arrayBuffer()).byteLength).toBeLessThan(packaged.length / 4);
  });

  it("answers 304 with no body on revalidation, 200 when the tag is another representation's", async () => {
    const src = await scriptPath(app);
    const first = await app.request(src, { headers: { "accept-encoding": "br" } });
    const etag = first.headers.get("etag")!;
    const again = await app.request(src, { headers: { "accept-encoding": "br", "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(again.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    // A cache refreshes its stored headers from a 304: the script stays a script (nosniff).
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(await again.text()).toBe("");
    const other = await app.request(src, { headers: { "accept-encoding": "gzip", "if-none-match": etag } });
    expect(other.status).toBe(200);
  });

  it("an unknown or unhashed name is a 404 in the envelope", async () => {
    for (const p of ["/docs/assets/scalar.js", "/docs/assets/..%2fmanifest.json", "/docs/assets/manifest.json"]) {
      const res = await app.request(p);
      expect(res.status).toBe(404);
      expect((await res.json()).error).toBe("NOT_FOUND");
    }
  });

  it("costs the docs budget like any route: past it, 429 with Retry-After", async () => {
    const limited = appWith({ RATE_LIMIT_MAX: "3" });
    const src = await scriptPath(limited); // 1
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await limited.request(src)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const res = await limited.request(src);
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(res.headers.get("ratelimit-policy")).toBe('"docs";q=3;w=60');
  });
});
