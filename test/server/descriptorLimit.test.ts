/** The total connection cap against the process's open-file limit (api/server/descriptorLimit.ts). */
import { describe, expect, it } from "vitest";
import {
  connectionsWithin,
  DESCRIPTOR_RESERVE,
  FALLBACK_DESCRIPTOR_LIMIT,
  MAX_REFUSING,
  openFileLimit,
  totalConnectionCap,
} from "../../api/server/descriptorLimit";

const limits = (soft: string, hard = soft) =>
  "Limit                     Soft Limit           Hard Limit           Units     \n" +
  "Max processes             63459                63459                processes \n" +
  `Max open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files     \n`;

describe("openFileLimit", () => {
  it("reads the soft limit of Max open files", () => {
    expect(openFileLimit(limits("1024", "524288"))).toBe(1024);
    expect(openFileLimit(limits("unlimited"))).toBe(Number.POSITIVE_INFINITY);
    expect(openFileLimit("no such line")).toBeNull();
  });

  it("reads this process's own limit from /proc/self/limits", () => {
    expect(openFileLimit()).toBeGreaterThan(0);
  });
});

describe("the total connection cap", () => {
  it("leaves the larger of 256 descriptors and a tenth of the limit to the process", () => {
    expect(connectionsWithin(1024)).toBe(1024 - DESCRIPTOR_RESERVE);
    expect(connectionsWithin(20_000)).toBe(18_000);
    expect(connectionsWithin(100)).toBe(1);
  });

  it("MAX_CONNECTIONS is kept when it fits, lowered (and flagged) when it does not", () => {
    expect(totalConnectionCap(null, limits("4096"))).toMatchObject({
      max: 3686,
      descriptorLimit: 4096,
      clamped: false,
    });
    expect(totalConnectionCap(1000, limits("4096"))).toMatchObject({
      max: 1000,
      descriptorLimit: 4096,
      clamped: false,
    });
    expect(totalConnectionCap(10_000, limits("4096"))).toMatchObject({
      max: 3686,
      descriptorLimit: 4096,
      clamped: true,
    });
  });

  it("refusals answered at once take at most half of what the cap leaves, and no more than MAX_REFUSING", () => {
    expect(totalConnectionCap(null, limits("4096")).refusing).toBe(205);
    expect(totalConnectionCap(10_000, limits("4096")).refusing).toBe(205);
    expect(totalConnectionCap(null, limits("20000")).refusing).toBe(1_000);
    expect(totalConnectionCap(1000, limits("4096")).refusing).toBe(MAX_REFUSING);
    expect(totalConnectionCap(null, limits("unlimited")).refusing).toBe(MAX_REFUSING);
    expect(totalConnectionCap(null, "").refusing).toBe(128);
  });

  it("without /proc, assumes the common default soft limit", () => {
    expect(totalConnectionCap(null, "")).toMatchObject({ descriptorLimit: FALLBACK_DESCRIPTOR_LIMIT, max: 768 });
  });
});
