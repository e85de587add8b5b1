/**
 * A GraphQL request as it arrives, checked before GraphQL reads it: the transport's mistakes are answered in
 * the service's envelope, like every other route's (api/http/errors.ts), never as a GraphQL error or a 500.
 * - POST: `Content-Type: application/json` (415), at most `maxBodyBytes` (413), one JSON object (400
 *   BAD_REQUEST) with `query` a string, `variables` and `extensions` objects, `operationName` a string;
 * - GET: `?query=` once, `variables` / `extensions` JSON objects, `operationName` — nothing else;
 * a member or parameter of the wrong form is BAD_PARAMS naming it, as the REST routes do.
 * What yoga gets is a fresh request of the text already read (so the body is read once, within the limit).
 */
import type { Context } from "hono";
import { readBounded } from "../http/boundedBody";
import { BadParamsError, BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from "../http/errors";

const MEMBERS = ["query", "variables", "operationName", "extensions"] as const;
const JSON_MEDIA = /^application\/json\s*(;|$)/i;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The request yoga is given, once the transport checks pass. */
export async function graphqlRequest(c: Context, maxBodyBytes: number): Promise<Request> {
  return c.req.method === "POST" ? posted(c, maxBodyBytes) : gotten(c);
}

async function posted(c: Context, maxBodyBytes: number): Promise<Request> {
  if (!JSON_MEDIA.test(c.req.header("content-type") ?? "")) throw new UnsupportedMediaTypeError("application/json");
  const text = await readBounded(c.req.raw, maxBodyBytes);
  if (text === null) throw new PayloadTooLargeError(maxBodyBytes);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequestError("The request body is not valid JSON.");
  }
  if (!isObject(body)) {
    throw new BadRequestError(
      "The request body must be one JSON object { query, variables?, operationName? }; batches are not served.",
    );
  }
  for (const name of Object.keys(body)) {
    if (!(MEMBERS as readonly string[]).includes(name)) {
      throw new BadParamsError(`Unknown member ${name} of the request body.`, { param: name, accepted: [...MEMBERS] });
    }
  }
  checkForms(body);
  const headers = new Headers({ "content-type": "application/json" });
  const accept = c.req.header("accept");
  if (accept) headers.set("accept", accept);
  return new Request(c.req.url, { method: "POST", headers, body: text });
}

function gotten(c: Context): Request {
  const search = new URL(c.req.url).searchParams;
  const given: Record<string, unknown> = {};
  for (const [name, value] of search) {
    if (!(MEMBERS as readonly string[]).includes(name)) {
      throw new BadParamsError(`Unknown parameter ${name}.`, { param: name, accepted: [...MEMBERS] });
    }
    if (name in given) throw new BadParamsError(`Parameter ${name} is given more than once.`, { param: name });
    given[name] = name === "variables" || name === "extensions" ? jsonParam(name, value) : value;
  }
  checkForms(given);
  return c.req.raw;
}

function jsonParam(name: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new BadParamsError(`${name} must be a JSON object.`, { param: name });
  }
}

/** The members' forms (GraphQL over HTTP §request parameters); null stands for absent. */
function checkForms(r: Record<string, unknown>): void {
  if (typeof r.query !== "string" || r.query.trim() === "") {
    throw new BadParamsError("query is required: the GraphQL document, as a string.", { param: "query" });
  }
  for (const name of ["variables", "extensions"] as const) {
    if (r[name] != null && !isObject(r[name]))
      throw new BadParamsError(`${name} must be a JSON object.`, { param: name });
  }
  if (r.operationName != null && typeof r.operationName !== "string") {
    throw new BadParamsError("operationName must be a string.", { param: "operationName" });
  }
}
