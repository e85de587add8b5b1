import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  canonicalName,
  variablesInDocTables,
  variablesInEnvFile,
  variablesReadByCode,
  variablesReadIn,
} from "../support/envVariables";

const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");

// Operators configure the service from `.env.example` and docs/configuration.md: both must name exactly the
// variables the production processes read — a new variable undocumented, or a documented one the code no longer
// reads, fails here.

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), "utf8");
const code = variablesReadByCode(REPO_ROOT);
const codeNames = [...code.keys()].sort();
const families = codeNames.filter((n) => n.endsWith("_*"));
const listed = (names: string[]) => [...new Set(names.map((n) => canonicalName(n, families)))].sort();

describe("the scan of the production code", () => {
  it("finds the configuration's variables (a scan that finds few is broken, not a small config)", () => {
    expect(codeNames.length).toBeGreaterThanOrEqual(20);
    for (const name of ["NETWORK", "RPC_URL", "DATABASE_URL", "DATABASE_VIEWS_SCHEMA", "REDIS_URL", "LOG_LEVEL"]) {
      expect(codeNames).toContain(name);
    }
    expect(codeNames).toContain("PONDER_RPC_URL_*");
  });

  it("reads every form a variable is read in, and skips comments and written keys", () => {
    const source = [
      "const a = process.env.ALPHA_ONE;",
      'const b = process.env["BETA"] ?? env.GAMMA;',
      "if ((env.DELTA ?? '').trim()) {}",
      "const name = `FAMILY_$" + "{chainId}`;", // a template literal in the scanned text
      "// process.env.IN_A_COMMENT",
      "/* env.IN_A_BLOCK */",
      'spawn(bin, [], { env: { WRITTEN_ONLY: "1" } });',
      "const url = 'http://example.com'; // env.AFTER_URL",
    ].join("\n");
    expect([...variablesReadIn(source)].sort()).toEqual(["ALPHA_ONE", "BETA", "DELTA", "FAMILY_*", "GAMMA"]);
    const loader = "const envSchema = z.object({\n  NETWORK: z.enum(['a']),\n  RPC_URL: url(),\n  lower: 1,\n});";
    expect([...variablesReadIn(loader, { loader: true })].sort()).toEqual(["NETWORK", "RPC_URL"]);
  });

  it("parses the two documents' forms", () => {
    expect(variablesInEnvFile("# comment with NAME= inside\nA_B=1\n# C_D=\n#E_F=x\n  G_H=2\nlower=3\n")).toEqual([
      "A_B",
      "C_D",
      "E_F",
      "G_H",
    ]);
    const table = "| variable | default |\n|---|---|\n| `A_B` | 1 |\n| `FAM_<chainId>` | – |\nprose `C_D` |\n";
    expect(variablesInDocTables(table)).toEqual(["A_B", "FAM_<chainId>"]);
    expect(canonicalName("FAM_8453", ["FAM_*"])).toBe("FAM_*");
    expect(canonicalName("FAM_<chainId>", ["FAM_*"])).toBe("FAM_*");
    expect(canonicalName("FAMILY", ["FAM_*"])).toBe("FAMILY");
  });
});

describe.each([
  [".env.example", () => variablesInEnvFile(read(".env.example"))],
  ["docs/configuration.md", () => variablesInDocTables(read("docs/configuration.md"))],
])("%s", (file, names) => {
  it("lists every variable the production code reads", () => {
    const missing = codeNames.filter((n) => !listed(names()).includes(n));
    expect(
      missing.map((n) => `${n} (read in ${code.get(n)?.join(", ")})`),
      `missing from ${file}`,
    ).toEqual([]);
  });

  it("lists no variable the code does not read, and each once", () => {
    expect(
      listed(names()).filter((n) => !code.has(n)),
      `in ${file} but read nowhere`,
    ).toEqual([]);
    const all = names();
    expect(
      all.filter((n, i) => all.indexOf(n) !== i),
      `listed twice in ${file}`,
    ).toEqual([]);
  });
});

describe("the files the processes load", () => {
  it("Ponder's command line loads .env.local (and no other file), as configuration.md says; the API process none", () => {
    const bin = read("node_modules/ponder/dist/esm/bin/ponder.js");
    expect(bin.match(/dotenv\.config\([^)]*\)/g)).toEqual(['dotenv.config({ path: ".env.local" })']);
    const doc = read("docs/configuration.md");
    expect(doc).toContain("The API process\nloads no file");
    expect(doc).toContain("`ponder start` (the indexer, `npm run serve:indexer`, and `npm start`) reads\n`.env.local`");
    for (const file of ["api/server/main.ts", "api/server/process.ts", "api/config.ts"]) {
      expect(read(file), file).not.toMatch(/dotenv|loadEnvFile/);
    }
  });
});
