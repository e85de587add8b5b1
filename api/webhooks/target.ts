/**
 * Where a webhook may be sent: http(s) URLs whose host resolves only to public addresses — unless WEBHOOK_ALLOW_PRIVATE
 * allows loopback (`loopback`: the local stack's receivers) or every address (`true`: a private network's). Judged at
 * registration (a 400) and again at every attempt, on the addresses the attempt actually connects to (the lookup
 * below is the connection's own), so a name re-pointed at an internal address after registration reaches nothing.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { BadParamsError } from "../http/errors";
import { normalizeIp } from "../net/ip";

export type PrivateTargets = "none" | "loopback" | "all";

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Not reachable from the public internet, or not a unicast host: private, link-local, CGNAT, multicast, reserved. */
const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  // Documentation (TEST-NET-1, -2, -3): reserved, never a host on the internet.
  ["192.0.2.0", 24],
  // 6to4 relay anycast (deprecated, RFC 7526): a relay, not a host.
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  NON_PUBLIC.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [
  // IPv4-compatible (deprecated; `::` and `::1` among them): the IPv4 address they embed is not judged here.
  ["::", 96],
  // IPv4-translated (SIIT, RFC 2765): embeds an IPv4 address, as IPv4-mapped does (those are judged as IPv4).
  ["::ffff:0:0:0", 96],
  // NAT64 (RFC 6052, RFC 8215): the well-known prefix and the local-use one (where in its /48 the IPv4 address sits is
  // the network's choice). A gateway reaches the IPv4 address embedded, 169.254.169.254 as well as a public one, so
  // both are refused whole, as 2002::/16 is.
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  // IETF protocol assignments (RFC 2928): Teredo (2001::/32, embeds an IPv4 address), benchmarking, ORCHID, AMT,
  // AS112 — special-purpose, never a receiver's host.
  ["2001::", 23],
  ["2001:db8::", 32],
  ["2002::", 16],
  // Documentation (RFC 9637) and SRv6 segment ids (RFC 9602).
  ["3fff::", 20],
  ["5f00::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  // Site-local (deprecated by RFC 3879, still routed inside some networks).
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  NON_PUBLIC.addSubnet(net, bits, "ipv6");
}

/** loopback, private (any other non-public address) or public. */
export function addressClass(address: string): "loopback" | "private" | "public" {
  const ip = normalizeIp(address) ?? address;
  const family = ip.includes(":") ? "ipv6" : "ipv4";
  if (LOOPBACK.check(ip, family)) return "loopback";
  if (NON_PUBLIC.check(ip, family)) return "private";
  return "public";
}

export function allowedAddress(address: string, allow: PrivateTargets): boolean {
  const kind = addressClass(address);
  return kind === "public" || allow === "all" || (kind === "loopback" && allow === "loopback");
}

/** A target URL's form: http or https, a host, a port other than 0, no credentials; at most 2,000 characters. */
export function parseTargetUrl(value: unknown): URL {
  const fail = (message: string): never => {
    throw new BadParamsError(message, { param: "url" });
  };
  if (typeof value !== "string" || value.length === 0 || value.length > 2_000) {
    return fail("url must be an http(s) URL of at most 2000 characters.");
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail("url is not a URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") fail("url must be http: or https:.");
  if (url.username || url.password) fail("url must not carry credentials; the signature authenticates the sender.");
  if (url.hostname === "") fail("url has no host.");
  // Port 0 is no port a receiver listens on: such a webhook could never be delivered.
  if (url.port === "0") fail("url's port must be 1 to 65535.");
  return url;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

/** Every address the URL's host resolves to (the host itself when it is an address). */
async function addressesOf(url: URL): Promise<string[]> {
  const host = hostOf(url);
  if (isIP(host)) return [host];
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, addresses: LookupAddress[]) =>
      error ? reject(error) : resolve(addresses.map((a) => a.address)),
    ),
  );
}

/** Refuses (400) a URL whose host does not resolve, or resolves to an address `allow` does not permit. */
export async function checkTarget(url: URL, allow: PrivateTargets): Promise<void> {
  let addresses: string[];
  try {
    addresses = await addressesOf(url);
  } catch {
    throw new BadParamsError(`url's host ${url.hostname} does not resolve.`, { param: "url" });
  }
  const refused = addresses.find((a) => !allowedAddress(a, allow));
  if (refused !== undefined) {
    throw new BadParamsError(
      `url's host resolves to ${addressClass(refused)} address ${refused}; targets must be public (WEBHOOK_ALLOW_PRIVATE).`,
      { param: "url", address: refused },
    );
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that resolves as Node does and fails the connection when an address is not allowed:
 * the check and the connection use the same answer (no re-resolution in between).
 */
export function checkedLookup(allow: PrivateTargets) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "");
      const refused = addresses.find((a) => !allowedAddress(a.address, allow));
      if (refused) {
        const e: NodeJS.ErrnoException = new Error(
          `target address ${refused.address} is ${addressClass(refused.address)}`,
        );
        e.code = "ETARGETREFUSED";
        return callback(e, "");
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}
