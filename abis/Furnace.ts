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
] as const;
