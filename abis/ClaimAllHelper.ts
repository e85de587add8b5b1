/** ClaimAllHelper: collects royalties and withdraws the King's ETH balance in one call (the published contract; not LP rewards). protocol.md §1. */
export const ClaimAllHelperAbi = [
  {
    type: "function",
    name: "claimAll",
    stateMutability: "nonpayable",
    inputs: [
      { name: "mode", type: "uint8" },
      { name: "targetTokenId", type: "uint256" },
      { name: "durationSeconds", type: "uint256" },
      { name: "createAutoMax", type: "bool" },
      { name: "minVeOut", type: "uint256" },
    ],
    outputs: [],
  },
] as const;
