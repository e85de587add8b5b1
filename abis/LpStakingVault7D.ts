/** LpStakingVault7D: LP staking with a 7-day unbond and token rewards. protocol.md §1. */
const u = (name: string) => ({ name, type: "uint256" }) as const;

export const LpStakingVault7DAbi = [
  { type: "function", name: "claimRewards", stateMutability: "nonpayable", inputs: [], outputs: [] },
  {
    type: "function",
    name: "claimRewardsAndLock",
    stateMutability: "nonpayable",
    inputs: [u("targetTokenId"), u("durationSeconds"), { name: "createAutoMax", type: "bool" }, u("minVeOut")],
    outputs: [],
  },
  { type: "function", name: "withdrawMatured", stateMutability: "nonpayable", inputs: [], outputs: [] },
  { type: "function", name: "stake", stateMutability: "nonpayable", inputs: [u("amount")], outputs: [] },
  { type: "function", name: "beginUnbond", stateMutability: "nonpayable", inputs: [u("amount")], outputs: [] },
  {
    type: "function",
    name: "earned",
    stateMutability: "view",
    inputs: [{ name: "user", type: "address" }],
    outputs: [u("")],
  },
  {
    type: "function",
    name: "stakedBalance",
    stateMutability: "view",
    inputs: [{ name: "user", type: "address" }],
    outputs: [u("")],
  },
  { type: "function", name: "lpToken", stateMutability: "view", inputs: [], outputs: [{ name: "", type: "address" }] },
  {
    type: "function",
    name: "getUnbondCount",
    stateMutability: "view",
    inputs: [{ name: "user", type: "address" }],
    outputs: [u("")],
  },
  {
    type: "function",
    name: "getUnbondByIndex",
    stateMutability: "view",
    inputs: [{ name: "user", type: "address" }, u("index")],
    outputs: [u("unbondId"), u("amount"), u("unlockTime")],
  },
] as const;
