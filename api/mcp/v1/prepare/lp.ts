import type { Address } from "viem";
import { LpStakingVault7DAbi } from "../../../../abis";
import { encodeCall } from "../../../chain/encode";
import type { ParamDoc } from "../../../http/params";
import { parseQuery } from "../../../http/params";
import { AT_MOST_AMOUNT, MAX_AMOUNT_WEI, readAllowance, withApproval } from "./approval";
import { requireAtLeast } from "./lockTerms";
import { defineAction } from "./pipeline";

/**
 * LP staking: stake-lp (Stake, + LP token approve when short), unbond-lp (Unbond: the 7-day wait
 * starts), withdraw-lp (Withdraw: every matured unbond is paid back).
 */

/** LpStakingVault7D.MIN_STAKE: a smaller stake reverts AmountTooSmall (protocol.md §1, §8). */
export const MIN_STAKE_WEI = 10n ** 15n;

export const STAKE_PARAMS = {
  user: {
    kind: "address",
    required: true,
    description: "The wallet that stakes (it signs both steps; not the zero address).",
  },
  amountWei: {
    kind: "uint256",
    required: true,
    max: MAX_AMOUNT_WEI,
    description: `LP token amount in wei, at least ${MIN_STAKE_WEI} (0.001 LP). ${AT_MOST_AMOUNT}`,
  },
} as const satisfies Record<string, ParamDoc>;

export type StakeInput = { user: Address; amountWei: bigint };

export const stakeLp = defineAction({
  action: "stake-lp",
  verb: "Stake",
  steps: ["approve", "stake"],
  contract: "LpStakingVault7D",
  function: "stake",
  needs: ["LpStakingVault7D", "LpToken"],
  params: STAKE_PARAMS,
  description:
    "Stake: deposits LP tokens into the 7-day staking vault, where they earn token rewards. " +
    "An approve step for the exact amount comes first when the vault's LP allowance is short.",
  parse(url): StakeInput {
    const q = parseQuery(url, STAKE_PARAMS);
    return {
      user: q.user,
      amountWei: requireAtLeast("amountWei", q.amountWei, MIN_STAKE_WEI, "the vault's minimum stake"),
    };
  },
  read: (deps, contracts, input) =>
    readAllowance(deps, {
      token: "LpToken",
      tokenAddress: contracts.LpToken,
      owner: input.user,
      spender: contracts.LpStakingVault7D,
    }),
  encode: (contracts, input, allowance: bigint) => ({
    calls: withApproval(
      {
        token: "LpToken",
        tokenAddress: contracts.LpToken,
        spender: contracts.LpStakingVault7D,
        amount: input.amountWei,
        allowance,
      },
      {
        step: "stake",
        to: contracts.LpStakingVault7D,
        data: encodeCall(LpStakingVault7DAbi, "stake", [input.amountWei]),
      },
    ),
  }),
});

export const UNBOND_PARAMS = {
  amountWei: {
    kind: "uint256",
    required: true,
    description: "Staked LP amount in wei to start unbonding (> 0, at most the staked balance).",
  },
} as const satisfies Record<string, ParamDoc>;

export type UnbondInput = { amountWei: bigint };

export const unbondLp = defineAction({
  action: "unbond-lp",
  verb: "Unbond",
  steps: ["unbond"],
  contract: "LpStakingVault7D",
  function: "beginUnbond",
  needs: ["LpStakingVault7D"],
  params: UNBOND_PARAMS,
  description:
    "Unbond: starts the 7-day wait to take staked LP out of the vault; the amount stops earning rewards now " +
    "and can be withdrawn with withdraw-lp once the 7 days have passed (at most 25 open unbonds).",
  parse(url): UnbondInput {
    const q = parseQuery(url, UNBOND_PARAMS);
    return { amountWei: requireAtLeast("amountWei", q.amountWei, 1n, "unbonding 0 reverts") };
  },
  encode: (contracts, input: UnbondInput) => ({
    calls: [
      {
        step: "unbond",
        to: contracts.LpStakingVault7D,
        data: encodeCall(LpStakingVault7DAbi, "beginUnbond", [input.amountWei]),
      },
    ],
  }),
});

export const withdrawLp = defineAction({
  action: "withdraw-lp",
  verb: "Withdraw",
  steps: ["withdraw"],
  contract: "LpStakingVault7D",
  function: "withdrawMatured",
  needs: ["LpStakingVault7D"],
  params: {},
  description:
    "Withdraw: returns every unbonded LP amount whose 7-day wait is over to the wallet. Takes no parameters.",
  parse(url): null {
    parseQuery(url, {});
    return null;
  },
  // The published vault (LpStakingVault7D.withdrawMatured) does not revert when no unbond has matured: it returns
  // without a transfer or an event, so such a batch simulates ok, and `idle` says it moves nothing.
  idle:
    "Nothing to withdraw yet: no unbond of this wallet has finished its 7-day wait (unbond-lp starts one). The " +
    "transaction would succeed and move nothing.",
  encode: (contracts) => ({
    calls: [
      {
        step: "withdraw",
        to: contracts.LpStakingVault7D,
        data: encodeCall(LpStakingVault7DAbi, "withdrawMatured", []),
      },
    ],
  }),
});
