export { bonusBpsVsPrincipalClaim } from "./bonusBps";
export * from "./constants";
export { clampLockDuration, DURATION_BREAKPOINTS, durationWeight, durationWeightBps } from "./durationWeight";
export { effectiveLockEnd, lockVe } from "./lockVe";
export { applyMinVeOutClamp } from "./minVeOut";
export { type FurnaceRoute, furnaceEffectiveDuration, furnaceVeOut } from "./veOut";
