/**
 * The tools' schemas as a client receives them (tools/list through the SDK's client, against the served API
 * process, dist/server/main.js): no `type` is an array anywhere in an input or output schema (JSON Schema allows
 * `type: ["string", "null"]`, but MCP clients and the Inspector warn on or drop it; api/route/jsonSchema.ts
 * `nullable` says it as anyOf), every schema compiles under Ajv in strict mode both as 2020-12 (MCP's default
 * dialect) and as draft-07 (what the SDK's client validates with), and every example output — the tool's own
 * `examples`, or its operation's 200 example in the served OpenAPI document — is valid against its output schema.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, startApiChild } from "../support/apiProcess";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

let d: ReadsDevnet;
let dir: string;
let child: ChildProcess;
let client: Client;
let tools: Tool[];
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
let openapi: any;

beforeAll(async () => {
  d = await startReadsDevnet();
  dir = mkdtempSync(path.join(tmpdir(), "tool-schemas-"));
  let base: string;
  ({ child, base } = await startApiChild({ ...childEnv(d, dir), RATE_LIMIT_MAX: "1000000" }));
  client = new Client({ name: "schema-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)));
  ({ tools } = await client.listTools());
  openapi = await (await fetch(`${base}/api/mcp/v1/openapi.json`)).json();
}, 120_000);
afterAll(async () => {
  await client?.close();
  child?.kill("SIGTERM");
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Keywords whose value is a schema, a list of schemas, or a map of names to schemas (2020-12 and draft-07). */
const SCHEMA = new Set([
  "items",
  "additionalItems",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "additionalProperties",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
]);
const SCHEMA_LIST = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
const SCHEMA_MAP = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * Every place in a schema where `type` is an array, as JSON pointers. Only schema positions are walked: data
 * (`const`, `enum`, `default`, `examples`) and property names are not keywords, so a property named `type` or an
 * example holding an array under "type" is not a finding.
 */
function typeArrays(schema: unknown, at = ""): string[] {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return [];
  const found: string[] = [];
  for (const [k, v] of Object.entries(schema)) {
    if (k === "type" && Array.isArray(v)) found.push(`${at}/type`);
    else if (SCHEMA_LIST.has(k) || (SCHEMA.has(k) && Array.isArray(v))) {
      // draft-07's tuple form of `items` is a list of schemas too.
      if (Array.isArray(v)) for (const [i, s] of v.entries()) found.push(...typeArrays(s, `${at}/${k}/${i}`));
    } else if (SCHEMA.has(k)) {
      found.push(...typeArrays(v, `${at}/${k}`));
    } else if (SCHEMA_MAP.has(k) && typeof v === "object" && v !== null) {
      for (const [name, s] of Object.entries(v)) found.push(...typeArrays(s, `${at}/${k}/${name}`));
    }
  }
  return found;
}

/**
 * Ajv in strict mode (a keyword it does not know fails the test), as 2020-12 and as draft-07. Known to be ours:
 * x-minimum / x-maximum, the documented range of a decimal-string parameter (api/route/jsonSchema.ts); and to
 * draft-07, `prefixItems` is an unknown annotation, as it is to the SDK's draft-07 validator (the schema says the
 * same with `items` and `maxItems` for it: api/mcp/server.ts portableSchema).
 */
function validators(): (Ajv | Ajv2020)[] {
  const draft2020 = new Ajv2020({ strict: true, allErrors: true });
  const draft07 = new Ajv({ strict: true, allErrors: true });
  for (const ajv of [draft2020, draft07]) for (const k of ["x-minimum", "x-maximum"]) ajv.addKeyword(k);
  draft07.addKeyword("prefixItems");
  return [draft2020, draft07];
}

describe("the walk itself", () => {
  it("finds a type array at any depth, and only in schema positions", () => {
    const schema = {
      type: "object",
      properties: {
        type: { type: "string" },
        a: { type: ["string", "null"] },
        b: { anyOf: [{ type: "array", items: { type: ["integer", "string"] } }] },
        c: { type: "object", additionalProperties: { type: ["boolean", "null"] } },
        d: { const: { type: ["x"] }, enum: [{ type: ["y"] }], examples: [{ type: ["z"] }] },
      },
      prefixItems: [{ type: ["null", "string"] }],
    };
    expect(typeArrays(schema)).toEqual([
      "/properties/a/type",
      "/properties/b/anyOf/0/items/type",
      "/properties/c/additionalProperties/type",
      "/prefixItems/0/type",
    ]);
  });
});

describe("tools/list from the served process", () => {
  it("lists every tool, each with an input and an output schema", () => {
    expect(tools.length).toBeGreaterThanOrEqual(20);
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe("object");
      expect(tool.outputSchema?.type, tool.name).toBe("object");
    }
  });

  it("no type array in any input or output schema", () => {
    const findings = tools.flatMap((t) => [
      ...typeArrays(t.inputSchema).map((p) => `${t.name} inputSchema${p}`),
      ...typeArrays(t.outputSchema).map((p) => `${t.name} outputSchema${p}`),
    ]);
    expect(findings).toEqual([]);
  });

  it("every schema compiles under Ajv (strict) as 2020-12 and as draft-07", () => {
    for (const ajv of validators()) {
      for (const tool of tools) {
        expect(() => ajv.compile(tool.inputSchema), `${tool.name} input`).not.toThrow();
        expect(() => ajv.compile(tool.outputSchema!), `${tool.name} output`).not.toThrow();
      }
    }
  });

  it("every example output is valid against its tool's output schema, under both dialects", () => {
    const documented = new Map<string, unknown>();
    for (const item of Object.values(openapi.paths) as { get?: Record<string, unknown> }[]) {
      if (!item.get) continue;
      const op = item.get as {
        "x-mcp-tool"?: string;
        responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
      };
      const example = op.responses["200"]?.content?.["application/json"]?.example;
      if (op["x-mcp-tool"] && example !== undefined) documented.set(op["x-mcp-tool"], example);
    }
    let checked = 0;
    for (const tool of tools) {
      const examples = [...((tool.outputSchema?.examples as unknown[] | undefined) ?? [])];
      if (documented.has(tool.name)) examples.push(documented.get(tool.name));
      expect(examples.length, `${tool.name} has an example output`).toBeGreaterThan(0);
      for (const ajv of validators()) {
        const validate = ajv.compile(tool.outputSchema!);
        for (const example of examples) {
          expect(validate(example) ? null : ajv.errorsText(validate.errors), tool.name).toBeNull();
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(2 * tools.length);
  });
});
