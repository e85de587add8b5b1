/**
 * The MCP prompts (both eras): the common tasks as a user message that chains the existing tools in the order the
 * service expects (read, quote, prepare, check the simulation, hand the batch to the wallet). Arguments are strings
 * (the protocol's rule for prompt arguments); a prompt never reads anything itself, so prompts/get is free of I/O
 * and the same for everyone.
 */

import { BadParamsError } from "../http/errors";
import { parseAddress, parseUint256, parseUintInRange, refuseZeroAddress } from "../http/params";
import { MAX_LOCK_DURATION, MIN_LOCK_DURATION } from "../math";
import { MAX_AMOUNT_WEI } from "./v1/prepare/approval";

export type PromptArgument = {
  name: string;
  description: string;
  required: boolean;
  /** The only values it takes, where there are few (another is refused, never read as the default). */
  oneOf?: readonly string[];
  /**
   * The form the tool the prompt calls with it takes (throws BadParamsError): a prompt that renders a value the tool
   * refuses hands the assistant a plan that fails at its first call, or reads as something else (`amountWei=1e18`).
   */
  check?: (param: string, raw: string) => void;
};
export type PromptDefinition = {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  render(args: Record<string, string>): string;
};

/** Why prompts/get was refused: an unknown prompt or argument, or a missing one (InvalidParams in both eras). */
export class PromptError extends Error {}

const ADDRESS: PromptArgument = {
  name: "address",
  description: "The wallet (0x address) whose locks and rewards to use.",
  required: true,
  // The wallet that signs the prepared batch: the tools refuse the zero address as `user`.
  check: (param, raw) => void refuseZeroAddress(param, parseAddress(param, raw)),
};

export const PROMPTS: readonly PromptDefinition[] = [
  {
    name: "review_my_locks",
    title: "Review my locks",
    description: "Review a wallet's vote-escrow locks: amounts, ends, AutoMax, voting power and rank, at one block.",
    arguments: [ADDRESS],
    render: (a) =>
      `Review the vote-escrow locks of ${a.address}.\n` +
      `1. Call get_account_locks with address=${a.address} (or read the resource asset://accounts/${a.address}/locks); note its blockNumber.\n` +
      `2. Call get_ve_rank with address=${a.address} and block set to that blockNumber, so both answers are at one block.\n` +
      `3. Call get_state with address=${a.address} for the wallet's balances and what it can collect now.\n` +
      "Summarise each lock (token id, amount in tokens from amountWei, end date from lockEnd, AutoMax, voting power), " +
      "the total voting power and the rank, and point out locks that end soon (an Extend or AutoMax keeps their power). " +
      "Amounts are wei strings: divide by 10^18 for tokens. Do not prepare any transaction unless the user asks.",
  },
  {
    name: "lock_via_furnace",
    title: "Lock via Furnace",
    description:
      "Lock tokens via the Furnace with a quote first and a slippage bound, then prepare the batch for the wallet.",
    arguments: [
      ADDRESS,
      {
        name: "amountWei",
        description: "Token amount to lock, a decimal string in wei.",
        required: true,
        check: (param, raw) => void parseUintInRange(param, raw, 1n, MAX_AMOUNT_WEI),
      },
      {
        name: "durationSeconds",
        description:
          "New lock: duration in seconds, 604800 (7 days) to 31536000 (365 days). Omit for an existing lock.",
        required: false,
        check: (param, raw) => void parseUintInRange(param, raw, MIN_LOCK_DURATION, MAX_LOCK_DURATION),
      },
      {
        name: "targetTokenId",
        description: "The lock to add to; omit (or 0) to create a new lock.",
        required: false,
        check: (param, raw) => void parseUint256(param, raw),
      },
      {
        name: "slippageBps",
        description: "Tolerated shortfall of voting power against the quote, in basis points (default 50).",
        required: false,
        check: (param, raw) => void parseUintInRange(param, raw, 0n, 10_000n),
      },
    ],
    render: (a) => {
      // A new lock without a duration is refused by the prepare (the quote clamps it): the assistant asks for one first.
      const askDuration = !a.durationSeconds && (!a.targetTokenId || a.targetTokenId === "0");
      const args = [
        `user=${a.address}`,
        `claimAmountWei=${a.amountWei}`,
        ...(a.targetTokenId ? [`targetTokenId=${a.targetTokenId}`] : []),
        ...(a.durationSeconds ? [`durationSeconds=${a.durationSeconds}`] : []),
        ...(askDuration ? ["durationSeconds=<the duration the user chose>"] : []),
        `slippageBps=${a.slippageBps || "50"}`,
      ].join(", ");
      return (
        `Lock via Furnace for ${a.address}.\n` +
        (askDuration
          ? "0. A new lock needs its duration: ask the user how long to lock, 604800 (7 days) to 31536000 (365 " +
            "days) seconds, and pass it as durationSeconds to both calls below.\n"
          : "") +
        `1. Call quote_lock_via_furnace with ${args}. Show the user the quoted voting power and the minimum they accept ` +
        "under the slippage bound; stop if the quote is refused.\n" +
        `2. When the user agrees, call prepare_lock_via_furnace with the same arguments (${args}); the service quotes ` +
        "again and protects the entry with that minimum.\n" +
        "3. Check simulation.ok; if false, tell the user its reason and hint instead of asking them to sign.\n" +
        "4. Pass transactions, in order, to the wallet's send_calls (an approve step comes first when the allowance " +
        "is short). This server never signs or sends anything. Call the action Lock via Furnace, never claim."
      );
    },
  },
  {
    name: "collect_everything",
    title: "Collect everything",
    description:
      "Collect a wallet's ETH royalties (paid out or locked) and its King balance (ETH) in one transaction; LP " +
      "staking rewards are harvested separately.",
    arguments: [
      ADDRESS,
      {
        name: "mode",
        description: "0 (default): pay the royalties to the wallet in ETH; 1: lock them via the Furnace.",
        required: false,
        oneOf: ["0", "1"],
      },
    ],
    render: (a) => {
      const mode = a.mode === "1" ? "1" : "0";
      return (
        `Collect everything for ${a.address}.\n` +
        `1. Call get_state with address=${a.address} and show the ETH royalties pending (LP rewards are not collected here: prepare_harvest_rewards takes them).\n` +
        (mode === "1"
          ? "2. Mode 1 swaps the royalty ETH into the token and locks it via the Furnace: ask for the lock terms (a new " +
            "lock's durationSeconds, or the targetTokenId to add to), then call prepare_collect_all with mode=1, " +
            `user=${a.address} and those terms, without minVeOutWei: the service quotes the pending royalties and ` +
            "protects the swap with that quote less slippageBps (default 50). Show the user the answer's quote " +
            "(veOutWei, minVeOutWei) before they sign.\n"
          : `2. Call prepare_collect_all with mode=0 and user=${a.address}.\n`) +
        "3. Check simulation.ok; if false, tell the user its reason and hint instead of asking them to sign.\n" +
        "4. Pass transactions, in order, to the wallet's send_calls. This server never signs or sends anything. " +
        "Call the action Collect, never claim."
      );
    },
  },
];

/** The prompts as prompts/list lists them. */
export const listedPrompts = () =>
  PROMPTS.map(({ render: _render, ...p }) => ({
    ...p,
    // MCP's PromptArgument: name, description, required (the values it takes are in its description).
    arguments: p.arguments.map(({ oneOf: _oneOf, check: _check, ...a }) => ({ ...a })),
  }));

/**
 * Why prompts/get names no prompt, or an argument its prompt does not take, or null. Every own name of `args` counts,
 * whatever it is (`toString`, `constructor`, an own `__proto__` as JSON.parse makes it): a misspelt optional argument
 * (`slippagebps`) would otherwise be dropped and the prompt rendered with its default, as a tool refuses a parameter
 * its route does not take. The 2025 gatekeeper judges every prompts/get with it before either SDK sees the message
 * (their record schemas drop `__proto__`, and SDK 1.x fails on `constructor`), so both eras answer alike.
 */
export function promptNameProblem(name: string, args: Record<string, unknown>): string | null {
  const prompt = PROMPTS.find((p) => p.name === name);
  if (!prompt) return `unknown prompt ${name.slice(0, 64)}.`;
  const unknown = Object.keys(args).find((arg) => !prompt.arguments.some((a) => a.name === arg));
  return unknown === undefined ? null : `prompt ${name} takes no argument ${unknown.slice(0, 64)}.`;
}

/**
 * Why the arguments' values do not fit the prompt promptNameProblem found (missing, not a plain one-line value, not one
 * of its few, not in the form the tool it is handed to takes), or null. Judged by the gatekeeper with the names, so both
 * eras answer alike, and again by getPrompt.
 */
export function promptValuesProblem(name: string, args: Record<string, unknown>): string | null {
  const prompt = PROMPTS.find((p) => p.name === name);
  if (!prompt) return null;
  for (const a of prompt.arguments) {
    const v = args[a.name];
    if (v === undefined || v === null || v === "") {
      if (a.required) return `Missing required argument ${a.name} for prompt ${name}.`;
      continue;
    }
    if (typeof v !== "string") return `Argument ${a.name} must be a string.`;
    // Rendered into text an assistant follows: one line of a plain value, nothing that could restyle the message.
    if (!/^[A-Za-z0-9_.:-]{1,100}$/.test(v)) return `Argument ${a.name} is not a plain value.`;
    if (a.oneOf && !a.oneOf.includes(v)) return `Argument ${a.name} must be ${a.oneOf.join(" or ")}.`;
    try {
      a.check?.(a.name, v);
    } catch (error) {
      if (error instanceof BadParamsError) return `Argument ${error.message}`;
      throw error;
    }
  }
  return null;
}

/** prompts/get's result: one user message. */
export function getPrompt(
  name: string,
  args: Record<string, unknown> = {},
): { description: string; messages: { role: "user"; content: { type: "text"; text: string } }[] } {
  const problem = promptNameProblem(name, args) ?? promptValuesProblem(name, args);
  if (problem !== null) throw new PromptError(problem);
  const prompt = PROMPTS.find((p) => p.name === name)!;
  const given: Record<string, string> = {};
  for (const a of prompt.arguments) {
    const v = args[a.name];
    if (typeof v === "string" && v !== "") given[a.name] = v;
  }
  return {
    description: prompt.description,
    messages: [{ role: "user", content: { type: "text", text: prompt.render(given) } }],
  };
}
