import { AssetTokenAbi } from "./AssetToken";

/**
 * The LP token (token/WETH pool): a plain ERC-20, and the service uses the same surface of it as of AssetToken
 * (balance, allowance and approve for stake-lp), so it is that ABI under its own name.
 */
export const LpTokenAbi = AssetTokenAbi;
