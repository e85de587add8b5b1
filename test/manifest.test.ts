import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { deployedAddress, loadManifest, ManifestError, NETWORKS, type Network, parseManifest } from "../api/manifest";

const dir = mkdtempSync(path.join(tmpdir(), "manifest-test-"));
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};

const good = () => JSON.parse(JSON.stringify(loadManifest("base")));

describe("published manifests", () => {
  it.each(Object.keys(NETWORKS) as Network[])("%s loads and matches its chain id", (network) => {
    const m = loadManifest(network);
    expect(m.chainId).toBe(NETWORKS[network]);
    expect(deployedAddress(m, "AssetToken")).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(deployedAddress(m, "VeLockNFT")).not.toBeNull();
  });

  it("base.json carries the published addresses and start blocks of protocol.md §4", () => {
    const m = loadManifest("base");
    expect(m.contracts.AssetToken).toEqual({
      address: "0x059D278233fEC14CB6D1A74E6FB482BC3f91ADbf",
      startBlock: 46183959,
    });
    expect(m.contracts.VeLockNFT).toEqual({
      address: "0x876Da22a5bBEe4f8963b791631D2cAC5199389eE",
      startBlock: 46183959,
    });
    expect(m.contracts.FurnaceQuoter?.startBlock).toBe(46184096);
    expect(m.lpToken).toEqual({ address: "0x7274599ec9DBf15D474A6FB18aA285aE001d87Aa", startBlock: 46634267 });
    expect(loadManifest("base-sepolia").contracts.LaunchController?.address).toBe(
      "0x70b333582870334Db56157B7833D1e7D94Df5d25",
    );
  });
});

describe("broken manifests stop start-up naming the file and the key", () => {
  const cases: [string, (m: Record<string, any>) => void, RegExp][] = [
    [
      "lower-case address",
      (m) => (m.contracts.VeLockNFT.address = m.contracts.VeLockNFT.address.toLowerCase()),
      /contracts\.VeLockNFT\.address: not an EIP-55/,
    ],
    [
      "bad checksum",
      (m) => (m.contracts.Furnace.address = "0x5f4dabB335d2609c88D3F77e15D5dB4310270aD6"),
      /contracts\.Furnace\.address/,
    ],
    ["short address", (m) => (m.lpToken.address = "0x1234"), /lpToken\.address/],
    ["negative start block", (m) => (m.contracts.AssetToken.startBlock = -1), /contracts\.AssetToken\.startBlock/],
    ["fractional start block", (m) => (m.contracts.AssetToken.startBlock = 1.5), /contracts\.AssetToken\.startBlock/],
    ["unknown contract", (m) => (m.contracts.Vault = m.contracts.Furnace), /contracts: Unrecognized key/],
    ["missing chainId", (m) => delete m.chainId, /chainId: Required/],
    ["bad chain label", (m) => (m.chain = "Base Mainnet"), /chain: a lower-case chain label/],
  ];
  for (const [name, breakIt, message] of cases) {
    it(name, () => {
      const m = good();
      breakIt(m);
      const file = write(`${name.replaceAll(" ", "-")}.json`, JSON.stringify(m));
      const load = () => loadManifest("base", file);
      expect(load).toThrow(ManifestError);
      expect(load).toThrow(file);
      expect(load).toThrow(message);
    });
  }

  it("a chain id that is not the network's", () => {
    const file = write("wrong-chain.json", JSON.stringify({ ...good(), chainId: 84532 }));
    expect(() => loadManifest("base", file)).toThrow(/chainId: expected 8453, found 84532/);
  });

  it("not JSON, and a missing file", () => {
    const file = write("broken.json", "{ nope");
    expect(() => loadManifest("base", file)).toThrow(/is not valid JSON/);
    expect(() => loadManifest("base", path.join(dir, "absent.json"))).toThrow(
      /cannot read deployment manifest .*absent\.json/,
    );
  });
});

describe("not deployed", () => {
  it("a missing entry or the zero address means not deployed", () => {
    const m = good();
    delete m.contracts.Furnace;
    m.contracts.ClaimAllHelper.address = "0x0000000000000000000000000000000000000000";
    const parsed = parseManifest(m, "test.json");
    expect(deployedAddress(parsed, "Furnace")).toBeNull();
    expect(deployedAddress(parsed, "ClaimAllHelper")).toBeNull();
    expect(deployedAddress(parsed, "LpToken")).toBe("0x7274599ec9DBf15D474A6FB18aA285aE001d87Aa");
  });
});
