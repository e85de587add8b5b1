/** LaunchController: the genesis gate. protocol.md §1. */
export const LaunchControllerAbi = [
  {
    type: "function",
    name: "preflight",
    stateMutability: "view",
    inputs: [],
    outputs: [
      { name: "statusBitmask", type: "uint256" },
      { name: "requiredSeedEth", type: "uint256" },
    ],
  },
] as const;
