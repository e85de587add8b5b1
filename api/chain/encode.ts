import {
  type Abi,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type EncodeFunctionDataParameters,
  encodeFunctionData,
  type Hex,
} from "viem";

/**
 * The one calldata encoding path of the service (spec §7.2: byte-identical to a standard ABI
 * encoder): viem's encodeFunctionData over the `as const` ABIs in abis/. Every prepare action and
 * every read goes through here, so there is no second encoder to drift.
 */
export function encodeCall<
  const TAbi extends Abi,
  TName extends ContractFunctionName<TAbi, "nonpayable" | "payable" | "view" | "pure">,
>(
  abi: TAbi,
  functionName: TName,
  args: ContractFunctionArgs<TAbi, "nonpayable" | "payable" | "view" | "pure", TName>,
): Hex {
  // The generic signature above checks names and argument types at compile time; viem's own
  // parameter type is too deep to infer through a generic wrapper, hence the widening here.
  return encodeFunctionData({ abi, functionName, args } as unknown as EncodeFunctionDataParameters);
}
