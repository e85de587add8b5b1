/**
 * "claim" as an English word (claim, claims, claimed, claiming, claimable), not inside an identifier:
 * on-chain names such as claimAll or claimAmountWei are technical and allowed; narration is not (spec §4.3).
 */
export const CLAIM_WORD = /(?<![A-Za-z0-9_])claim(?:s|ed|ing|able)?(?![A-Za-z0-9_])/i;
