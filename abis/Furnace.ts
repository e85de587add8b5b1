/** Furnace: locks the token with a bonus. protocol.md §1. */
export const FurnaceAbi = [
  {
    type: "function",
    name: "enterWithClaim",
    stateMutability: "nonpayable",
    inputs: [
      { name: "claimAmount", type: "uint256" },
      { name: "targetTokenId", type: "uint256" },
      { name: "durationSeconds", type: "uint256" },
      { name: "createAutoMax", type: "bool" },
      { name: "minVeOut", type: "uint256" },
    ],
    outputs: [{ name: "tokenIdUsed", type: "uint256" }],
  },
  // Published (protocol.md §9): the furnace boards' input. mode 0 ETH, 1 token, 2 royalty lock, 3 other token, 4 bonus-only.
  {
    type: "event",
    name: "FurnaceEnter",
    inputs: [
      { name: "user", type: "address", indexed: true },
      { name: "mode", type: "uint8", indexed: false },
      { name: "ethIn", type: "uint256", indexed: false },
      { name: "principalClaim", type: "uint256", indexed: false },
      { name: "bonusClaim", type: "uint256", indexed: false },
      { name: "tokenId", type: "uint256", indexed: false },
    ],
    anonymous: false,
  },
] as const;
