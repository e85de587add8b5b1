import { ponder } from "ponder:registry";
import { boardEntry, boardHour, boardTotal, lock, lockEvent, protocolEvent } from "ponder:schema";
import { zeroAddress } from "viem";
import {
  type BoardEntry,
  boardEntries,
  bucketOf,
  eventData,
  folded,
  hourId,
  PROTOCOL_EVENT_KINDS,
  totalId,
} from "../indexer/boards";
import { listedFlag } from "../indexer/lockInfo";
import {
  autoMaxSet,
  type EventOrigin,
  listingSet,
  lockAmountIncreased,
  lockCreated,
  lockEventRow,
  lockExtended,
  lockMerged,
  lockTransferred,
  lockUnlocked,
  transferKind,
} from "../indexer/rules";

// Ponder's build id hashes src/ only: this line carries the hash of the indexer/ modules imported above (the rules the
// rows are written by; not the RPC transport or the settings), so a change to them changes the build id and a restart on a schema the old rules wrote is refused, not resumed with two rules in one
// table (test/indexer/buildId.test.ts keeps it current). indexer rules: sha256 438c3a835016b6a8de59ecaed56cd6fd3e0ba803c25a48975c5055a5e3c3b486

// Thin on purpose: load the row, apply the pure rule of protocol.md §2 (indexer/rules.ts), store the result.

type Located = {
  block: { number: bigint; timestamp: bigint };
  transaction: { hash: `0x${string}` };
  log: { logIndex: number };
};
const origin = (event: Located): EventOrigin => ({
  block: { number: event.block.number, timestamp: event.block.timestamp },
  txHash: event.transaction.hash,
  logIndex: event.log.logIndex,
});

ponder.on("VeLockNFT:LockCreated", async ({ event, context }) => {
  const at = origin(event);
  const row = lockCreated(event.args, at.block);
  await context.db.insert(lock).values(row);
  await context.db
    .insert(lockEvent)
    .values(lockEventRow("create", row, at, { account: event.args.user, amount: event.args.amount }));
});

ponder.on("VeLockNFT:LockAmountIncreased", async ({ event, context }) => {
  const at = origin(event);
  const row = await context.db
    .update(lock, { tokenId: event.args.tokenId })
    .set((current) => lockAmountIncreased(current, event.args, at.block));
  await context.db
    .insert(lockEvent)
    .values(lockEventRow("topup", row, at, { account: event.args.user, amount: event.args.amountAdded }));
});

ponder.on("VeLockNFT:LockExtended", async ({ event, context }) => {
  const at = origin(event);
  const row = await context.db
    .update(lock, { tokenId: event.args.tokenId })
    .set((current) => lockExtended(current, event.args, at.block));
  await context.db.insert(lockEvent).values(lockEventRow("extend", row, at, { account: event.args.user }));
});

ponder.on("VeLockNFT:LockMerged", async ({ event, context }) => {
  const at = origin(event);
  const { fromTokenId, intoTokenId } = event.args;
  const [from, into] = await Promise.all([
    context.db.find(lock, { tokenId: fromTokenId }),
    context.db.find(lock, { tokenId: intoTokenId }),
  ]);
  if (!from || !into) throw new Error(`LockMerged ${fromTokenId} → ${intoTokenId}: lock not indexed`);
  const next = lockMerged(from, into, event.args, at.block);
  await context.db.update(lock, { tokenId: fromTokenId }).set(next.from);
  await context.db.update(lock, { tokenId: intoTokenId }).set(next.into);
  await context.db.insert(lockEvent).values(
    lockEventRow("merge", next.into, at, {
      account: event.args.user,
      amount: event.args.amountMoved,
      fromTokenId,
    }),
  );
});

ponder.on("VeLockNFT:LockUnlocked", async ({ event, context }) => {
  const at = origin(event);
  const row = await context.db
    .update(lock, { tokenId: event.args.tokenId })
    .set((current) => lockUnlocked(current, event.args, at.block));
  await context.db
    .insert(lockEvent)
    .values(lockEventRow("unlock", row, at, { account: event.args.user, amount: event.args.amountReturned }));
});

/**
 * The MetadataUpdate an AutoMax switch emits right after its AutoMaxSet (protocol.md §8) changes no listing (a listed
 * lock cannot switch), so its getLockInfo read is skipped. Only an optimisation: events are handled in log order,
 * and whenever this is lost (a restart between the two) the read happens and gives the same answer.
 */
let afterAutoMaxSet: string | null = null;

ponder.on("VeLockNFT:AutoMaxSet", async ({ event, context }) => {
  const at = origin(event);
  afterAutoMaxSet = `${at.txHash}-${at.logIndex + 1}-${event.args.tokenId}`;
  const row = await context.db
    .update(lock, { tokenId: event.args.tokenId })
    .set((current) => autoMaxSet(current, event.args, at.block));
  await context.db.insert(lockEvent).values(lockEventRow("automax", row, at, { account: event.args.user }));
});

ponder.on("VeLockNFT:Transfer", async ({ event, context }) => {
  const at = origin(event);
  // Mints and burns change nothing here (LockCreated / LockMerged / LockUnlocked do); only a sell-back does.
  if (transferKind(event.args) !== "move") return;
  const current = await context.db.find(lock, { tokenId: event.args.tokenId });
  const row = lockTransferred(current ?? null, event.args, at.block);
  if (row === null) return;
  await context.db.update(lock, { tokenId: event.args.tokenId }).set(row);
  await context.db
    .insert(lockEvent)
    .values(lockEventRow("transfer", row, at, { account: event.args.from, recipient: event.args.to }));
});

ponder.on("VeLockNFT:MetadataUpdate", async ({ event, context }) => {
  const at = origin(event);
  const tokenId = event.args._tokenId;
  if (afterAutoMaxSet === `${at.txHash}-${at.logIndex}-${tokenId}`) return;
  const current = await context.db.find(lock, { tokenId });
  if (!current || current.burned) return;
  // The event carries no flag (and an AutoMax switch emits it too): getLockInfo's fourth value at the event's
  // block is the truth (Ponder's client reads at the event's block by default, i.e. the END of that block: a
  // sale's unlist → transfer → burn in one transaction reads the burned lock). A reverted read is "not listed",
  // never an error that stops the indexer (indexer/lockInfo.ts).
  const { listed } = await listedFlag(() =>
    context.client.readContract({
      abi: context.contracts.VeLockNFT.abi,
      address: context.contracts.VeLockNFT.address,
      functionName: "getLockInfo",
      args: [tokenId],
    }),
  );
  const row = listingSet(current, listed, at.block);
  if (row === null) return;
  await context.db.update(lock, { tokenId }).set(row);
  await context.db
    .insert(lockEvent)
    .values(lockEventRow(listed ? "list" : "unlist", row, at, { account: current.owner ?? event.transaction.from }));
});

// --- the official leaderboards' events (protocol.md §9): the activity row, then each board contribution into its
// immutable entry, its hour bucket and its lifetime total (indexer/boards.ts).

type BoardContext = Parameters<Parameters<typeof ponder.on<"MineCore:Takeover">>[1]>[0]["context"];

async function recordBoardEvent(
  context: BoardContext,
  event: Located,
  kind: string,
  accounts: { account: `0x${string}`; other?: `0x${string}` | null },
  args: Record<string, unknown>,
  entries: BoardEntry[],
) {
  const at = origin(event);
  const id = `${at.txHash}-${at.logIndex}`;
  await context.db.insert(protocolEvent).values({
    id,
    kind,
    account: accounts.account.toLowerCase() as `0x${string}`,
    other: accounts.other ? (accounts.other.toLowerCase() as `0x${string}`) : null,
    data: eventData(args),
    blockNumber: at.block.number,
    blockTime: at.block.timestamp,
    txHash: at.txHash,
    logIndex: at.logIndex,
  });
  for (const e of entries) {
    const time = at.block.timestamp;
    await context.db.insert(boardEntry).values({
      id: `${id}-${e.board}`,
      board: e.board,
      account: e.account,
      value: e.value,
      blockNumber: at.block.number,
      blockTime: time,
    });
    const hour = await context.db.find(boardHour, { id: hourId(e, time) });
    await context.db
      .insert(boardHour)
      .values({
        id: hourId(e, time),
        board: e.board,
        account: e.account,
        hour: bucketOf(time),
        ...folded(null, e.value),
      })
      .onConflictDoUpdate(() => folded(hour ?? null, e.value));
    const total = await context.db.find(boardTotal, { id: totalId(e) });
    await context.db
      .insert(boardTotal)
      .values({
        id: totalId(e),
        board: e.board,
        account: e.account,
        ...folded(null, e.value),
        lastBlock: at.block.number,
        firstBlock: at.block.number,
      })
      .onConflictDoUpdate(() => ({ ...folded(total ?? null, e.value), lastBlock: at.block.number }));
  }
}

ponder.on("MineCore:Takeover", async ({ event, context }) => {
  const { newKing, previousKing } = event.args;
  const entries = boardEntries({ name: "Takeover", args: event.args });
  const other = previousKing === zeroAddress ? null : previousKing;
  await recordBoardEvent(
    context,
    event,
    PROTOCOL_EVENT_KINDS.Takeover,
    { account: newKing, other },
    event.args,
    entries,
  );
});

ponder.on("MineCore:ReignFinalized", async ({ event, context }) => {
  const entries = boardEntries({ name: "ReignFinalized", args: event.args });
  const kind = PROTOCOL_EVENT_KINDS.ReignFinalized;
  await recordBoardEvent(context, event, kind, { account: event.args.king }, event.args, entries);
});

ponder.on("Furnace:FurnaceEnter", async ({ event, context }) => {
  const entries = boardEntries({ name: "FurnaceEnter", args: event.args });
  const kind = PROTOCOL_EVENT_KINDS.FurnaceEnter;
  await recordBoardEvent(context, event, kind, { account: event.args.user }, event.args, entries);
});

ponder.on("ShareholderRoyalties:ShareholderClaim", async ({ event, context }) => {
  const entries = boardEntries({ name: "ShareholderClaim", args: event.args });
  const kind = PROTOCOL_EVENT_KINDS.ShareholderClaim;
  await recordBoardEvent(context, event, kind, { account: event.args.user }, event.args, entries);
});
