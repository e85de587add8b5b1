/**
 * Which environment variables the production code reads, and which ones `.env.example` and
 * docs/configuration.md list — so a test can hold the three equal.
 *
 * The code side is a static scan, because some reads happen only on one path (a production network, `npm start`):
 * - every `process.env.NAME`, `process.env["NAME"]`, `env.NAME`, `env["NAME"]` (the loaders take `env` as a parameter);
 * - every upper-case key of an object literal in the config loader (api/config.ts's zod schema of the environment);
 * - every template literal `NAME_${…}`: a family of variables (`PONDER_RPC_URL_<chainId>`), written `NAME_*`.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/**
 * The processes operators run: the API process, the indexer (Ponder's config and entries), `npm start`, and the
 * image's HEALTHCHECK.
 */
export const PRODUCTION_SOURCES = [
  "api",
  "indexer",
  "src",
  "devnet",
  "ponder.config.ts",
  "scripts/healthcheck.mjs",
] as const;
/** The one configuration loader (house rule: new variables go through it). */
export const CONFIG_LOADER = "api/config.ts";

const NAME = "[A-Z][A-Z0-9_]*[A-Z0-9]";
const READ_PATTERNS = [
  new RegExp(`(?<![\\w$])(?:process\\.)?env\\.(${NAME})\\b`, "g"),
  new RegExp(`(?<![\\w$])(?:process\\.)?env\\[\\s*["'\`](${NAME})["'\`]\\s*\\]`, "g"),
];
const FAMILY_PATTERN = new RegExp(`\`(${NAME}_)\\$\\{`, "g");
const LOADER_KEY_PATTERN = new RegExp(`^\\s*(${NAME})\\s*:`, "gm");

/** Names read in one file's source text (families end in `_*`). */
export function variablesReadIn(source: string, options: { loader?: boolean } = {}): Set<string> {
  const code = stripComments(source);
  const found = new Set<string>();
  for (const pattern of READ_PATTERNS) for (const m of code.matchAll(pattern)) found.add(m[1]!);
  for (const m of code.matchAll(FAMILY_PATTERN)) found.add(`${m[1]}*`);
  if (options.loader) for (const m of code.matchAll(LOADER_KEY_PATTERN)) found.add(m[1]!);
  return found;
}

/** Comments mention variables without reading them (`// PORT is read by Ponder too`). */
function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

function sourceFiles(root: string, entry: string): string[] {
  const full = path.join(root, entry);
  if (statSync(full).isFile()) return [entry];
  return readdirSync(full, { recursive: true, encoding: "utf8" })
    .filter((f) => /\.(ts|mts|mjs|js)$/.test(f) && !f.endsWith(".d.ts"))
    .filter((f) => !f.split(path.sep).some((part) => part === "node_modules" || part === "out"))
    .map((f) => path.join(entry, f));
}

/** Every variable the production processes read, with the files that read it. */
export function variablesReadByCode(root: string): Map<string, string[]> {
  const readers = new Map<string, string[]>();
  for (const entry of PRODUCTION_SOURCES) {
    for (const file of sourceFiles(root, entry)) {
      const names = variablesReadIn(readFileSync(path.join(root, file), "utf8"), { loader: file === CONFIG_LOADER });
      for (const name of names) readers.set(name, [...(readers.get(name) ?? []), file]);
    }
  }
  return readers;
}

/** `NAME=value` and `# NAME=value` lines of a dotenv file (a commented line is a variable without a default). */
export function variablesInEnvFile(text: string): string[] {
  return [...text.matchAll(new RegExp(`^#?[ \\t]*(${NAME})=`, "gm"))].map((m) => m[1]!);
}

/** First-column names of the Markdown tables: rows that start `| \`NAME\` |`. */
export function variablesInDocTables(markdown: string): string[] {
  return [...markdown.matchAll(new RegExp(`^\\|\\s*\`(${NAME}(?:_<[a-zA-Z]+>)?)\`\\s*\\|`, "gm"))].map((m) => m[1]!);
}

/** `PONDER_RPC_URL_8453` and `PONDER_RPC_URL_<chainId>` are both members of the family `PONDER_RPC_URL_*`. */
export function canonicalName(listed: string, families: readonly string[]): string {
  for (const family of families) {
    const prefix = family.slice(0, -1);
    if (listed.startsWith(prefix) && /^(\d+|<[a-zA-Z]+>)$/.test(listed.slice(prefix.length))) return family;
  }
  return listed;
}
