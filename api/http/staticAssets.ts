import { readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The docs UI's static assets, as `npm run build` leaves them in dist/static (scripts/build.mjs): each under
 * a content-hashed name, beside its brotli and gzip forms, named by manifest.json. The manifest is read and every
 * form's file checked at start-up; a form's bytes are read on its first request and every later request is
 * answered from those same bytes: serving one twice costs no memory, a process whose docs nobody opens holds none
 * of them (the three forms of the Scalar bundle are 6.5 MB; a browser asks for brotli's 0.9 MB), and a client gets
 * 1/4.6 of the bytes (brotli) of the 4.35 MB bundle. A hashed name never changes meaning, so it is cached as
 * immutable for a year (what CDNs do for fingerprinted files).
 */

export type Encoding = "br" | "gzip" | "identity";

export type StaticAsset = {
  /** The hashed file name, as served under DOCS_ASSETS_PATH. */
  file: string;
  type: string;
  /** One strong ETag per representation: a compressed form is a different byte sequence (RFC 9110 §8.8.3). */
  forms: Record<Encoding, AssetForm>;
};

/** One representation of an asset: its tag, known at start-up, and its bytes, read once when first asked for. */
export type AssetForm = { etag: string; bytes(): Promise<Uint8Array> };

export type StaticAssets = {
  /** By logical name (`scalar.js`), for pages that link to them. */
  byName: ReadonlyMap<string, StaticAsset>;
  /** By hashed file name, for the route that serves them. */
  byFile: ReadonlyMap<string, StaticAsset>;
};

type ManifestEntry = { file: string; hash: string; type: string; encodings: Record<Encoding, string> };

/** dist/static of this checkout: beside the bundle (dist/server/main.js) or, from source, under the repo root. */
export function defaultStaticDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const bundled = here.endsWith(`${path.sep}dist${path.sep}server`);
  return bundled ? path.resolve(here, "..", "static") : path.resolve(here, "..", "..", "dist", "static");
}

export class StaticAssetsMissingError extends Error {
  override name = "StaticAssetsMissingError";
}

/** Reads every asset manifest.json names; throws StaticAssetsMissingError when the build has not run. */
export function loadStaticAssets(dir = defaultStaticDir()): StaticAssets {
  let manifest: Record<string, ManifestEntry>;
  try {
    manifest = JSON.parse(readFileSync(path.join(dir, "manifest.json"), "utf8"));
  } catch (error) {
    throw new StaticAssetsMissingError(
      `docs assets not built: ${path.join(dir, "manifest.json")} (${(error as Error).message}); run npm run build`,
    );
  }
  const byName = new Map<string, StaticAsset>();
  const byFile = new Map<string, StaticAsset>();
  for (const [name, entry] of Object.entries(manifest)) {
    const read = (encoding: Encoding, suffix: string): AssetForm => {
      const file = path.join(dir, entry.encodings[encoding]);
      checkBuilt(file);
      let bytes: Promise<Uint8Array> | undefined;
      return {
        etag: `"${entry.hash}${suffix}"`,
        // A failed read is not kept: the next request reads again.
        bytes: () =>
          (bytes ??= readFile(file).then(
            (b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength),
            (error: unknown) => {
              bytes = undefined;
              throw error;
            },
          )),
      };
    };
    const asset: StaticAsset = {
      file: entry.file,
      type: entry.type,
      forms: { identity: read("identity", ""), br: read("br", "-br"), gzip: read("gzip", "-gz") },
    };
    byName.set(name, asset);
    byFile.set(entry.file, asset);
  }
  return { byName, byFile };
}

/** A form's file must be there at start-up, as when every form was read then (a build cut short says so at once). */
function checkBuilt(file: string): void {
  try {
    statSync(file);
  } catch (error) {
    throw new StaticAssetsMissingError(
      `docs asset not built: ${file} (${(error as Error).message}); run npm run build`,
    );
  }
}

/**
 * The representation to send for an Accept-Encoding value (RFC 9110 §12.5.3): brotli, then gzip, when the
 * client accepts them with a non-zero weight; identity otherwise (identity is acceptable unless refused, and
 * a client that refuses everything still gets identity rather than a 406: what nginx and CDNs do).
 */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding {
  if (!acceptEncoding) return "identity";
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.toLowerCase().split(",")) {
    const [token, ...params] = part.trim().split(";");
    if (!token) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.trim().split("=");
      if (k === "q") q = Number.parseFloat(v ?? "");
    }
    weights.set(token, Number.isFinite(q) ? q : 0);
  }
  const accepts = (enc: string) => (weights.get(enc) ?? weights.get("*") ?? 0) > 0;
  if (accepts("br")) return "br";
  if (accepts("gzip") || (weights.get("x-gzip") ?? 0) > 0) return "gzip";
  return "identity";
}

const loaded = new Map<string, StaticAssets | null>();

/**
 * The assets of this checkout's build, loaded once per process (every app of the process shares the same
 * bytes). Without a build, /docs still serves its listing; the warning says how to get the UI.
 */
export function builtStaticAssets(logger: { warn(msg: string, fields?: object): void }, dir = defaultStaticDir()) {
  if (!loaded.has(dir)) {
    try {
      loaded.set(dir, loadStaticAssets(dir));
    } catch (error) {
      if (!(error instanceof StaticAssetsMissingError)) throw error;
      logger.warn("docs UI not served", { reason: error.message });
      loaded.set(dir, null);
    }
  }
  return loaded.get(dir) ?? null;
}
