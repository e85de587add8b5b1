import type { Address, Hex } from "viem";
import type { RpcClient } from "../../../chain/rpc";
import { ChainUnreadyError } from "../../../http/errors";
import type { ParamKind } from "../../../http/params";
import { type DeployableName, deployedAddress, type Manifest } from "../../../manifest";
import type { Gate } from "../gate";

/**
 * The one pipeline every prepare action runs through, in the order of spec §4.3 and design.md:
 * (1) gate, (2) the manifest has the contracts, (3) strict parse, (4) reads, (5) encode.
 * An action only supplies its metadata and the pure pieces (parse, read, encode); the order lives here.
 */

/** Informational labels of spec §2.4 (`action` is a reserved legacy label no handler emits). */
export type Step = "approve" | "collect" | "harvest" | "lock" | "topup" | "extend" | "stake" | "unbond" | "withdraw";

/** One encoded call, before the envelope adds `value` and `chainId`. */
export type Call = { step: Step; to: Address; data: Hex };

/** One element of the envelope's `transactions` (spec §2.4). */
export type PreparedTransaction = Call & { value: "0x0"; chainId: number };

export type PrepareEnvelope = {
  ok: true;
  chain: string;
  chainId: number;
  transactions: PreparedTransaction[];
} & Record<string, unknown>;

/** A query parameter as documented (OpenAPI / MCP tool docs are generated from these). */
export type ParamDoc = {
  kind: ParamKind;
  required?: boolean;
  /** The value used when the parameter is absent, as it would be written in the query. */
  default?: string;
  description: string;
};

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
  /** Every deployment the action touches; one missing → 503 CHAIN_UNREADY naming it. */
  needs: readonly DeployableName[];
  params: Readonly<Record<string, ParamDoc>>;
  description: string;
};

export type Encoded = { calls: Call[]; extra?: Record<string, unknown> };

export type ActionDefinition<I, R, N extends DeployableName> = ActionMeta & {
  needs: readonly N[];
  /** Strict parse of the raw URL: every failure is BadParamsError, with no I/O. */
  parse(url: string): I;
  /** The reads the action needs (allowance, quote); absent for actions without reads. */
  read?: (deps: PrepareDeps, contracts: Record<N, Address>, input: I) => Promise<R>;
  /** Pure encoding: the same inputs always give the same bytes. */
  encode(contracts: Record<N, Address>, input: I, reads: R): Encoded;
};

export type PrepareAction = ActionMeta & {
  /** Runs the whole pipeline for one request URL; throws ApiError subclasses. */
  run(deps: PrepareDeps, url: string): Promise<PrepareEnvelope>;
};

/** Step (2): every needed deployment resolved, or ChainUnreadyError naming the first one missing. */
export function resolveContracts<N extends DeployableName>(
  manifest: Manifest,
  needs: readonly N[],
): Record<N, Address> {
  const out = {} as Record<N, Address>;
  for (const name of needs) {
    const address = deployedAddress(manifest, name);
    if (!address) throw new ChainUnreadyError(name, manifest.chain);
    out[name] = address;
  }
  return out;
}

export function defineAction<I, R, const N extends DeployableName>(
  def: ActionDefinition<I, R, N>,
): ActionDefinition<I, R, N> & PrepareAction {
  return {
    ...def,
    async run(deps, url) {
      await deps.gate.assertFinalized();
      const contracts = resolveContracts(deps.config.manifest, def.needs);
      const input = def.parse(url);
      const reads = def.read ? await def.read(deps, contracts, input) : (undefined as R);
      const { calls, extra } = def.encode(contracts, input, reads);
      const { chain, chainId } = deps.config.manifest;
      return {
        ok: true,
        chain,
        chainId,
        transactions: calls.map((call) => ({ ...call, value: "0x0", chainId })),
        ...extra,
      };
    },
  };
}
