import Ajv2020, { type ErrorObject } from "ajv/dist/2020.js";
import type { OpenApiDocument } from "../../api/openapi/document";

/**
 * JSON Schema 2020-12 validation (OpenAPI 3.1's dialect) of bodies against the schemas of a served
 * document, with its `#/components/schemas/*` references resolved. Ajv in strict mode, so a schema
 * keyword it does not know fails the test instead of being silently ignored.
 */

type Media = { schema: unknown; example?: unknown; examples?: Record<string, { value: unknown }> };
export type DocOperation = {
  operationId: string;
  summary: string;
  description: string;
  parameters: {
    name: string;
    in: "path" | "query";
    required: boolean;
    schema: Record<string, unknown>;
    example?: string;
  }[];
  responses: Record<string, { content?: Record<string, Media>; headers?: Record<string, unknown> }>;
  [extension: string]: unknown;
};

const REF = "#/components/schemas/";

export function openApiValidator(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  const relocate = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll(REF, "#/$defs/"));
  const defs = relocate(doc.components.schemas);
  const cache = new Map<unknown, ReturnType<typeof ajv.compile>>();

  /** Null when `value` matches `schema`, else Ajv's errors as text. */
  function check(schema: unknown, value: unknown): string | null {
    let validate = cache.get(schema);
    if (!validate) {
      validate = ajv.compile({ ...relocate(schema), $defs: defs });
      cache.set(schema, validate);
    }
    return validate(value) ? null : ajv.errorsText(validate.errors as ErrorObject[]);
  }

  /** The documented media of `status` / `contentType` for the GET at `path`. */
  function media(path: string, status: number, contentType = "application/json"): Media {
    const op = operation(path);
    const found = op.responses[String(status)]?.content?.[contentType];
    if (!found) throw new Error(`${path} documents no ${status} ${contentType} response`);
    return found;
  }

  function operation(path: string): DocOperation {
    const op = doc.paths[path]?.get as unknown as DocOperation | undefined;
    if (!op) throw new Error(`${path} is not documented`);
    return op;
  }

  /** The examples of a media entry (`example` or every `examples` value). */
  const examplesOf = (m: Media): unknown[] =>
    m.examples ? Object.values(m.examples).map((e) => e.value) : m.example === undefined ? [] : [m.example];

  return { check, media, operation, examplesOf };
}
