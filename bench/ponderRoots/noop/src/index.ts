import { ponder } from "ponder:registry";

// The baseline of bench/indexer-backfill.ts: the same events (so Ponder fetches the same logs), no work.
ponder.on("VeLockNFT:LockCreated", async () => {});
ponder.on("VeLockNFT:LockAmountIncreased", async () => {});
ponder.on("VeLockNFT:LockExtended", async () => {});
ponder.on("VeLockNFT:LockMerged", async () => {});
ponder.on("VeLockNFT:LockUnlocked", async () => {});
ponder.on("VeLockNFT:AutoMaxSet", async () => {});
ponder.on("VeLockNFT:Transfer", async () => {});
