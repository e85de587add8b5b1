/** VeLockNFT (published as VeClaimNFT "veCLAIM"), the vote-escrow ERC-721. protocol.md §1–2. */
const u = (name: string) => ({ name, type: "uint256" }) as const;

export const VeLockNFTAbi = [
  {
    type: "function",
    name: "createLockFor",
    stateMutability: "nonpayable",
    inputs: [{ name: "user", type: "address" }, u("amount"), u("duration"), { name: "autoMax", type: "bool" }],
    outputs: [u("tokenId")],
  },
  {
    type: "function",
    name: "addToLockFor",
    stateMutability: "nonpayable",
    inputs: [{ name: "user", type: "address" }, u("tokenId"), u("amount")],
    outputs: [],
  },
  {
    type: "function",
    name: "extendLockToFor",
    stateMutability: "nonpayable",
    inputs: [{ name: "user", type: "address" }, u("tokenId"), u("newEnd")],
    outputs: [],
  },
  {
    type: "function",
    name: "mergeLocksFor",
    stateMutability: "nonpayable",
    inputs: [{ name: "user", type: "address" }, u("fromTokenId"), u("intoTokenId")],
    outputs: [],
  },
  {
    type: "function",
    name: "setAutoMax",
    stateMutability: "nonpayable",
    inputs: [u("tokenId"), { name: "enabled", type: "bool" }],
    outputs: [],
  },
  { type: "function", name: "unlock", stateMutability: "nonpayable", inputs: [u("tokenId")], outputs: [] },
  { type: "function", name: "totalLockedClaim", stateMutability: "view", inputs: [], outputs: [u("")] },
  {
    type: "function",
    name: "getLockInfo",
    stateMutability: "view",
    inputs: [u("tokenId")],
    outputs: [u("amount"), u("lockEnd"), { name: "autoMax", type: "bool" }, { name: "listed", type: "bool" }],
  },
  { type: "function", name: "lockStartOf", stateMutability: "view", inputs: [u("tokenId")], outputs: [u("")] },
  {
    type: "function",
    name: "veBalanceOf",
    stateMutability: "view",
    inputs: [{ name: "user", type: "address" }],
    outputs: [u("")],
  },
  {
    type: "function",
    name: "balanceOf",
    stateMutability: "view",
    inputs: [{ name: "owner", type: "address" }],
    outputs: [u("")],
  },
  {
    type: "function",
    name: "ownerOf",
    stateMutability: "view",
    inputs: [u("tokenId")],
    outputs: [{ name: "", type: "address" }],
  },
  { type: "function", name: "nextTokenId", stateMutability: "view", inputs: [], outputs: [u("")] },
  {
    type: "event",
    name: "LockCreated",
    anonymous: false,
    inputs: [
      { name: "user", type: "address", indexed: true },
      { name: "tokenId", type: "uint256", indexed: true },
      { name: "amount", type: "uint256", indexed: false },
      { name: "lockEnd", type: "uint256", indexed: false },
      { name: "autoMax", type: "bool", indexed: false },
    ],
  },
  {
    type: "event",
    name: "LockAmountIncreased",
    anonymous: false,
    inputs: [
      { name: "user", type: "address", indexed: true },
      { name: "tokenId", type: "uint256", indexed: true },
      { name: "amountAdded", type: "uint256", indexed: false },
    ],
  },
  {
    type: "event",
    name: "LockExtended",
    anonymous: false,
    inputs: [
      { name: "user", type: "address", indexed: true },
      { name: "tokenId", type: "uint256", indexed: true },
      { name: "oldEnd", type: "uint256", indexed: false },
      { name: "newEnd", type: "uint256", indexed: false },
    ],
  },
  {
    type: "event",
    name: "LockMerged",
    anonymous: false,
    inputs: [
      { name: "user", type: "address", indexed: true },
      { name: "fromTokenId", type: "uint256", indexed: true },
      { name: "intoTokenId", type: "uint256", indexed: true },
      { name: "amountMoved", type: "uint256", indexed: false },
    ],
  },
  {
    type: "event",
    name: "LockUnlocked",
    anonymous: false,
    inputs: [
      { name: "user", type: "address", indexed: true },
      { name: "tokenId", type: "uint256", indexed: true },
      { name: "amountReturned", type: "uint256", indexed: false },
    ],
  },
  {
    type: "event",
    name: "AutoMaxSet",
    anonymous: false,
    inputs: [
      { name: "user", type: "address", indexed: true },
      { name: "tokenId", type: "uint256", indexed: true },
      { name: "autoMax", type: "bool", indexed: false },
    ],
  },
  {
    // ERC-4906: the published contract's only signal of a listing change (setListed by the market, protocol.md §8);
    // also emitted after an AutoMax switch. getLockInfo's fourth value is the truth the indexer reads at its block.
    type: "event",
    name: "MetadataUpdate",
    anonymous: false,
    inputs: [{ name: "_tokenId", type: "uint256", indexed: false }],
  },
  {
    type: "event",
    name: "Transfer",
    anonymous: false,
    inputs: [
      { name: "from", type: "address", indexed: true },
      { name: "to", type: "address", indexed: true },
      { name: "tokenId", type: "uint256", indexed: true },
    ],
  },
] as const;
