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
  // Published (protocol.md §9): the royalties board's input. mode 0 paid in ETH, 1 locked through the Furnace.
  {
    type: "event",
    name: "ShareholderClaim",
    inputs: [
      { name: "user", type: "address", indexed: true },
      { name: "mode", type: "uint8", indexed: false },
      { name: "amountEth", type: "uint256", indexed: false },
    ],
    anonymous: false,
  },
] as const;
