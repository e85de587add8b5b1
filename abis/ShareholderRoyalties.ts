/** ShareholderRoyalties: ETH royalties, paid out or locked via the Furnace. protocol.md §1. */
export const ShareholderRoyaltiesAbi = [
  {
    type: "function",
    name: "claimShareholder",
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
  {
    type: "function",
    name: "claimableEth",
    stateMutability: "view",
    inputs: [{ name: "user", type: "address" }],
    outputs: [{ name: "", type: "uint256" }],
  },
] as const;
