/**
 * What a request's method may be (docs/design.md, "HTTP methods"). GET and HEAD go straight through (the hot path
 * pays no extra async frame); OPTIONS is a CORS preflight, answered 204 here; anything else is a 405 naming the
 * methods that work (RFC 9110 §15.5.6), except where a path takes more: GraphQL takes POST, the MCP endpoint
 * answers every method itself (Streamable HTTP), and the operators' webhook routes take POST and DELETE (a method
 * none of them serves reaches no route: 404).
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env";
import { MethodNotAllowedError } from "./errors";

/** Only a preflight (OPTIONS) needs these; sending them on every GET costs the hot path for nothing. */
const PREFLIGHT_HEADERS = {
  "access-control-allow-methods": "GET, HEAD, OPTIONS",
  // The wildcard covers every request header but Authorization (Fetch standard): a browser on another origin sends the
  // operator routes' and the metrics' bearer token only where it is named.
  "access-control-allow-headers": "*, authorization",
  "access-control-max-age": "86400",
} as const;

export type MethodPolicyOptions = {
  /** Paths whose handler answers every method itself, with the methods their preflight names. */
  ownMethods: Readonly<Record<string, string>>;
  /** Paths that take POST as well, with every method they answer (their preflight and their 405 name them). */
  withPost: Readonly<Record<string, readonly string[]>>;
  /** Path prefixes whose routes take GET, POST and DELETE (the operators' webhook routes); other methods reach no route. */
  operatorPrefixes?: readonly string[];
};

const OPERATOR_METHODS = "GET, POST, DELETE, OPTIONS";

export function methodPolicy({
  ownMethods,
  withPost,
  operatorPrefixes = [],
}: MethodPolicyOptions): MiddlewareHandler<AppEnv> {
  const other: MiddlewareHandler<AppEnv> = async (c, next) => {
    const operator = operatorPrefixes.some((p) => c.req.path === p || c.req.path.startsWith(`${p}/`));
    const own = ownMethods[c.req.path] ?? (operator ? OPERATOR_METHODS : undefined);
    const post = withPost[c.req.path];
    if (c.req.method === "OPTIONS") {
      for (const [k, v] of Object.entries(PREFLIGHT_HEADERS)) c.header(k, v);
      if (own) c.header("access-control-allow-methods", own);
      if (post) c.header("access-control-allow-methods", post.join(", "));
      return c.body(null, 204);
    }
    if (post && c.req.method !== "POST") {
      c.header("allow", post.join(", "));
      throw new MethodNotAllowedError(c.req.method, post);
    }
    if (!own && !post) {
      c.header("allow", "GET, HEAD, OPTIONS");
      throw new MethodNotAllowedError(c.req.method);
    }
    await next();
  };
  // A HEAD goes through too, but where a path names its methods without it (GraphQL: GET and POST only).
  const headAllowed = (path: string) => withPost[path]?.includes("HEAD") ?? true;
  return (c, next) =>
    c.req.method === "GET" || (c.req.method === "HEAD" && headAllowed(c.req.path)) ? next() : other(c, next);
}
