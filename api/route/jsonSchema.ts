import { PARAM_PATTERNS, type ParamDoc, type ParamKind } from "../http/params";

/**
 * JSON Schema (2020-12, the dialect of OpenAPI 3.1) for what the API reads and writes. The parameter
 * schemas are the documented face of the strict parsers in api/http/params.ts; a unit test
 * (test/route/jsonSchema.test.ts) checks that each pattern accepts exactly what its parser accepts.
 */
export type JsonSchema = { readonly [keyword: string]: unknown };

export const ADDRESS_PATTERN = PARAM_PATTERNS.address;
export const UINT256_PATTERN = PARAM_PATTERNS.uint256;
export const BOOL_PATTERN = PARAM_PATTERNS.bool;
export const CURSOR_PATTERN = PARAM_PATTERNS.cursor;
/** Calldata and 0x-hex quantities as the prepare envelope carries them. */
export const HEX_DATA_PATTERN = "^0x([0-9a-f]{2})*$";
export const HEX_QUANTITY_PATTERN = "^0x(0|[1-9a-f][0-9a-f]*)$";

const KIND_SCHEMA: Record<ParamKind, JsonSchema> = {
  address: {
    type: "string",
    pattern: ADDRESS_PATTERN,
    description: "0x + 40 hex; mixed case must be a valid EIP-55 checksum.",
  },
  uint256: {
    type: "string",
    pattern: UINT256_PATTERN,
    description: "Non-negative integer in canonical decimal (no sign, no leading zeros, no exponent), ≤ 2^256 − 1.",
  },
  bool: { type: "string", enum: ["true", "false"], pattern: BOOL_PATTERN, description: "Exactly true or false." },
  cursor: {
    type: "string",
    pattern: CURSOR_PATTERN,
    maxLength: 512,
    description: "Opaque: pass back the `nextCursor` of the previous page exactly as received.",
  },
  board: {
    type: "string",
    enum: [
      "king-claim-mined",
      "longest-reign",
      "takeovers",
      "takeover-eth",
      "royalties",
      "furnace-claim",
      "furnace-eth",
    ],
    pattern: PARAM_PATTERNS.board,
    description: "One of the seven duration boards' keys (above).",
  },
  window: {
    type: "string",
    enum: ["24h", "7d", "30d", "lifetime"],
    pattern: PARAM_PATTERNS.window,
    description: "24h, 7d, 30d or lifetime.",
  },
  eventId: {
    type: "string",
    pattern: PARAM_PATTERNS.eventId,
    description: "0x + 64 hex (the transaction), a dash, the log index.",
  },
  kinds: {
    type: "string",
    pattern: PARAM_PATTERNS.kinds,
    description: "One kind or several, comma-separated.",
  },
  webhookId: {
    type: "string",
    pattern: PARAM_PATTERNS.webhookId,
    description: "A webhook's id (`wh_…`), as registering it answered.",
  },
  deliveryStatus: {
    type: "string",
    enum: ["pending", "delivered", "dead", "cancelled"],
    pattern: PARAM_PATTERNS.deliveryStatus,
    description: "pending, delivered, dead or cancelled.",
  },
};

/**
 * The schema of a parameter as its strict parser accepts it, with its default when it has one. A small
 * range is an enum of its decimal strings; a larger one is stated as x-minimum / x-maximum (the values
 * are decimal strings, so JSON Schema's numeric keywords do not apply).
 */
export function paramSchema(doc: ParamDoc): JsonSchema {
  const { description: _kindDescription, ...base } = KIND_SCHEMA[doc.kind];
  const ranged = doc.kind === "uint256" && (doc.min !== undefined || doc.max !== undefined);
  const small = ranged && doc.max !== undefined && doc.max - (doc.min ?? 0n) < 16n;
  const range = !ranged
    ? {}
    : small
      ? {
          enum: Array.from({ length: Number(doc.max! - (doc.min ?? 0n)) + 1 }, (_, i) =>
            String((doc.min ?? 0n) + BigInt(i)),
          ),
        }
      : {
          ...(doc.min === undefined ? {} : { "x-minimum": String(doc.min) }),
          ...(doc.max === undefined ? {} : { "x-maximum": String(doc.max) }),
        };
  return { ...base, ...range, ...(doc.default === undefined ? {} : { default: doc.default }) };
}

/** The one-line form rule of a parameter kind, appended to parameter descriptions. */
export function kindRule(kind: ParamKind): string {
  return KIND_SCHEMA[kind].description as string;
}

/** A parameter as an OpenAPI Parameter Object: its description with its kind's rule, its schema, its example. */
export function openApiParameter(name: string, where: "path" | "query", doc: ParamDoc, example?: string) {
  return {
    name,
    in: where,
    required: where === "path" || doc.required === true,
    description: `${doc.description} ${kindRule(doc.kind)}`,
    schema: paramSchema(doc),
    ...(example === undefined ? {} : { example }),
  };
}

// Small builders so route files state their response shapes in a few readable lines.

/** A closed object: every listed property required unless named in `optional`; nothing else allowed. */
export function object(
  properties: Record<string, JsonSchema>,
  options: { optional?: readonly string[]; description?: string } = {},
): JsonSchema {
  const optional = new Set(options.optional ?? []);
  return {
    type: "object",
    ...(options.description ? { description: options.description } : {}),
    properties,
    required: Object.keys(properties).filter((k) => !optional.has(k)),
    additionalProperties: false,
  };
}

export const constant = (value: unknown, description?: string): JsonSchema => ({
  const: value,
  ...(description ? { description } : {}),
});

/** A decimal string of a non-negative integer (wei amounts, token ids, unix times, block numbers). */
export const uintString = (description: string): JsonSchema => ({
  type: "string",
  pattern: UINT256_PATTERN,
  description,
});

export const addressString = (description: string): JsonSchema => ({
  type: "string",
  pattern: ADDRESS_PATTERN,
  description,
});

export const integer = (description: string, bounds: { minimum?: number; maximum?: number } = {}): JsonSchema => ({
  type: "integer",
  ...bounds,
  description,
});

/**
 * A value or null, as `anyOf` rather than a type array (`type: ["string", "null"]`): JSON Schema allows both,
 * but MCP clients and the Inspector warn on or drop type arrays, and the tools' output schemas are built from
 * these. Keywords of `schema` (a pattern, a format) stay with the non-null branch.
 */
export const nullable = (schema: JsonSchema, description: string): JsonSchema => ({
  anyOf: [schema, { type: "null" }],
  description,
});

export const boolean = (description: string): JsonSchema => ({ type: "boolean", description });

export const array = (items: JsonSchema, description: string, bounds: { minItems?: number } = {}): JsonSchema => ({
  type: "array",
  items,
  ...bounds,
  description,
});
