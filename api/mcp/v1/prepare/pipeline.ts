import type { Address, Hex } from "viem";
import type { RpcClient } from "../../../chain/rpc";
import { ApiError, BadParamsError, ChainUnreadyError, type NeededOnlyWhen } from "../../../http/errors";
import { type ParamDoc, parseAddress, parseBool, refuseZeroAddress } from "../../../http/params";
import type { Gate } from "../../../launchPreflight";
import { type DeployableName, deployedAddress, type Manifest } from "../../../manifest";
import {
  type HintFor,
  requireSimulationOk,
  type SimulationHint,
  type SimulationJson,
  simulateBatch,
} from "./simulation";

/**
 * The one pipeline every prepare action runs through, in the order of spec §4.3 and design.md:
 * (1) gate, (2) the manifest has the contracts, (3) strict parse, (4) reads, (5) encode.
 * An action only supplies its metadata and the pure pieces (parse, read, encode); the order lives here.
 */

/** Informational labels of spec §2.4 (`action` is a reserved legacy label no handler emits). */
export type Step = "approve" | "collect" | "harvest" | "lock" | "topup" | "extend" | "stake" | "unbond" | "withdraw";

/** One encoded call, before the envelope adds `value` and `chainId`. */
export type Call = { step: Step; to: Address; data: Hex };

/**
 * One element of the envelope's `transactions` (spec §2.4), plus `gas` (0x-hex) when the batch was
 * simulated: the simulated gas with headroom (simulation.ts).
 */
export type PreparedTransaction = Call & { value: "0x0"; chainId: number; gas?: Hex };

export type PrepareEnvelope = {
  ok: true;
  chain: string;
  chainId: number;
  transactions: PreparedTransaction[];
  simulation: SimulationJson;
} & Record<string, unknown>;

/** What the pipeline needs from the app: the shared gate, the one RPC client, the manifest. */
export type PrepareDeps = {
  gate: Pick<Gate, "assertFinalized">;
  rpc: RpcClient | null;
  config: { manifest: Manifest };
};

/** The documented face of an action: this is the table OpenAPI and the MCP tool docs are built from. */
export type ActionMeta = {
  action: string;
  /** The user-facing verb of spec §4.3: an assistant narrates the action with it. */
  verb: string;
  /** The steps the action can return, in order (an approve step only when the allowance is short). */
  steps: readonly Step[];
  /** The contract of the main step and its on-chain function (technical fields: legacy names allowed). */
  contract: DeployableName;
  function: string;
  /** Every deployment every request of the action touches; one missing → 503 CHAIN_UNREADY naming it. */
  needs: readonly DeployableName[];
  /**
   * Deployments only some requests touch (the action's own quote, when the caller gives no minVeOutWei): the read
   * that uses them resolves them (resolveContracts with this record), so the other requests do not need them.
   */
  needsWhen?: NeedsWhen;
  params: Readonly<Record<string, ParamDoc>>;
  description: string;
};

/** Deployments a request needs only `when` it is of one kind; `param` is what does without them. */
export type NeedsWhen<M extends DeployableName = DeployableName> = NeededOnlyWhen & { contracts: readonly M[] };

export type Encoded = { calls: Call[]; extra?: Record<string, unknown> };

export type ActionDefinition<I, R, N extends DeployableName> = ActionMeta & {
  needs: readonly N[];
  /** Strict parse of the raw URL: every failure is BadParamsError, with no I/O. */
  parse(url: string): I;
  /** The reads the action needs (allowance, quote); absent for actions without reads. */
  read?: (deps: PrepareDeps, contracts: Record<N, Address>, input: I) => Promise<R>;
  /** Pure encoding: the same inputs always give the same bytes. */
  encode(contracts: Record<N, Address>, input: I, reads: R): Encoded;
  /** What to suggest when the simulation of this input fails (e.g. a Furnace-only call → lock-via-furnace). */
  hint?: (input: I) => HintFor;
  /** What to say when the batch would succeed and its last step emit no log: it would move nothing. */
  idle?: string;
  /**
   * An action whose batch reverts on the published contracts (a Furnace-only function): the envelope's `warning`,
   * in every answer whose simulation did not run or did not pass (a passing one shows this deployment allows it).
   */
  warning?: (input: I) => SimulationHint;
};

/** Accepted by every action (the pipeline parses them; an action's own table documents its own). */
const SIMULATE_PARAM = {
  kind: "bool",
  default: "true",
  description:
    "Simulate the batch as `user` (eth_simulateV1, one extra node round trip) and return `simulation` and each " +
    "transaction's `gas`; false skips it.",
} as const satisfies ParamDoc;

const REQUIRE_SIMULATION_OK_PARAM = {
  kind: "bool",
  default: "false",
  // Kept short: it is repeated in each of the ten prepare tools of tools/list (docs/api.md says the rest).
  description:
    "true: a batch that reverts in simulation is refused (409 SIMULATION_REVERTED, naming the step and the " +
    "revert), and one that could not be simulated too (503 SIMULATION_UNAVAILABLE). Needs user and simulate=true.",
} as const satisfies ParamDoc;

const USER_PARAM = {
  kind: "address",
  description:
    "The wallet that will sign (not the zero address). Optional for this action: only used to simulate the batch " +
    "as that wallet (without it, simulation says skipped: no-user).",
} as const satisfies ParamDoc;

/**
 * The action's own table plus `user` (when it lacks one), `simulate` and `requireSimulationOk`: what OpenAPI
 * and MCP document.
 */
export function withCommonParams(params: Readonly<Record<string, ParamDoc>>): Record<string, ParamDoc> {
  return {
    ...params,
    ...(Object.hasOwn(params, "user") ? {} : { user: USER_PARAM }),
    simulate: SIMULATE_PARAM,
    requireSimulationOk: REQUIRE_SIMULATION_OK_PARAM,
  };
}

type Common = { url: string; user: Address | undefined; simulate: boolean; requireSimulationOk: boolean };

const COMMON_FLAGS = new Set(["simulate", "requireSimulationOk"]);

/**
 * Takes `simulate`, `requireSimulationOk` (and `user`, for an action that does not own it) out of the query,
 * strictly parsed; the action parses the rest with its own table. For an action that owns `user`, its parse
 * checks it.
 */
function splitCommon(url: string, ownsUser: boolean): Common {
  const parsed = new URL(url, "http://x");
  const kept = new URLSearchParams();
  const seen = new Set<string>();
  let user: Address | undefined;
  let simulate = true;
  let requireSimulationOk = false;
  for (const [name, value] of parsed.searchParams) {
    const common = COMMON_FLAGS.has(name) || (name === "user" && !ownsUser);
    if (!common) {
      kept.append(name, value);
      continue;
    }
    if (seen.has(name)) throw new BadParamsError(`Parameter ${name} is given more than once.`, { param: name });
    seen.add(name);
    if (name === "simulate") simulate = parseBool(name, value);
    else if (name === "requireSimulationOk") requireSimulationOk = parseBool(name, value);
    else user = parseAddress(name, value);
  }
  parsed.search = kept.toString();
  return { url: parsed.toString(), user, simulate, requireSimulationOk };
}

/** The gate needs a simulation to judge: asking for it without one is the caller's mistake, before any read. */
function checkGateCanRun(common: Common, user: Address | undefined): void {
  if (!common.requireSimulationOk) return;
  if (!common.simulate) {
    const message = "requireSimulationOk=true needs the simulation: it cannot be combined with simulate=false.";
    throw new BadParamsError(message, { param: "requireSimulationOk" });
  }
  if (user === undefined) {
    throw new BadParamsError("requireSimulationOk=true needs user: the wallet the batch is simulated as.", {
      param: "user",
    });
  }
}

/** The action's `accepted` list of an unknown-parameter error names the common parameters too. */
function withCommonAccepted(error: unknown, accepted: readonly string[]): unknown {
  if (!(error instanceof ApiError) || error.code !== "BAD_PARAMS") return error;
  const detail = error.detail as { param?: string; accepted?: unknown } | undefined;
  if (!detail || !Array.isArray(detail.accepted) || !detail.param) return error;
  return new BadParamsError(error.message, { ...detail, param: detail.param, accepted: [...accepted] });
}

export type PrepareAction = ActionMeta & {
  /** Runs the whole pipeline for one request URL; throws ApiError subclasses. */
  run(deps: PrepareDeps, url: string): Promise<PrepareEnvelope>;
};

/**
 * Step (2): every needed deployment resolved, or ChainUnreadyError naming the first one missing. With `only` (an
 * action's needsWhen), from a read, for the kind of request that needs them: the error says which and what avoids it.
 */
export function resolveContracts<N extends DeployableName>(
  manifest: Manifest,
  needs: readonly N[],
  only?: NeededOnlyWhen,
): Record<N, Address> {
  const out = {} as Record<N, Address>;
  for (const name of needs) {
    const address = deployedAddress(manifest, name);
    if (!address) throw new ChainUnreadyError(name, manifest.chain, only && { when: only.when, param: only.param });
    out[name] = address;
  }
  return out;
}

export function defineAction<I, R, const N extends DeployableName>(
  def: ActionDefinition<I, R, N>,
): ActionDefinition<I, R, N> & PrepareAction {
  const ownsUser = Object.hasOwn(def.params, "user");
  const params = withCommonParams(def.params);
  const accepted = Object.keys(params);
  return {
    ...def,
    params,
    async run(deps, url) {
      await deps.gate.assertFinalized();
      const contracts = resolveContracts(deps.config.manifest, def.needs);
      let common: Common;
      let input: I;
      try {
        common = splitCommon(url, ownsUser);
        input = def.parse(common.url);
      } catch (error) {
        throw withCommonAccepted(error, accepted);
      }
      // An action that owns `user` has just validated it: read back its checksummed form for simulation.
      const rawUser = ownsUser ? new URL(url, "http://x").searchParams.get("user") : null;
      const user = rawUser === null ? common.user : parseAddress("user", rawUser);
      if (user !== undefined) refuseZeroAddress("user", user);
      checkGateCanRun(common, user);
      const reads = def.read ? await def.read(deps, contracts, input) : (undefined as R);
      const { calls, extra } = def.encode(contracts, input, reads);
      // Step (6), after the spec's five: the batch, simulated as the wallet that will sign it.
      const { simulation, gas } = await simulateBatch({
        rpc: deps.rpc,
        user,
        enabled: common.simulate,
        calls,
        hint: def.hint?.(input),
        ...(def.idle === undefined ? {} : { idle: def.idle }),
      });
      // Asked for (requireSimulationOk=true): a batch is handed out only when its simulation ran clean.
      if (common.requireSimulationOk) requireSimulationOk(simulation);
      const { chain, chainId } = deps.config.manifest;
      return {
        ok: true,
        chain,
        chainId,
        transactions: calls.map((call, i) => ({
          ...call,
          value: "0x0",
          chainId,
          ...(gas ? { gas: `0x${gas[i]!.toString(16)}` as Hex } : {}),
        })),
        ...extra,
        ...(def.warning && simulation.ok !== true ? { warning: def.warning(input) } : {}),
        simulation,
      };
    },
  };
}
