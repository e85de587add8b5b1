import { type Abi, type AbiEvent, type AbiFunction, toEventSelector, toFunctionSelector } from "viem";
import { describe, expect, it } from "vitest";
import * as published from "../../abis";
import { PUBLISHED_ERROR_NAMES, PUBLISHED_LOCAL_ERROR_NAMES, TokenErrorsAbi } from "../../abis/Errors";
import { compileDevnet, type DevnetContractName } from "../../devnet/compile";
import { DEVNET_ABIS } from "../../devnet/deploy";

// abis/<X>.ts (export XAbi) ↔ the devnet contract X.
const PAIRS = Object.keys(published).map((exportName) => [exportName, exportName.replace(/Abi$/, "")] as const);

type AbiError = Extract<Abi[number], { type: "error" }>;
const errorSelector = (e: AbiError) => toFunctionSelector(`${e.name}(${e.inputs.map((i) => i.type).join(",")})`);

/** Everything an ABI pins on the wire: selectors, mutability and output types; event topics and indexed flags. */
function surface(abi: Abi) {
  const fns = new Map<string, string>();
  const events = new Map<string, string>();
  const errors = new Map<string, string>();
  for (const item of abi) {
    if (item.type === "function") {
      const f = item as AbiFunction;
      // pure and view are the same on the wire (eth_call); nonpayable vs payable vs read-only is not.
      const mutability = f.stateMutability === "pure" ? "view" : f.stateMutability;
      fns.set(toFunctionSelector(f), `${f.name} ${mutability} -> (${f.outputs.map((o) => o.type).join(",")})`);
    } else if (item.type === "event") {
      const e = item as AbiEvent;
      events.set(toEventSelector(e), `${e.name} indexed=${e.inputs.map((i) => (i.indexed ? 1 : 0)).join("")}`);
    } else if (item.type === "error") {
      errors.set(errorSelector(item as AbiError), item.name);
    }
  }
  return { fns, events, errors };
}

function missingFrom(expected: Abi, actual: Abi): string[] {
  const want = surface(expected);
  const have = surface(actual);
  const missing: string[] = [];
  for (const kind of ["fns", "events", "errors"] as const) {
    for (const [selector, description] of want[kind]) {
      if (have[kind].get(selector) !== description) {
        missing.push(`${kind} ${selector} ${description} (devnet: ${have[kind].get(selector) ?? "absent"})`);
      }
    }
  }
  return missing;
}

describe("compiled devnet ABIs cover the published ABIs", () => {
  const artifacts = compileDevnet();

  it("every abis/*.ts file has a devnet contract", () => {
    expect(PAIRS.length).toBe(10);
    for (const [, contract] of PAIRS) expect(Object.keys(artifacts)).toContain(contract);
  });

  for (const [exportName, contract] of PAIRS) {
    it(`${contract}: every function, event and error of abis/${contract}.ts, same selectors and shapes`, () => {
      const expected = (published as unknown as Record<string, Abi>)[exportName]!;
      expect(missingFrom(expected, artifacts[contract as DevnetContractName].abi)).toEqual([]);
    });
  }

  it("the check itself fails on a wrong shape (bool vs uint256 output, unindexed topic, renamed error)", () => {
    const wrong = [
      {
        type: "function",
        name: "nextTokenId",
        stateMutability: "view",
        inputs: [],
        outputs: [{ type: "bool", name: "" }],
      },
      {
        type: "event",
        name: "Transfer",
        inputs: [
          { name: "from", type: "address", indexed: true },
          { name: "to", type: "address", indexed: true },
          { name: "tokenId", type: "uint256", indexed: false },
        ],
      },
      { type: "error", name: "TooManyLocks", inputs: [] },
    ] as const satisfies Abi;
    expect(missingFrom(wrong, artifacts.VeLockNFT.abi)).toHaveLength(3);
  });

  it("the typed devnet ABIs (published + devnet extras) match the compiled contracts", () => {
    for (const [name, abi] of Object.entries(DEVNET_ABIS)) {
      // The typed ABIs carry every error (a nested call can bubble any up); solc lists only the ones a contract uses.
      const withoutErrors = (abi as Abi).filter((item) => item.type !== "error");
      expect(missingFrom(withoutErrors, artifacts[name as DevnetContractName].abi), name).toEqual([]);
    }
  });

  it("every devnet revert is a published error name (protocol.md §8), no invented ones", () => {
    const published = new Set<string>(PUBLISHED_ERROR_NAMES);
    for (const [name, artifact] of Object.entries(artifacts)) {
      const errors = artifact.abi.filter((item): item is AbiError => item.type === "error");
      for (const e of errors) {
        // The exceptions: ownerOf of a burned id, which EIP-721 requires to throw (OpenZeppelin's name), and the
        // published vault's own LockCooldown (declared in LpStakingVault7D, not in the Errors library).
        if (name === "VeLockNFT" && e.name === "ERC721NonexistentToken") continue;
        // The token's OpenZeppelin v5 errors (the published token is an OpenZeppelin v5 ERC20): the signatures
        // abis/Errors.ts declares, arguments included.
        const tokenError = TokenErrorsAbi.find((t) => t.name === e.name);
        if (tokenError && (name === "AssetToken" || name === "LpToken")) {
          expect(errorSelector(e), `${name}: ${e.name}`).toBe(errorSelector(tokenError as AbiError));
          continue;
        }
        if (name === "LpStakingVault7D" && (PUBLISHED_LOCAL_ERROR_NAMES as readonly string[]).includes(e.name)) {
          expect(e.inputs).toHaveLength(0);
          continue;
        }
        expect(published.has(e.name) && e.inputs.length === 0, `${name}: ${e.name}`).toBe(true);
      }
    }
    // The token reverts them (LpToken declares them too, inherited, but reverts reason strings as the pool does).
    const tokenErrors = artifacts.AssetToken.abi.filter((i) => i.type === "error").map((i) => (i as AbiError).name);
    expect(tokenErrors.sort()).toEqual(["ERC20InsufficientAllowance", "ERC20InsufficientBalance", "NotAuthorized"]);
    // The lock flows reach the names users meet on Base.
    const veErrors = artifacts.VeLockNFT.abi.filter((i) => i.type === "error").map((i) => (i as AbiError).name);
    for (const n of ["NotAuthorized", "LockListedOrFrozen", "OnlyMineMarket", "MarketMustTransferToFurnace"]) {
      expect(veErrors).toContain(n);
    }
  });

  it("the compile cache returns the same artifacts", () => {
    expect(compileDevnet()).toEqual(artifacts);
  });
});
