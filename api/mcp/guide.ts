/**
 * What the server tells an assistant about itself, in both eras: the instructions (initialize, server/discover) and
 * the `asset://guide` resource. The tool groups are named from the tools themselves, so a new tool lands in a group
 * or fails the test that every tool has one (test/mcp/eras.test.ts).
 */

/** A tool as the guide lists it. */
export type GuideTool = { name: string; title?: string; description?: string };

/** The groups, in the order an assistant meets them; `supply` has no tools (plain REST, see the instructions). */
export const TOOL_GROUPS = ["supply", "state", "quotes", "prepares", "index"] as const;
export type ToolGroup = (typeof TOOL_GROUPS)[number];

const INDEX_TOOLS = new Set([
  "get_lock",
  "get_lock_history",
  "get_account_history",
  "get_account_locks",
  "get_ve_leaderboard",
  "get_ve_rank",
  "get_lock_stats",
  "get_leaderboard",
  "get_leaderboard_rank",
  "get_activity",
  "get_activity_item",
  "get_account_profile",
]);

export function toolGroup(name: string): ToolGroup | null {
  if (name.startsWith("prepare_")) return "prepares";
  if (name.startsWith("quote_")) return "quotes";
  if (name === "get_state" || name === "get_preflight") return "state";
  if (name.endsWith("_supply")) return "supply";
  if (INDEX_TOOLS.has(name)) return "index";
  return null;
}

export const INSTRUCTIONS = `Reads and unsigned transactions for the protocol on Base. The tools come in groups. State: get_state (a wallet's balances, locks, royalties and rewards) and get_preflight (is genesis finalized). Quotes: quote_lock_via_furnace (the voting power a Furnace entry gives, and its minimum under a slippage bound). Prepares: the prepare_* tools (Collect, Harvest, Withdraw, Lock via Furnace, Stake, Unbond, Lock, Top up, Extend). Index: get_lock, get_lock_history, get_account_history, get_account_locks, get_ve_leaderboard, get_ve_rank, get_lock_stats, get_leaderboard and get_leaderboard_rank (the official duration boards: 24h, 7d, 30d, lifetime), get_activity and get_activity_item (the protocol's events), get_account_profile (an account on every board) — the index at one block, with blockNumber. Supply: the token's total, circulating and max supply are plain REST (GET /api/supply/total, /circulating, /max), not tools. Resources: asset://guide (how values are written, what this server never does), asset://stats, asset://leaderboards/ve, asset://locks/{tokenId}, asset://accounts/{address}/locks. Prompts: review_my_locks, lock_via_furnace, collect_everything. Typical flow: get_state for the wallet, quote_lock_via_furnace when locking via the Furnace, then a prepare_* tool. A prepare tool returns { ok, chain, chainId, transactions, simulation }: give user (the signing wallet) so the batch is simulated as that wallet; check simulation.ok (and its hint) before asking the user to sign, then pass transactions, in order, to the wallet's send_calls; this server never signs or sends anything. prepare_lock, prepare_topup and prepare_extend encode functions only the Furnace may call on the published contracts: a wallet's batch reverts NotAuthorized, and their answers carry a warning unless the simulation passed; use prepare_lock_via_furnace for a wallet's new lock or top-up. Describe each action to the user with its verb (Collect, Harvest, Withdraw, Lock via Furnace, Stake, Unbond, Lock, Top up, Extend); never use "claim" as a verb. All amounts are decimal strings in wei. A failed call returns { ok: false, error, message, detail } with isError set.`;

const UNITS = {
  amounts:
    "Every token or ETH amount is a decimal string in wei (the smallest unit, 18 decimals): 1 token = " +
    '"1000000000000000000". Never a float, never hex, never scientific notation.',
  wei: "Parameters ending in Wei (amountWei, claimAmountWei, minVeOutWei) and answers' *Wei fields are wei strings.",
  durations:
    "durationSeconds / durationSecs are whole seconds: a new lock is 604800 (7 days) to 31536000 (365 days). " +
    "newEnd (Extend) is a unix time in seconds.",
  autoMax:
    "AutoMax keeps a lock at the maximum length (365 days) until turned off: createAutoMax=true / autoMax=true " +
    "needs a duration of exactly 31536000 and applies to a new lock only.",
  slippage: "slippageBps is the tolerated shortfall of voting power against the quote, in basis points (50 = 0.5%).",
  blocks:
    "Index tools and resources answer at one block (blockNumber, blockTimestamp); pass block to read an earlier " +
    "one. Token ids and block numbers are decimal strings.",
  verbs:
    "Describe actions with their verbs: Collect, Harvest, Withdraw, Lock via Furnace, Stake, Unbond, Lock, Top up, " +
    'Extend. Never "claim".',
};

const NEVER = [
  "signs, sends or broadcasts a transaction: prepare_* tools return unsigned calldata for the user's wallet",
  "holds keys, accounts, sessions or cookies: every answer is public and the same for everyone",
  "moves funds or approves spending on its own: an approve step appears only in a prepared batch, for the exact amount",
  "guesses: an amount it cannot read or a rule it cannot check is refused with { ok: false, error, message }",
];

/** The `asset://guide` resource's JSON text: every tool with its group and what it does, the units, the limits. */
export function guideText(tools: readonly GuideTool[]): string {
  return JSON.stringify({
    tools: tools.map((t) => ({
      name: t.name,
      group: toolGroup(t.name),
      title: t.title ?? t.name,
      description: (t.description ?? "").split("\n\n")[0],
    })),
    groups: {
      supply: "Total, circulating and max supply: REST only, GET /api/supply/total, /circulating, /max.",
      state: "A wallet's balances, locks and pending royalties and rewards, read live from the chain.",
      quotes: "What a Furnace entry would give, before preparing it.",
      prepares: "Unsigned transaction batches, simulated as the user's wallet.",
      index: "The lock index at one block: locks, histories, the ve leaderboard, statistics.",
    },
    units: UNITS,
    neverDoes: NEVER,
  });
}
