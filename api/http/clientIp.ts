/**
 * Who is asking: the socket peer, or — only when that peer is one of our own proxies — the
 * right-most address in X-Forwarded-For that none of our proxies wrote. Anything a client can put in
 * a header is ignored unless a trusted hop vouches for it, so a spoofed header buys no new budget.
 */

import { normalizeIp, parseForwardedHop, parseTrustedProxies, type TrustedProxies } from "../net/ip";
import type { AppContext } from "./env";
import { requestHeader } from "./requestHeader";

/** Reads the socket peer's address for a request; undefined when the adapter does not expose one. */
export type PeerAddressSource = (c: AppContext) => string | undefined;

/**
 * @hono/node-server (which `ponder start|serve` also uses) passes `{ incoming, outgoing }` as the
 * env (api/http/env.ts), so the peer is on the raw IncomingMessage. A socket already let go has none.
 */
export const socketPeerAddress: PeerAddressSource = (c) => c.env?.incoming?.socket?.remoteAddress;

export type ClientIpResolver = (c: AppContext) => string | null;

/** Resolves each request's client IP once (the limiter and the request log both ask). */
export function createClientIpResolver(options: {
  trustedProxies: readonly string[];
  peerAddress?: PeerAddressSource;
}): ClientIpResolver {
  const trusted = parseTrustedProxies(options.trustedProxies);
  const peerAddress = options.peerAddress ?? socketPeerAddress;
  const seen = new WeakMap<Request, string | null>();
  return (c) => {
    const cached = seen.get(c.req.raw);
    if (cached !== undefined) return cached;
    // X-Forwarded-For only counts from a trusted peer: without any, it is not read at all.
    const forwardedFor = trusted.size === 0 ? undefined : requestHeader(c, "x-forwarded-for");
    const ip = resolveClientIp({ peer: peerAddress(c), forwardedFor, trusted });
    seen.set(c.req.raw, ip);
    return ip;
  };
}

/**
 * Right to left through X-Forwarded-For: each trusted hop vouches for the entry before it; the first
 * address no trusted proxy could have written is the client. An entry may carry a port or IPv6 brackets
 * (parseForwardedHop). A malformed entry ends the walk (what is left of it came from the client), leaving
 * the last address a trusted hop vouched for.
 */
export function resolveClientIp(input: {
  peer: string | undefined;
  forwardedFor: string | undefined;
  trusted: TrustedProxies;
}): string | null {
  const peer = input.peer === undefined ? null : normalizeIp(input.peer);
  if (peer === null || !input.trusted.has(peer) || !input.forwardedFor) return peer;
  const hops = input.forwardedFor.split(",");
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseForwardedHop(hops[i]!);
    if (hop === null) break;
    client = hop;
    if (!input.trusted.has(hop)) break;
  }
  return client;
}
