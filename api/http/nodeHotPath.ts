/**
 * A hot path at the Node HTTP level: startApiServer (api/server/server.ts) asks it with the IncomingMessage
 * before @hono/node-server turns the request into a Request and its answer back into a Node response. It
 * must only answer what the app would have answered the same, so it only sees a request whose target is
 * the URL @hono/node-server would build, as it would build it (originTarget).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { BoundedMap } from "../cache/boundedMap";

/** Writes the whole answer on `res` and returns true, or writes nothing and returns false ("serve it"). */
export type NodeHotPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Hosts already judged, so a poller's one Host costs a Map lookup; bounded (any number of odd Hosts). */
const judged = new BoundedMap<string, boolean>(64);

/**
 * The request target (path and query) when @hono/node-server would take it as it is: origin form (`/…`,
 * appended to the Host unchanged) with a Host it accepts. Anything else is undefined, to be left to it: an
 * absolute-form target, which it parses; a missing Host, for which it substitutes the server's hostname; a
 * Host it rejects with a 400. A target matched exactly against plain paths (the supply hot path) is then
 * the path and query Hono routes.
 */
export function originTarget(req: IncomingMessage): string | undefined {
  const target = req.url;
  if (target === undefined || target.charCodeAt(0) !== 47 /* "/" */) return undefined;
  const host = req.headers.host;
  if (host === undefined) return undefined;
  return hostAccepted(host) ? target : undefined;
}

/** Whether @hono/node-server takes `host` (a Host header) as it is; cached, so a poller's one Host costs a lookup. */
export function hostAccepted(host: string): boolean {
  let accepted = judged.get(host);
  if (accepted === undefined) {
    accepted = adapterAcceptsHost(host);
    judged.set(host, accepted);
  }
  return accepted;
}

/** @hono/node-server's own check (its newRequest): the URL must parse, and keep the Host's hostname. */
function adapterAcceptsHost(host: string): boolean {
  try {
    const url = new URL(`http://${host}/`);
    return url.hostname.length === host.length || url.hostname === host.replace(/:\d+$/, "");
  } catch {
    return false;
  }
}
