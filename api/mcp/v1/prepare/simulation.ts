import type { Address, Hex } from "viem";
import type { RpcClient } from "../../../chain/rpc";
import { type SimulatedError, type SimulationOutcome, simulateCalls } from "../../../chain/simulate";
import { SimulationRevertedError, SimulationUnavailableError } from "../../../http/errors";

/** A call of the batch as the pipeline encodes it (its `Call`; kept structural so the modules stay acyclic). */
type StepCall = { step: string; to: Address; data: Hex };

/**
 * The `simulation` member of every prepare answer and the `gas` of each transaction. By default the
 * batch is always returned: a failing or skipped simulation is information for the caller (an assistant
 * about to ask a person to sign). A caller that asks for the gate (`requireSimulationOk=true`) gets no
 * batch unless the simulation ran and every step succeeded (requireSimulationOk below).
 *
 * Shapes:
 * - ran: `{ ok, blockNumber, steps: [{ step, ok, gasUsed, error?: { name, args, selector } }], hint? }`
 *   (`ok` is true exactly when every step succeeded; steps run in order with state carried over);
 * - not run: `{ ok: null, skipped, message }` with `skipped` one of
 *   `no-user` (the action was called without `user`: nobody to simulate as),
 *   `disabled` (`simulate=false`), `unsupported` (the node lacks eth_simulateV1),
 *   `node-failed` (the node timed out or errored; `reason` says how).
 */

export type SimulationHint = {
  message: string;
  /** A prepare action that does what the failing call meant to do, where one exists. */
  action?: string;
  params?: Record<string, string>;
  /** The same, as a ready-to-GET path. */
  path?: string;
};

export type SimulationStepJson = {
  step: string;
  ok: boolean;
  gasUsed: string;
  error?: SimulatedError;
};

export type SimulationJson =
  | { ok: boolean; blockNumber: string; steps: SimulationStepJson[]; hint?: SimulationHint }
  | {
      ok: null;
      skipped: "no-user" | "disabled" | "unsupported" | "node-failed";
      message: string;
      reason?: string;
    };

/**
 * Gas given to the wallet: 30 % over the simulated gas, plus 10 000. The simulated figure is after
 * refunds (EIP-3529 refunds at most 1/5 of it, so the gas needed up front is at most 1.25×), and a
 * nested call needs 64/63 of what it spends available (EIP-150); the constant covers small calls
 * whose state may differ slightly by the block the wallet lands in.
 */
export function gasWithHeadroom(gasUsed: bigint): bigint {
  return (gasUsed * 130n) / 100n + 10_000n;
}

/** An action's own hint for a failed step (e.g. lock → lock-via-furnace on NotAuthorized). */
export type HintFor = (error: SimulatedError, step: string) => SimulationHint | undefined;

const ONCE_A_DAY = "Compounding is allowed at most once a day: try again later or harvest without compound.";
const SHORT_BALANCE = "The wallet does not hold enough of the token for this amount.";
const SHORT_ALLOWANCE =
  "The wallet has not approved the contract to pull the token for this amount: send the batch's approve step " +
  "first (prepare again if the allowance changed since).";

/** Hints any action can use: what a person can do about the commonest reverts. */
const GENERIC_HINTS: Record<string, string> = {
  TooManyVeNFTs: "The wallet already holds the maximum of 32 locks: top up an existing lock instead of creating one.",
  LockExpired: "The lock has expired: it can only be unlocked now, not topped up or extended.",
  LockListedOrFrozen: "The lock is listed on the market (or frozen): it cannot be changed until it is delisted.",
  MinVeOutNotMet: "The voting power moved below the quoted minimum: prepare again for a fresh quote.",
  InsufficientTokenBalance: SHORT_BALANCE,
  InsufficientTokenAllowance: SHORT_ALLOWANCE,
  // What a wallet meets on Base when a Furnace entry pulls the token (OpenZeppelin v5 ERC20, ERC-6093).
  ERC20InsufficientBalance: SHORT_BALANCE,
  ERC20InsufficientAllowance: SHORT_ALLOWANCE,
  InsufficientStake: "The wallet has less staked LP than this amount.",
  CadenceNotMet: ONCE_A_DAY,
  // The published LpStakingVault7D's own name for the same once-a-day rule (claimRewardsAndLock).
  LockCooldown: ONCE_A_DAY,
};

/**
 * `Error(reason)` reverts with a hint: the LP token on Base is the Aerodrome pool, an OpenZeppelin 4.x ERC20, whose
 * short allowance or balance reverts these reason strings (stake-lp).
 */
const REASON_HINTS = new Map<string, string>([
  ["ERC20: transfer amount exceeds balance", SHORT_BALANCE],
  ["ERC20: insufficient allowance", SHORT_ALLOWANCE],
]);

function genericHint(error: SimulatedError): string | undefined {
  // A reason is any text a contract chose: looked up in a Map, never as an object key ("constructor").
  if (error.name === "Error") return error.args[0] === undefined ? undefined : REASON_HINTS.get(error.args[0]);
  return error.name ? GENERIC_HINTS[error.name] : undefined;
}

export const prepareHref = (action: string, params: Record<string, string>) =>
  `/api/mcp/v1/prepare/${action}?${new URLSearchParams(params).toString()}`;

function hintFor(outcome: Extract<SimulationOutcome, { kind: "ran" }>, calls: readonly StepCall[], own?: HintFor) {
  const index = outcome.steps.findIndex((s) => !s.ok);
  const failed = outcome.steps[index];
  if (!failed?.error) return undefined;
  const step = calls[index]!.step;
  const specific = own?.(failed.error, step);
  if (specific) return specific;
  const message = genericHint(failed.error);
  return message ? { message } : undefined;
}

export type SimulationRequest = {
  rpc: RpcClient | null;
  user: Address | undefined;
  enabled: boolean;
  calls: readonly StepCall[];
  hint?: HintFor;
  /**
   * Said when every step succeeds and the last emits no log: the transaction would move nothing (a withdrawal with
   * nothing matured, a harvest with nothing earned: the published vault returns quietly, and the wallet pays gas).
   */
  idle?: string;
};

/** The action's `idle` hint, when the batch ran clean and its last step emitted no log (the node said how many). */
function idleHint(outcome: Extract<SimulationOutcome, { kind: "ran" }>, idle?: string): SimulationHint | undefined {
  const last = outcome.steps.at(-1);
  if (idle === undefined || !outcome.steps.every((s) => s.ok) || last?.logs !== 0) return undefined;
  return { message: idle };
}

/** The simulation member and the gas per call (null where no simulation ran). */
export async function simulateBatch(
  req: SimulationRequest,
): Promise<{ simulation: SimulationJson; gas: bigint[] | null }> {
  if (!req.enabled) {
    return { simulation: { ok: null, skipped: "disabled", message: "Not simulated: simulate=false." }, gas: null };
  }
  if (!req.user) {
    return {
      simulation: {
        ok: null,
        skipped: "no-user",
        message: "Not simulated: give user (the signing wallet) to simulate the batch as that wallet.",
      },
      gas: null,
    };
  }
  if (!req.rpc) {
    return {
      simulation: {
        ok: null,
        skipped: "node-failed",
        message: "Not simulated: no RPC endpoint.",
        reason: "unconfigured",
      },
      gas: null,
    };
  }
  const outcome = await simulateCalls(req.rpc, req.user, req.calls);
  if (outcome.kind === "unsupported") {
    return {
      simulation: {
        ok: null,
        skipped: "unsupported",
        message:
          "Not simulated: the node answered that it does not support eth_simulateV1 (asked again at most once a minute).",
      },
      gas: null,
    };
  }
  if (outcome.kind === "failed") {
    return {
      simulation: {
        ok: null,
        skipped: "node-failed",
        message: `Not simulated: the node did not answer the simulation (${outcome.reason}).`,
        reason: outcome.reason,
      },
      gas: null,
    };
  }
  const hint = hintFor(outcome, req.calls, req.hint) ?? idleHint(outcome, req.idle);
  return {
    simulation: {
      ok: outcome.steps.every((s) => s.ok),
      blockNumber: outcome.blockNumber.toString(),
      steps: outcome.steps.map((s, i) => ({
        step: req.calls[i]!.step,
        ok: s.ok,
        gasUsed: s.gasUsed.toString(),
        ...(s.error ? { error: s.error } : {}),
      })),
      ...(hint ? { hint } : {}),
    },
    gas: outcome.steps.map((s) => gasWithHeadroom(s.gasUsed)),
  };
}

/**
 * The gate a caller asks for with `requireSimulationOk=true`: the first reverting step refuses the batch
 * (409 SIMULATION_REVERTED, naming the step and the decoded revert); a simulation that could not run
 * refuses it too (503 SIMULATION_UNAVAILABLE), since handing out an unsimulated batch is what the caller
 * asked us not to do. `no-user` and `disabled` never reach here: the pipeline refuses them as BAD_PARAMS
 * before any read.
 */
export function requireSimulationOk(simulation: SimulationJson): void {
  if (simulation.ok === true) return;
  if (simulation.ok === null) {
    if (simulation.skipped === "unsupported" || simulation.skipped === "node-failed") {
      throw new SimulationUnavailableError({
        skipped: simulation.skipped,
        ...(simulation.reason === undefined ? {} : { reason: simulation.reason }),
      });
    }
    throw new Error(`requireSimulationOk reached with simulation skipped: ${simulation.skipped}`);
  }
  const index = simulation.steps.findIndex((s) => !s.ok);
  const failed = simulation.steps[index]!;
  throw new SimulationRevertedError({
    index,
    step: failed.step,
    // A failed step always carries its decoded revert (simulate.ts readAnswer).
    revert: failed.error ?? { name: null, args: [], selector: null },
    blockNumber: simulation.blockNumber,
    ...(simulation.hint ? { hint: simulation.hint } : {}),
  });
}
