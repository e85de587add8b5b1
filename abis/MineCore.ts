/**
 * MineCore: the throne. Only its two events are declared, exactly as published (protocol.md §9): the king and
 * takeover boards' input. A reign is finalized when its king is dethroned; the current reign is not.
 */
export const MineCoreAbi = [
  {
    type: "event",
    name: "Takeover",
    inputs: [
      { name: "reignId", type: "uint256", indexed: true },
      { name: "previousKing", type: "address", indexed: true },
      { name: "newKing", type: "address", indexed: true },
      { name: "pricePaid", type: "uint256", indexed: false },
      { name: "referencePrice", type: "uint256", indexed: false },
      { name: "timestamp", type: "uint256", indexed: false },
    ],
    anonymous: false,
  },
  {
    type: "event",
    name: "ReignFinalized",
    inputs: [
      { name: "reignId", type: "uint256", indexed: true },
      { name: "king", type: "address", indexed: true },
      { name: "startTime", type: "uint256", indexed: false },
      { name: "endTime", type: "uint256", indexed: false },
      { name: "totalClaimMined", type: "uint256", indexed: false },
      { name: "totalEthToKing", type: "uint256", indexed: false },
    ],
    anonymous: false,
  },
] as const;
