/**
 * IP addresses as the service compares, counts and logs them: canonical forms, the rate-limit identity,
 * the log truncation, and the trusted-proxy list. No HTTP here: the config validates TRUSTED_PROXIES with it.
 */
import { BlockList, isIP } from "node:net";

/**
 * A canonical textual form, so `::FFFF:10.0.0.1`, `10.0.0.1` and `[::1]` each compare equal to what a
 * trusted-proxy list or a rate-limit key holds. Null when the text is not an IP address.
 */
export function normalizeIp(text: string): string | null {
  let s = text.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const kind = isIP(s);
  if (kind === 4) return s;
  if (kind !== 6) return null;
  // The URL parser prints IPv6 in RFC 5952 form (lower case, longest zero run compressed).
  const canonical = new URL(`http://[${s.replace(/%.*$/, "")}]/`).hostname.slice(1, -1);
  // IPv4-mapped addresses are how a dual-stack socket reports an IPv4 peer.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(canonical);
  if (mapped) return mapped[1]!;
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (hexMapped) {
    const hi = Number.parseInt(hexMapped[1]!, 16);
    const lo = Number.parseInt(hexMapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return canonical;
}

/**
 * One entry of X-Forwarded-For, as proxies write them: an address alone (`1.2.3.4`, `2001:db8::1`), or with the
 * client's port (`1.2.3.4:5678`, `[2001:db8::1]:443`), or an IPv6 address in brackets (`[::1]`) — Azure's
 * gateways, IIS's ARR and some CDNs add the port. The port is dropped: a client is its address. A bare IPv6 address
 * cannot carry a port (`2001:db8::1:443` is an address). Null when the entry is none of these.
 */
export function parseForwardedHop(text: string): string | null {
  const s = text.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s);
  if (bracketed) return isIP(bracketed[1]!) === 6 && validPort(bracketed[2]) ? normalizeIp(bracketed[1]!) : null;
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(s);
  if (v4WithPort) return validPort(v4WithPort[2]) ? normalizeIp(v4WithPort[1]!) : null;
  return normalizeIp(s);
}

const validPort = (port: string | undefined) => port === undefined || Number(port) <= 65_535;

/** The eight 16-bit groups of an IPv6 address (input must be valid IPv6). */
function ipv6Groups(ip: string): number[] {
  const [head = "", tail] = ip.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const h = parse(head);
  if (tail === undefined) return h;
  const t = parse(tail);
  return [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
}

function ipv6Prefix(ip: string, bits: number): string {
  const groups = ipv6Groups(ip);
  const kept = groups.map((g, i) => {
    const from = i * 16;
    if (from >= bits) return 0;
    if (from + 16 <= bits) return g;
    return g & (0xffff << (16 - (bits - from)));
  });
  return normalizeIp(kept.map((g) => g.toString(16)).join(":"))!;
}

/**
 * The rate-limit identity of a client. An IPv6 host is usually handed a whole /64, so counting per
 * address would let one machine rotate through 2^64 budgets; IPv4 counts per address.
 */
export function rateLimitSubject(ip: string): string {
  return ip.includes(":") ? `${ipv6Prefix(ip, 64)}/64` : ip;
}

/** For logs: IPv4 keeps /24, IPv6 keeps /48 — enough to spot an abuser's network, not a person. */
export function truncateIp(ip: string | null): string {
  if (ip === null) return "unknown";
  if (!ip.includes(":")) return ip.replace(/\.\d+$/, ".0");
  return `${ipv6Prefix(ip, 48)}/48`;
}

export type TrustedProxies = { has(ip: string): boolean; readonly size: number };

/**
 * Entries are exact addresses or CIDR ranges (`10.0.0.0/8`, `fd00::/8`). A bad entry throws RangeError;
 * loadConfig reports it as TRUSTED_PROXIES at start-up, like every other config error.
 */
export function parseTrustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList();
  for (const entry of entries) {
    const [addr = "", bitsText, ...rest] = entry.split("/");
    const ip = normalizeIp(addr);
    const family = ip?.includes(":") ? "ipv6" : "ipv4";
    const maxBits = family === "ipv6" ? 128 : 32;
    const bits = bitsText === undefined ? maxBits : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : Number.NaN;
    if (ip === null || rest.length > 0 || !(bits >= 0 && bits <= maxBits)) {
      throw new RangeError(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
    }
    if (bits === maxBits) list.addAddress(ip, family);
    else list.addSubnet(ip, bits, family);
  }
  // Asked for every request's peer (the client's address, the connection caps, the turnstile): with no proxy trusted,
  // answered without BlockList.check's argument checks and address parse (issue 33).
  return {
    size: entries.length,
    has: entries.length === 0 ? () => false : (ip) => list.check(ip, ip.includes(":") ? "ipv6" : "ipv4"),
  };
}
