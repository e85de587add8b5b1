import type { ErrorCode } from "../../../http/errors";
import type { Manifest } from "../../../manifest";
import type { RouteDefinition } from "../../../route/definition";
import {
  ADDRESS_PATTERN,
  constant,
  HEX_DATA_PATTERN,
  HEX_QUANTITY_PATTERN,
  integer,
  type JsonSchema,
  nullable,
  object,
  uintString,
} from "../../../route/jsonSchema";
import { exampleChain } from "./exampleChain";
import { ACTIONS, type PrepareAction } from "./index";

/**
 * The ten prepare routes as documented routes, derived from the ACTIONS table that serves them
 * (api/mcp/v1/prepare/index.ts): path, verb, steps, params and description come from there. What the
 * table does not carry is added here: the example request of each action, and the extra envelope
 * field lock-via-furnace returns. Both are checked against live answers by test/openapi.
 */

const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** One request per action, as an assistant would send it on Base. */
export const PREPARE_EXAMPLE_REQUESTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "collect-all": {},
  "collect-royalties": {
    mode: "1",
    durationSeconds: "31536000",
    createAutoMax: "true",
    minVeOutWei: "118000000000000000000",
  },
  "harvest-rewards": {},
  "withdraw-lp": {},
  "lock-via-furnace": {
    user: WALLET,
    claimAmountWei: "5000000000000000000000",
    durationSeconds: "31536000",
    createAutoMax: "true",
  },
  "stake-lp": { user: WALLET, amountWei: "100000000000000000000" },
  "unbond-lp": { amountWei: "100000000000000000000" },
  lock: { user: WALLET, amountWei: "1000000000000000000000", durationSecs: "15552000" },
  topup: { user: WALLET, tokenId: "1", amountWei: "500000000000000000000" },
  extend: { user: WALLET, tokenId: "1", newEnd: "1798761600" },
};

/** Envelope fields an action adds beside `transactions` (PrepareEnvelope allows them; these are the ones served). */
function pendingQuote(amount: "ethAmountWei" | "claimAmountWei", what: string, when: string): JsonSchema {
  return object(
    {
      [amount]: uintString(what),
      veOutWei: uintString("Voting power the entry mints, as quoted (wei)."),
      minVeOutWei: uintString("The least voting power the encoded entry accepts (wei)."),
      slippageBps: integer("The slippage applied, in basis points (a JSON number).", { minimum: 0, maximum: 10_000 }),
    },
    {
      description:
        `${when} without minVeOutWei only: the quote the entry was protected with (/quote/lock-via-furnace with ` +
        `${amount} shows the same numbers at the same block).`,
    },
  );
}
const ROYALTY_QUOTE = pendingQuote(
  "ethAmountWei",
  "The pending royalties quoted: the ETH the Furnace swaps into the token (wei).",
  "Mode 1",
);
const REWARD_QUOTE = pendingQuote(
  "claimAmountWei",
  "The pending LP rewards quoted: the tokens the vault enters into the Furnace (wei).",
  "compound=true",
);

/** lock, topup, extend: Furnace-only functions on the published contracts (lock.ts), said in every unproven answer. */
const warningSchema = (): JsonSchema =>
  suggestionSchema(
    "Why the batch will revert from a wallet, and what to do instead.",
    "Present when the simulation did not run or did not pass: on the published contracts only the Furnace may " +
      "call this function, so a wallet's batch reverts NotAuthorized. Do not hand the batch to the wallet.",
  );

const EXTRA_FIELDS: Readonly<Record<string, Record<string, JsonSchema>>> = {
  "collect-all": { quote: ROYALTY_QUOTE },
  "collect-royalties": { quote: ROYALTY_QUOTE },
  "harvest-rewards": { quote: REWARD_QUOTE },
  "lock-via-furnace": {
    quote: object(
      {
        veOutWei: uintString("Voting power the entry mints, as quoted (wei)."),
        minVeOutWei: uintString("The least voting power the encoded entry accepts (wei)."),
        slippageBps: integer("The slippage applied, in basis points (a JSON number, as the reference sends it).", {
          minimum: 0,
          maximum: 10_000,
        }),
      },
      { description: "The quote the entry was protected with (the same numbers /quote/lock-via-furnace shows)." },
    ),
  },
  lock: { warning: warningSchema() },
  topup: { warning: warningSchema() },
  extend: { warning: warningSchema() },
};

/**
 * Extra fields an action adds only for some requests (the quote of a pending entry: without minVeOutWei; the warning
 * of a Furnace-only function: when the simulation did not run or did not pass).
 */
const OPTIONAL_EXTRA_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "collect-all": ["quote"],
  "collect-royalties": ["quote"],
  "harvest-rewards": ["quote"],
  lock: ["warning"],
  topup: ["warning"],
  extend: ["warning"],
};

function transactionSchema(step: string): JsonSchema {
  return object(
    {
      step: constant(step, "Informational label for narrating this transaction."),
      to: { type: "string", pattern: ADDRESS_PATTERN, description: "The contract to call." },
      data: { type: "string", pattern: HEX_DATA_PATTERN, description: "The calldata." },
      value: { type: "string", pattern: HEX_QUANTITY_PATTERN, description: "ETH to send, 0x-hex (always 0x0)." },
      chainId: integer("The chain to send it on."),
      gas: {
        type: "string",
        pattern: HEX_QUANTITY_PATTERN,
        description:
          "Gas limit, 0x-hex: the simulated gas + 30 % + 10000 (refunds, nested-call reserve). Present only when " +
          "the batch was simulated.",
      },
    },
    { optional: ["gas"] },
  );
}

const revertSchema = object(
  {
    name: nullable(
      { type: "string" },
      "The published error name (e.g. NotAuthorized), Error/Panic, or null when unknown.",
    ),
    args: { type: "array", items: { type: "string" }, description: "The error's arguments as strings." },
    selector: nullable(
      { type: "string", pattern: "^0x[0-9a-f]{8}$" },
      "The 4-byte selector of the revert data, or null for a revert without data.",
    ),
  },
  { description: "Why the step reverted." },
);

/** simulation.hint and a Furnace-only action's warning: a message, and where one exists the action to use instead. */
function suggestionSchema(message: string, description: string): JsonSchema {
  return object(
    {
      message: { type: "string", description: message },
      action: { type: "string", description: "A prepare action that does what the failing call meant to do." },
      params: {
        type: "object",
        additionalProperties: { type: "string" },
        description: "Its parameters.",
      },
      path: { type: "string", description: "The same as a path to GET." },
    },
    { optional: ["action", "params", "path"], description },
  );
}

const hintSchema = suggestionSchema(
  "What the wallet can do instead.",
  "A short suggestion for the first failing step.",
);

/** `simulation`: the batch run as `user` (eth_simulateV1), or why it was not run (simulation.ts). */
export const simulationSchema: JsonSchema = {
  description:
    "The batch simulated as `user` at the latest block (state carried from step to step). A failed simulation " +
    "still comes with the batch (unless requireSimulationOk=true): decide before asking the person to sign.",
  oneOf: [
    object(
      {
        ok: { type: "boolean", description: "true exactly when every step succeeds." },
        blockNumber: uintString("The block the simulation ran on."),
        steps: {
          type: "array",
          description: "One per transaction, in order.",
          items: object(
            {
              step: { type: "string", description: "The transaction's step label." },
              ok: { type: "boolean", description: "Whether this step succeeds." },
              gasUsed: uintString("Gas the step used in the simulation."),
              error: revertSchema,
            },
            { optional: ["error"] },
          ),
        },
        hint: hintSchema,
      },
      { optional: ["hint"] },
    ),
    object(
      {
        ok: constant(null),
        skipped: {
          enum: ["no-user", "disabled", "unsupported", "node-failed"],
          description:
            "no-user: called without user; disabled: simulate=false; unsupported: the node lacks eth_simulateV1; " +
            "node-failed: the node timed out or errored.",
        },
        message: { type: "string", description: "The same, in a sentence." },
        reason: { type: "string", description: "node-failed: how the node failed (timeout, rpc, http, …)." },
      },
      { optional: ["reason"] },
    ),
  ],
};

/** The step sequences an action can return: the approve step is there only when the allowance is short. */
function transactionsSchema(steps: readonly string[]): JsonSchema {
  const sequences = steps.includes("approve") ? [steps.filter((s) => s !== "approve"), steps] : [steps];
  const exactly = (seq: readonly string[]): JsonSchema => ({
    type: "array",
    prefixItems: seq.map(transactionSchema),
    items: false,
    minItems: seq.length,
  });
  const description = "The transactions to send in this order (send_calls consumes to, data, value, chainId).";
  return sequences.length === 1
    ? { ...exactly(sequences[0]!), description }
    : { oneOf: sequences.map(exactly), description };
}

export function prepareEnvelopeSchema(action: PrepareAction): JsonSchema {
  return object(
    {
      ok: constant(true),
      chain: { type: "string", description: "The chain label of the deployment (e.g. base)." },
      chainId: integer("8453 on production, 84532 on staging."),
      transactions: transactionsSchema(action.steps),
      ...EXTRA_FIELDS[action.action],
      simulation: simulationSchema,
    },
    { optional: OPTIONAL_EXTRA_FIELDS[action.action] ?? [] },
  );
}

/** What an action can answer besides 200, from what its pipeline does (pipeline.ts: gate, manifest, parse, reads). */
export function prepareErrors(action: PrepareAction): ErrorCode[] {
  const codes: ErrorCode[] = [
    "BAD_PARAMS",
    "GENESIS_NOT_FINALIZED",
    "CHAIN_UNREADY",
    "PREFLIGHT_READ_FAILED",
    "UPSTREAM_UNAVAILABLE",
  ];
  // An approve step is decided by an allowance read, a pending entry's quote by the pending amount; the Furnace
  // entries read a quote (for every request, or for those of needsWhen).
  const quotes = [...action.needs, ...(action.needsWhen?.contracts ?? [])].includes("FurnaceQuoter");
  if (action.steps.includes("approve") || quotes) codes.push("STATE_READ_FAILED");
  if (quotes) codes.push("QUOTE_FAILED");
  // Every action that can make a new lock reads the wallet's lock count first (lockLimit.ts): the Furnace entries
  // (targetTokenId=0) and prepare/lock.
  if (quotes || action.function === "createLockFor") codes.push("LOCK_LIMIT_REACHED");
  // Only with requireSimulationOk=true (pipeline.ts): the simulation as a gate.
  codes.push("SIMULATION_REVERTED", "SIMULATION_UNAVAILABLE");
  return codes;
}

export const toolName = (action: string) => `prepare_${action.replaceAll("-", "_")}`;

function narration(action: PrepareAction): string {
  const steps = action.steps.map((s) => (s === "approve" ? "approve (only when the allowance is short)" : s));
  return (
    `${action.description}\n\nNarrate this to the user as "${action.verb}"; never use "claim" as a verb. ` +
    `Steps, in order: ${steps.join(", then ")}. On-chain: ${action.contract}.${action.function}. ` +
    "Nothing is signed or sent by this service: the wallet sends the transactions."
  );
}

export function prepareRouteDefinition(action: PrepareAction): RouteDefinition {
  const exampleRequest = PREPARE_EXAMPLE_REQUESTS[action.action];
  if (!exampleRequest) throw new Error(`prepare action ${action.action} has no documentation example`);
  return {
    path: `/prepare/${action.action}`,
    operationId: toolName(action.action),
    summary: `${action.verb} (${action.action})`,
    description: narration(action),
    query: action.params,
    errors: prepareErrors(action),
    exampleRequest,
    verb: action.verb,
    steps: action.steps,
    // Filled in by prepareExample: it runs the action's own pipeline.
    response: { schema: prepareEnvelopeSchema(action), example: undefined },
  };
}

/** The served pattern of every prepare route (index.ts registers one route for all actions). */
export const PREPARE_SERVED_PATH = "/prepare/:action";

export const prepareRouteDefinitions = (): RouteDefinition[] => ACTIONS.map(prepareRouteDefinition);

/**
 * The example answer of an action: its own pipeline run on `manifest` (production addresses) against
 * the fixed example chain, with the gate open.
 */
export async function prepareExample(action: PrepareAction, manifest: Manifest): Promise<unknown> {
  const query = new URLSearchParams(PREPARE_EXAMPLE_REQUESTS[action.action]).toString();
  const url = `http://example/api/mcp/v1/prepare/${action.action}${query ? `?${query}` : ""}`;
  return action.run({ gate: { assertFinalized: async () => {} }, rpc: exampleChain, config: { manifest } }, url);
}
