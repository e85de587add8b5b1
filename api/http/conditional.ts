/**
 * Conditional GETs (RFC 9110 §13.1.2): whether a request's `If-None-Match` names the representation it would get,
 * so the answer can be 304 Not Modified instead of the same bytes again.
 */

/**
 * True when `ifNoneMatch` (the field as received, lists joined by commas) is `*` or names `etag` by the weak
 * comparison GET uses (§8.8.3.2: the opaque tags are equal, either may be weak). A tag is read as the spec writes
 * it, `W/"…"` or `"…"`, so a comma inside a tag does not split it; anything else in the field is skipped.
 */
export function ifNoneMatchHits(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  const own = opaqueTag(etag);
  for (const m of ifNoneMatch.matchAll(ENTITY_TAG)) if (m[1] === own) return true;
  return false;
}

/** `W/"x"` or `"x"`: the quoted part (etagc is any visible character but DQUOTE). */
const ENTITY_TAG = /(?:W\/)?("[^"]*")/g;

const opaqueTag = (etag: string) => (etag.startsWith("W/") ? etag.slice(2) : etag);
