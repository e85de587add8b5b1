import { type Address, getAddress } from "viem";
import { BadParamsError } from "./errors";

/**
 * Strict parameter parsing (design.md): what is not exactly canonical is rejected, never coerced.
 * Every failure is a BadParamsError whose detail names the parameter.
 */

const MAX_UINT256 = 2n ** 256n - 1n;

/**
 * The form of each parameter kind, as the parsers below check it and as the OpenAPI / MCP schemas state it
 * (api/route/jsonSchema.ts reads these): one pattern per kind, declared once.
 */
export const PARAM_PATTERNS = {
  /** `0x` + 40 hex. A mixed-case address must also carry a valid EIP-55 checksum, which no pattern can say. */
  address: "^0x[0-9a-fA-F]{40}$",
  /** Canonical decimal: no sign, no leading zero, no exponent; at most 78 digits (and ≤ 2²⁵⁶ − 1). */
  uint256: "^(0|[1-9][0-9]{0,77})$",
  bool: "^(true|false)$",
  /** An opaque page cursor as this API hands it out: base64url, no padding (api/read/cursor.ts judges the rest). */
  cursor: "^[A-Za-z0-9_-]{1,512}$",
  /** A duration board's key (protocol.md §9); a route answers an unknown one 404, as a path that is not there. */
  board: "^(king-claim-mined|longest-reign|takeovers|takeover-eth|royalties|furnace-claim|furnace-eth)$",
  /** A duration board's trailing window. */
  window: "^(24h|7d|30d|lifetime)$",
  /** Activity kinds, one or several comma-separated (api/index/activity.ts). */
  kinds: "^[a-z-]{1,32}(,[a-z-]{1,32}){0,15}$",
  /** An event's permalink: `{txHash}-{logIndex}`. */
  eventId: "^0x[0-9a-fA-F]{64}-(0|[1-9][0-9]{0,9})$",
  /** A webhook's id as registering it answers (`wh_` + base64url: api/webhooks/store.ts). */
  webhookId: "^wh_[A-Za-z0-9_-]{1,64}$",
  /** A webhook delivery's state (api/webhooks/store.ts DELIVERY_STATUSES). */
  deliveryStatus: "^(pending|delivered|dead|cancelled)$",
} as const;
const HEX40 = new RegExp(PARAM_PATTERNS.address);
const DECIMAL = new RegExp(PARAM_PATTERNS.uint256);
const CURSOR = new RegExp(PARAM_PATTERNS.cursor);

/** `0x` + 40 hex; a mixed-case address must carry a valid EIP-55 checksum. Returns the checksummed form. */
export function parseAddress(param: string, raw: string): Address {
  if (!HEX40.test(raw)) throw new BadParamsError(`${param} must be a 0x-prefixed 20-byte hex address.`, { param });
  const body = raw.slice(2);
  const mixed = body !== body.toLowerCase() && body !== body.toUpperCase();
  const checksummed = getAddress(raw);
  if (mixed && checksummed !== raw) throw new BadParamsError(`${param} has an invalid EIP-55 checksum.`, { param });
  return checksummed;
}

/**
 * A wallet that signs (prepare's and the quote's `user`): the zero address is no wallet — an assistant's placeholder for
 * an unresolved one — and a batch "as" it is plausible calldata for nobody: BAD_PARAMS. Reads may name it.
 */
export function refuseZeroAddress(param: string, address: Address): Address {
  if (/^0x0{40}$/.test(address)) {
    throw new BadParamsError(`${param} is the zero address: give the wallet that signs.`, { param });
  }
  return address;
}

/**
 * parseAddress's checks, answered lower-case: the key a rank lookup finds its account by. The EIP-55 checksum
 * (keccak-256, or viem's cache of it) is computed only for a mixed-case address, which must carry it; an all-lower or
 * all-upper one has nothing to check and was checksummed only to be lower-cased again (issue 33).
 */
export function parseAddressKey(param: string, raw: string): string {
  if (!HEX40.test(raw)) throw new BadParamsError(`${param} must be a 0x-prefixed 20-byte hex address.`, { param });
  const lower = raw.toLowerCase();
  const body = raw.slice(2);
  if (body !== lower.slice(2) && body !== body.toUpperCase() && getAddress(raw) !== raw) {
    throw new BadParamsError(`${param} has an invalid EIP-55 checksum.`, { param });
  }
  return lower;
}

/** Decimal digits only: no sign, no leading zeros (except "0"), no exponent, at most 2^256 − 1. */
export function parseUint256(param: string, raw: string): bigint {
  if (!DECIMAL.test(raw)) {
    throw new BadParamsError(`${param} must be a non-negative integer in canonical decimal form.`, { param });
  }
  const value = BigInt(raw);
  if (value > MAX_UINT256) throw new BadParamsError(`${param} exceeds the uint256 range.`, { param });
  return value;
}

/** A uint256 that must also lie in [min, max] (e.g. slippageBps in [0, 10000], mode in {0, 1}). */
export function parseUintInRange(param: string, raw: string, min: bigint, max: bigint): bigint {
  const value = parseUint256(param, raw);
  if (value < min || value > max) {
    throw new BadParamsError(`${param} must be between ${min} and ${max}.`, {
      param,
      min: String(min),
      max: String(max),
    });
  }
  return value;
}

/** Exactly `true` or `false`. */
export function parseBool(param: string, raw: string): boolean {
  if (raw === "true") return true;
  if (raw === "false") return false;
  throw new BadParamsError(`${param} must be exactly true or false.`, { param });
}

/** The form of an opaque cursor; what it holds is checked by whoever made it. */
export function parseCursorText(param: string, raw: string): string {
  if (!CURSOR.test(raw)) throw new BadParamsError(`${param} is not a cursor this API handed out.`, { param });
  return raw;
}

export type ParamKind = keyof typeof PARAM_PATTERNS;

/**
 * A query parameter, declared once: the parser enforces it (kind, range, default) and the OpenAPI document
 * and the MCP tool input schemas are generated from it. A table rather than zod schemas, on a measured reason:
 * bench/params-parse.ts builds the zod schema from this same table with the same rules, and zod takes 2.4×
 * (zod 4) to 5.5× (zod 3) our parse time for a lock-via-furnace query, on every prepare and quote request.
 */
export type ParamDoc = {
  kind: ParamKind;
  required?: boolean;
  /** The value used when the parameter is absent, as it would be written in the query. */
  default?: string;
  /** uint256 only: the inclusive range the value must lie in. */
  min?: bigint;
  max?: bigint;
  description: string;
};
export type ParamSpec = Readonly<Record<string, ParamDoc>>;
type Parsed<K extends ParamKind> = K extends "address"
  ? Address
  : K extends "uint256"
    ? bigint
    : K extends "cursor" | "board" | "window" | "kinds" | "eventId" | "webhookId" | "deliveryStatus"
      ? string
      : boolean;
export type ParsedParams<S extends ParamSpec> = {
  [P in keyof S]: S[P]["required"] extends true
    ? Parsed<S[P]["kind"]>
    : S[P] extends { default: string }
      ? Parsed<S[P]["kind"]>
      : Parsed<S[P]["kind"]> | undefined;
};

/** One parameter's value judged as its route judges it (a path parameter too: api/mcp/server.ts's tool calls). */
export function parseParam(name: string, doc: ParamDoc, raw: string): Address | bigint | boolean | string {
  if (doc.kind === "address") return parseAddress(name, raw);
  if (doc.kind === "bool") return parseBool(name, raw);
  if (doc.kind === "cursor") return parseCursorText(name, raw);
  if (doc.kind !== "uint256") {
    // The kinds whose pattern is their whole rule.
    if (!new RegExp(PARAM_PATTERNS[doc.kind]).test(raw)) {
      throw new BadParamsError(`${name} must match ${PARAM_PATTERNS[doc.kind]}.`, { param: name });
    }
    return raw;
  }
  return doc.min !== undefined || doc.max !== undefined
    ? parseUintInRange(name, raw, doc.min ?? 0n, doc.max ?? MAX_UINT256)
    : parseUint256(name, raw);
}

/**
 * One query parameter's name checked against what a route accepts, and against the names already `seen` (added to
 * them): an unknown or a repeated parameter is BAD_PARAMS, never ignored. For a route that parses its query
 * itself (api/webhooks/routes.ts), the same refusals as parseQuery's.
 */
export function screenParamName(name: string, seen: Set<string>, accepted: ParamSpec | readonly string[]): void {
  const known = Array.isArray(accepted) ? accepted.includes(name) : Object.hasOwn(accepted, name);
  if (!known) {
    const names = Array.isArray(accepted) ? [...accepted] : Object.keys(accepted);
    throw new BadParamsError(`Unknown parameter ${name}.`, { param: name, accepted: names });
  }
  if (seen.has(name)) throw new BadParamsError(`Parameter ${name} is given more than once.`, { param: name });
  seen.add(name);
}

/** The parameters of a URL without a query. */
const NO_PARAMS: Iterable<[string, string]> = [];

/**
 * Parses a raw query string against a spec. Unknown parameters, repeated parameters and missing
 * required ones are BAD_PARAMS; the detail of an unknown one lists the accepted names.
 */
export function parseQuery<S extends ParamSpec>(url: string, spec: S): ParsedParams<S> {
  // Without a `?` there is no query (a `#` before any `?` starts a fragment): the defaults, without parsing a URL.
  const search = url.includes("?") ? new URL(url, "http://x").searchParams : NO_PARAMS;
  const seen = new Set<string>();
  const out: Record<string, unknown> = {};
  for (const [name, value] of search) {
    screenParamName(name, seen, spec);
    out[name] = parseParam(name, spec[name]!, value);
  }
  for (const [name, s] of Object.entries(spec)) {
    if (seen.has(name)) continue;
    if (s.required) throw new BadParamsError(`Missing required parameter ${name}.`, { param: name });
    if (s.default !== undefined) out[name] = parseParam(name, s, s.default);
  }
  return out as ParsedParams<S>;
}
