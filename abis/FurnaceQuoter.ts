/** FurnaceQuoter: read-only quotes for Furnace entries. protocol.md §1. */
export const FurnaceQuoterAbi = [
  {
    // The quote of an ETH entry (published IFurnaceQuoter): the principal is what the Furnace's ETH→token swap
    // yields, which is how ShareholderRoyalties' mode 1 locks royalties (Furnace.lockEthReward).
    type: "function",
    name: "quoteEnterWithEth",
    stateMutability: "view",
    inputs: [
      { name: "user", type: "address" },
      { name: "ethIn", type: "uint256" },
      { name: "targetTokenId", type: "uint256" },
      { name: "durationSeconds", type: "uint256" },
      { name: "createAutoMax", type: "bool" },
    ],
    outputs: [
      { name: "principalClaim", type: "uint256" },
      { name: "bonusClaim", type: "uint256" },
      { name: "veOut", type: "uint256" },
      { name: "routeTokenId", type: "uint256" },
    ],
  },
  {
    type: "function",
    name: "quoteEnterWithClaim",
    stateMutability: "view",
    inputs: [
      { name: "user", type: "address" },
      { name: "claimIn", type: "uint256" },
      { name: "targetTokenId", type: "uint256" },
      { name: "durationSeconds", type: "uint256" },
      { name: "createAutoMax", type: "bool" },
    ],
    outputs: [
      { name: "principalClaim", type: "uint256" },
      { name: "bonusClaim", type: "uint256" },
      { name: "veOut", type: "uint256" },
      { name: "routeTokenId", type: "uint256" },
    ],
  },
  {
    type: "function",
    name: "durationWeightBps",
    stateMutability: "view",
    inputs: [{ name: "durationSeconds", type: "uint256" }],
    outputs: [{ name: "", type: "uint256" }],
  },
] as const;
