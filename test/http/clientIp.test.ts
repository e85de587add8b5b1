import { describe, expect, it } from "vitest";
import { resolveClientIp } from "../../api/http/clientIp";
import { normalizeIp, parseForwardedHop, parseTrustedProxies, rateLimitSubject, truncateIp } from "../../api/net/ip";

describe("normalizeIp", () => {
  it.each([
    ["10.0.0.1", "10.0.0.1"],
    [" 10.0.0.1 ", "10.0.0.1"],
    ["::ffff:10.0.0.1", "10.0.0.1"],
    ["::FFFF:10.0.0.1", "10.0.0.1"],
    ["::ffff:a00:1", "10.0.0.1"],
    ["[::1]", "::1"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["fe80::1%eth0", "fe80::1"],
  ])("%s → %s", (input, out) => {
    expect(normalizeIp(input)).toBe(out);
  });

  it.each(["", "unknown", "10.0.0.256", "10.0.0.1:8080", "1.2.3", "2001:db8::1::2", "_gateway"])(
    "rejects %j",
    (input) => {
      expect(normalizeIp(input)).toBeNull();
    },
  );
});

describe("resolveClientIp", () => {
  const trusted = parseTrustedProxies(["10.0.0.5", "192.168.0.0/16", "fd00::/8"]);
  const none = parseTrustedProxies([]);

  it("is the socket peer when the peer is not a trusted proxy, whatever the header says", () => {
    expect(resolveClientIp({ peer: "203.0.113.9", forwardedFor: "1.2.3.4", trusted })).toBe("203.0.113.9");
    expect(resolveClientIp({ peer: "203.0.113.9", forwardedFor: "1.2.3.4", trusted: none })).toBe("203.0.113.9");
    expect(resolveClientIp({ peer: "::ffff:203.0.113.9", forwardedFor: undefined, trusted: none })).toBe("203.0.113.9");
  });

  it("takes the right-most address that no trusted proxy wrote", () => {
    // client spoofs 6.6.6.6; the real client 198.51.100.7 was appended by the edge proxy 192.168.1.1.
    const xff = "6.6.6.6, 198.51.100.7, 192.168.1.1";
    expect(resolveClientIp({ peer: "10.0.0.5", forwardedFor: xff, trusted })).toBe("198.51.100.7");
    expect(resolveClientIp({ peer: "10.0.0.5", forwardedFor: "198.51.100.7", trusted })).toBe("198.51.100.7");
    expect(resolveClientIp({ peer: "fd12::1", forwardedFor: "2001:db8::7", trusted })).toBe("2001:db8::7");
  });

  it("stops at a malformed entry, keeping the last address a trusted hop vouched for", () => {
    expect(resolveClientIp({ peer: "10.0.0.5", forwardedFor: "garbage, 192.168.3.3", trusted })).toBe("192.168.3.3");
    expect(resolveClientIp({ peer: "10.0.0.5", forwardedFor: "1.1.1.1, not-an-ip", trusted })).toBe("10.0.0.5");
  });

  it("falls back to the left-most hop when every hop is trusted", () => {
    expect(resolveClientIp({ peer: "10.0.0.5", forwardedFor: "192.168.1.2, 192.168.1.1", trusted })).toBe(
      "192.168.1.2",
    );
  });

  it("uses the peer when a trusted proxy sends no header, and null when there is no peer", () => {
    expect(resolveClientIp({ peer: "10.0.0.5", forwardedFor: undefined, trusted })).toBe("10.0.0.5");
    expect(resolveClientIp({ peer: undefined, forwardedFor: "1.2.3.4", trusted })).toBeNull();
  });
});

describe("parseForwardedHop: an X-Forwarded-For entry as proxies write it", () => {
  it.each([
    ["1.2.3.4", "1.2.3.4"],
    ["1.2.3.4:5678", "1.2.3.4"],
    [" 1.2.3.4:65535 ", "1.2.3.4"],
    ["[2001:db8::1]:443", "2001:db8::1"],
    ["[2001:DB8:0::1]", "2001:db8::1"],
    ["[::1]", "::1"],
    ["[::1]:8080", "::1"],
    ["[::ffff:10.0.0.1]:80", "10.0.0.1"],
    ["2001:db8::1", "2001:db8::1"],
    // A bare IPv6 address cannot carry a port: this is the address 2001:db8::1:443.
    ["2001:db8::1:443", "2001:db8::1:443"],
  ])("%j → %s", (input, out) => {
    expect(parseForwardedHop(input)).toBe(out);
  });

  it.each([
    "1.2.3.4:",
    "1.2.3.4:99999",
    "1.2.3.4:80:80",
    "[1.2.3.4]:80",
    "[2001:db8::1]:",
    "[::1",
    "::1]",
    "unknown",
    "",
  ])("rejects %j", (input) => {
    expect(parseForwardedHop(input)).toBeNull();
  });

  it("a port or brackets no longer put clients in the proxy's bucket", () => {
    const trusted = parseTrustedProxies(["10.0.0.5"]);
    const resolve = (forwardedFor: string) => resolveClientIp({ peer: "10.0.0.5", forwardedFor, trusted });
    expect(resolve("198.51.100.7:5678")).toBe("198.51.100.7");
    expect(resolve("[2001:db8::7]:443")).toBe("2001:db8::7");
    expect(resolve("6.6.6.6, [2001:db8::7], 10.0.0.5:1234")).toBe("2001:db8::7");
    expect(resolve("198.51.100.7:5678")).not.toBe("10.0.0.5");
  });
});

describe("parseTrustedProxies", () => {
  it("accepts exact addresses and CIDR ranges of both families", () => {
    const t = parseTrustedProxies(["10.0.0.5", "172.16.0.0/12", "::1", "2001:db8::/32"]);
    expect(t.has("10.0.0.5")).toBe(true);
    expect(t.has("10.0.0.6")).toBe(false);
    expect(t.has("172.31.255.255")).toBe(true);
    expect(t.has("172.32.0.0")).toBe(false);
    expect(t.has("::1")).toBe(true);
    expect(t.has("2001:db8:ffff::1")).toBe(true);
    expect(t.has("2001:db9::1")).toBe(false);
  });

  it.each(["10.0.0.0/33", "10.0.0.0/x", "nope", "10.0.0.0/8/1", "::/129"])(
    "rejects %j naming TRUSTED_PROXIES",
    (entry) => {
      expect(() => parseTrustedProxies([entry])).toThrow(RangeError);
      expect(() => parseTrustedProxies([entry])).toThrow(/TRUSTED_PROXIES/);
    },
  );
});

describe("rate-limit subject and log truncation", () => {
  it("counts IPv4 per address and IPv6 per /64", () => {
    expect(rateLimitSubject("203.0.113.9")).toBe("203.0.113.9");
    expect(rateLimitSubject("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(rateLimitSubject("2001:db8:1:2::1")).toBe(rateLimitSubject("2001:db8:1:2:ffff::9"));
    expect(rateLimitSubject("2001:db8:1:3::1")).not.toBe(rateLimitSubject("2001:db8:1:2::1"));
  });

  it("keeps only a network prefix in logs", () => {
    expect(truncateIp("203.0.113.9")).toBe("203.0.113.0");
    expect(truncateIp("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1::/48");
    expect(truncateIp("2001:db8:ffff:1::")).toBe("2001:db8:ffff::/48");
    expect(truncateIp(null)).toBe("unknown");
  });
});
