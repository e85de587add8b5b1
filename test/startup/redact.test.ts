/**
 * What the process prints of a URL (api/redact.ts, api/startup/redactOutput.ts): scheme and host, the secret parts
 * (password, path, query) masked wherever they appear; a sentence's punctuation after a URL is not taken for part of
 * it, and a URL with no secret in it is shown, not masked whole.
 */
import { describe, expect, it } from "vitest";
import { redactUrls } from "../../api/redact";
import { redactText, secretParts } from "../../api/startup/redactOutput";

describe("redacting URLs in printed text", () => {
  it("keeps the host when punctuation follows the URL", () => {
    expect(redactUrls("RPC_URL at http://127.0.0.1:43631: could not read eth_chainId")).toBe(
      "RPC_URL at http://127.0.0.1:43631: could not read eth_chainId",
    );
    expect(redactUrls("requires Multicall3 on https://base.example/v2/SECRETKEY123, but no contract")).toBe(
      "requires Multicall3 on https://base.example/***, but no contract",
    );
    expect(redactUrls("(see https://u:p4ssw0rd@host.example:1/x?k=1).")).toBe("(see https://host.example:1/***).");
  });

  it("masks a secret-bearing URL's parts anywhere, and leaves a URL without secrets readable", () => {
    const key = "https://base-mainnet.example/v2/abcdefKEY42";
    const secrets = secretParts(key);
    expect(redactText(`url ${key} then the key alone: abcdefKEY42`, secrets)).toBe(
      "url https://base-mainnet.example/*** then the key alone: ***",
    );
    expect(secretParts("http://127.0.0.1:8545")).toEqual([]);
    expect(secretParts("redis://127.0.0.1:6379/")).toEqual([]);
    // No path at all: a redis: URL's path is then "" (not "/"), and the whole URL was masked (red team rtredis F2).
    expect(secretParts("redis://127.0.0.1:6379")).toEqual([]);
    expect(secretParts("rediss://redis.internal:6380")).toEqual([]);
    expect(redactText("api configured rpc=http://127.0.0.1:8545 redis=redis://127.0.0.1:6379", [])).toBe(
      "api configured rpc=http://127.0.0.1:8545 redis=redis://127.0.0.1:6379",
    );
    expect(secretParts("redis://:hunter22@10.0.0.5:6379")).toContain("hunter22");
    expect(redactText("redis=redis://10.0.0.5:6379", secretParts("redis://:hunter22@10.0.0.5:6379"))).toBe(
      "redis=redis://10.0.0.5:6379",
    );
  });
});
