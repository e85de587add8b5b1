/**
 * Every error code the service can answer is documented (issue 30, 7): in docs/api.md, and in its catalogue — the
 * envelope's codes in api/openapi/errorCatalogue.ts (ERROR_DOCS), supply's in SUPPLY_ERROR_MEANINGS, GraphQL's in
 * GRAPHQL_CODES (api/graphql/errors.ts). A code written anywhere in the production code that none of the three
 * tables holds fails here, and so does a code a GraphQL library we run can raise that we do not document (yoga's
 * OPERATION_RESOLUTION_FAILURE was one).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { answeredCode, GRAPHQL_CODES, LIBRARY_RENAMES } from "../../api/graphql/errors";
import { ERROR_STATUS } from "../../api/http/errors";
import { ERROR_DOCS, SUPPLY_ERROR_MEANINGS } from "../../api/openapi/errorCatalogue";
import { SUPPLY_ERROR_STATUS } from "../../api/supply/supplyError";
import { variablesReadByCode } from "../support/envVariables";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    // A package's own copy of a dependency is not what we run.
    if (name === "node_modules") return [];
    return statSync(full).isDirectory() ? filesUnder(full, ext) : ext.test(name) ? [full] : [];
  });
}

const ENVELOPE = Object.keys(ERROR_STATUS);
const SUPPLY = Object.keys(SUPPLY_ERROR_STATUS);
const ALL = new Set<string>([...ENVELOPE, ...SUPPLY, ...GRAPHQL_CODES]);

/** Every UPPER_SNAKE string literal of the production code (comments dropped), less the configuration's names and
 * the libraries' codes we rename. */
function codesWrittenInCode(): Map<string, string> {
  const variables = new Set(variablesReadByCode(ROOT).keys());
  const found = new Map<string, string>();
  for (const file of filesUnder(path.join(ROOT, "api"), /\.(ts|mjs)$/)) {
    const code = readFileSync(file, "utf8")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
    for (const m of code.matchAll(/["'`]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)["'`]/g)) {
      if (!variables.has(m[1]!) && !(m[1]! in LIBRARY_RENAMES)) found.set(m[1]!, path.relative(ROOT, file));
    }
  }
  return found;
}

/** The codes graphql-yoga and the GraphQL plugins we run can put in `extensions.code`. */
function libraryGraphqlCodes(): Set<string> {
  const roots = ["graphql-yoga/cjs", "@envelop", "@escape.tech"].map((p) => path.join(ROOT, "node_modules", p));
  const codes = new Set<string>();
  for (const root of roots) {
    for (const file of filesUnder(root, /\.c?js$/)) {
      const code = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
      for (const m of code.matchAll(/\bcode:\s*["']([A-Z][A-Z0-9_]+)["']/g)) codes.add(m[1]!);
    }
  }
  return codes;
}

describe("error codes", () => {
  it("the scan finds the codes (a scan that finds few is broken)", () => {
    const written = codesWrittenInCode();
    for (const code of ["BAD_PARAMS", "INDEX_UNAVAILABLE", "SUPPLY_RPC_UNREACHABLE", "ROW_LIMIT_EXCEEDED"]) {
      expect([...written.keys()]).toContain(code);
    }
    expect(libraryGraphqlCodes()).toContain("BAD_REQUEST");
  });

  it("every code written in the production code is one of the tables'", () => {
    const stray = [...codesWrittenInCode()].filter(([code]) => !ALL.has(code));
    expect(stray.map(([code, file]) => `${code} (${file})`)).toEqual([]);
  });

  it("every code is in docs/api.md, and every envelope and supply code in the catalogue with its meaning", () => {
    const docs = read("docs/api.md");
    expect([...ALL].filter((code) => !docs.includes(`\`${code}\``))).toEqual([]);
    for (const code of ENVELOPE) expect(ERROR_DOCS[code as keyof typeof ERROR_DOCS]?.meaning, code).toBeTruthy();
    for (const code of SUPPLY)
      expect(SUPPLY_ERROR_MEANINGS[code as keyof typeof SUPPLY_ERROR_MEANINGS], code).toBeTruthy();
  });

  it("every code a GraphQL library we run can raise is documented, or answered as a documented one", () => {
    const raised = [...libraryGraphqlCodes()];
    // INTERNAL_SERVER_ERROR is yoga's name for what we call INTERNAL_ERROR (LIBRARY_RENAMES).
    const undocumented = raised.filter((code) => !(code in LIBRARY_RENAMES) && !ALL.has(code));
    expect(undocumented).toEqual([]);
    for (const code of raised) expect(GRAPHQL_CODES).toContain(answeredCode(code));
    expect(answeredCode("INTERNAL_SERVER_ERROR")).toBe("INTERNAL_ERROR");
    expect(answeredCode("SOMETHING_NEW")).toBe("BAD_REQUEST");
  });
});
