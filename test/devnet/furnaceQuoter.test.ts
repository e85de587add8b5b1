import { parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEPLOYER_PRIVATE_KEY, DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { type DevCall, revertName, send, startDevnet, type TestDevnet } from "../support/devnet";
import { DURATION_WEIGHT_VECTORS } from "../support/vectors";

const E18 = 10n ** 18n;
const DAY = 86_400n;
const YEAR = 31_536_000n;
const { fresh, alice } = DEVNET_ACCOUNTS;

const VECTORS = DURATION_WEIGHT_VECTORS;

/** An independent BigInt transcription of protocol.md §3 durationWeight, for points between the vectors. */
function referenceWeight(seconds: bigint): bigint {
  const points: [bigint, bigint][] = [
    [7n, 100n],
    [14n, 175n],
    [21n, 300n],
    [30n, 500n],
    [90n, 1500n],
    [180n, 4000n],
    [270n, 6500n],
    [365n, 10000n],
  ];
  const d = seconds < 7n * DAY ? 7n * DAY : seconds > 365n * DAY ? 365n * DAY : seconds;
  if (d <= 7n * DAY) return 100n * 10n ** 8n;
  for (let i = 1; i < points.length; i++) {
    const [d0, w0] = points[i - 1]!;
    const [d1, w1] = points[i]!;
    if (d <= d1 * DAY) return w0 * 10n ** 8n + ((d - d0 * DAY) * (w1 - w0) * 10n ** 8n) / ((d1 - d0) * DAY);
  }
  throw new Error("unreachable");
}

describe("FurnaceQuoter and Furnace", () => {
  let devnet: TestDevnet;
  const quoter = (functionName: string, args: readonly unknown[]): DevCall => ({
    address: devnet.addresses.FurnaceQuoter,
    abi: DEVNET_ABIS.FurnaceQuoter,
    functionName,
    args,
  });
  const read = <T>(call: DevCall) => devnet.clients.publicClient.readContract(call as never) as Promise<T>;
  const quote = (user: `0x${string}`, claimIn: bigint, target: bigint, seconds: bigint, autoMax: boolean) =>
    read<readonly [bigint, bigint, bigint, bigint]>(
      quoter("quoteEnterWithClaim", [user, claimIn, target, seconds, autoMax]),
    );
  const furnace = (args: readonly unknown[]): DevCall => ({
    address: devnet.addresses.Furnace,
    abi: DEVNET_ABIS.Furnace,
    functionName: "enterWithClaim",
    args,
  });
  const mintAndApprove = async (to: typeof fresh, amount: bigint) => {
    await send(devnet, DEPLOYER_PRIVATE_KEY, {
      address: devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "mint",
      args: [to.address, amount],
    });
    for (const spender of [devnet.addresses.Furnace, devnet.addresses.VeLockNFT]) {
      await send(devnet, to.privateKey, {
        address: devnet.addresses.AssetToken,
        abi: DEVNET_ABIS.AssetToken,
        functionName: "approve",
        args: [spender, 2n ** 256n - 1n],
      });
    }
  };

  beforeAll(async () => {
    devnet = await startDevnet();
    await mintAndApprove(fresh, 100_000n * E18);
    await mintAndApprove(alice, 10_000n * E18);
  });
  afterAll(async () => {
    await devnet?.stop();
  });

  it("durationWeight and durationWeightBps reproduce every protocol.md §3 vector on the deployed quoter", async () => {
    for (const [seconds, weight, bps] of VECTORS) {
      expect(await read<bigint>(quoter("durationWeight", [seconds])), `weight(${seconds})`).toBe(weight);
      expect(await read<bigint>(quoter("durationWeightBps", [seconds])), `bps(${seconds})`).toBe(bps);
    }
  });

  it("durationWeightBps matches the §3 formula at every breakpoint ± 1 s and across the whole range", async () => {
    const points = new Set<bigint>([2n ** 255n, 10n ** 30n]);
    for (const days of [7n, 14n, 21n, 30n, 90n, 180n, 270n, 365n])
      for (const dx of [-1n, 0n, 1n]) points.add(days * DAY + dx);
    for (let s = 0n; s <= 400n * DAY; s += 3_331n * 60n + 17n) points.add(s); // ~170 irregular points
    for (const s of points) {
      expect(await read<bigint>(quoter("durationWeightBps", [s])), String(s)).toBe(referenceWeight(s) / 10n ** 8n);
    }
  });

  it("quotes a new lock: bonus = principal × (bps − 100) / 100000, veOut = (principal + bonus) × duration / 365d", async () => {
    for (const [days, autoMax] of [
      [7n, false],
      [30n, false],
      [180n, false],
      [365n, false],
      [365n, true],
    ] as const) {
      const claimIn = 3_333n * E18 + 7n;
      const [principal, bonus, veOut, route] = await quote(fresh.address, claimIn, 0n, days * DAY, autoMax);
      const bps = referenceWeight(days * DAY) / 10n ** 8n;
      expect(principal).toBe(claimIn);
      expect(bonus).toBe((claimIn * (bps - 100n)) / 100_000n);
      expect(veOut).toBe(((principal + bonus) * days * DAY) / YEAR);
      expect(route).toBe(0n);
    }
  });

  it("quote reverts: AmountZero, InvalidDuration (AutoMax not at 365 days), MinLockAmountNotMet (principal + bonus)", async () => {
    const user = fresh.address;
    const name = (args: readonly unknown[]) =>
      revertName(devnet, fresh.privateKey, quoter("quoteEnterWithClaim", args));
    expect(await name([user, 0n, 0n, 30n * DAY, false])).toBe("AmountZero");
    // As published, a new lock's duration is clamped to [7 days, 365 days], not refused
    expect(await quote(user, 2000n * E18, 0n, 0n, false)).toEqual(await quote(user, 2000n * E18, 0n, 7n * DAY, false));
    expect(await quote(user, 2000n * E18, 0n, 6n * DAY, false)).toEqual(
      await quote(user, 2000n * E18, 0n, 7n * DAY, false),
    );
    expect(await quote(user, 2000n * E18, 0n, 366n * DAY, false)).toEqual(
      await quote(user, 2000n * E18, 0n, YEAR, false),
    );
    // AutoMax needs the clamped duration to be 365 days: 400 days is fine, 364 days is not
    expect(await quote(user, 2000n * E18, 0n, 400n * DAY, true)).toEqual(
      await quote(user, 2000n * E18, 0n, YEAR, true),
    );
    expect(await name([user, 2000n * E18, 0n, 364n * DAY, true])).toBe("InvalidDuration");
    expect(await name([user, 999n * E18, 0n, 7n * DAY, false])).toBe("MinLockAmountNotMet");
    // 920 + 9.9 % bonus = 1011.08 ≥ 1000: the minimum applies to principal + bonus
    expect((await quote(user, 920n * E18, 0n, YEAR, true))[1]).toBe(91_080n * 10n ** 15n);
  });

  it("enterWithClaim reverts AmountZero, MinVeOutRequired, MinVeOutNotMet, and the quoter's errors", async () => {
    const key = fresh.privateKey;
    const [, , veOut] = await quote(fresh.address, 2000n * E18, 0n, 90n * DAY, false);
    expect(await revertName(devnet, key, furnace([0n, 0n, 90n * DAY, false, 1n]))).toBe("AmountZero");
    expect(await revertName(devnet, key, furnace([2000n * E18, 0n, 90n * DAY, false, 0n]))).toBe("MinVeOutRequired");
    expect(await revertName(devnet, key, furnace([2000n * E18, 0n, 90n * DAY, false, veOut + 1n]))).toBe(
      "MinVeOutNotMet",
    );
    expect(await revertName(devnet, key, furnace([500n * E18, 0n, 30n * DAY, false, 1n]))).toBe("MinLockAmountNotMet");
    expect(await revertName(devnet, key, furnace([2000n * E18, 0n, 90n * DAY, true, 1n]))).toBe("InvalidDuration");
  });

  it("enterWithClaim executes its quote exactly: new lock of principal + minted bonus, FurnaceEnter mode 1 carries the quote's principal and bonus", async () => {
    const claimIn = 2_500n * E18;
    const [principal, bonus, veOut] = await quote(fresh.address, claimIn, 0n, 270n * DAY, false);
    const supplyBefore = await read<bigint>({
      address: devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "totalSupply",
    });
    const receipt = await send(devnet, fresh.privateKey, furnace([claimIn, 0n, 270n * DAY, false, veOut]));
    const [created] = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName: "LockCreated", logs: receipt.logs });
    const entered = parseEventLogs({ abi: devnet.deployment.artifacts.Furnace.abi, logs: receipt.logs }) as unknown as {
      eventName: string;
      args: Record<string, unknown>;
    }[];
    expect(created?.args).toMatchObject({ user: fresh.address, amount: principal + bonus, autoMax: false });
    expect(entered.find((e) => e.eventName === "FurnaceEnter")?.args).toEqual({
      user: fresh.address,
      mode: 1,
      ethIn: 0n,
      principalClaim: principal,
      bonusClaim: bonus,
      tokenId: created?.args.tokenId,
    });
    const supplyAfter = await read<bigint>({
      address: devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "totalSupply",
    });
    expect(supplyAfter - supplyBefore).toBe(bonus); // only the bonus is new supply
  });

  it("top-up quotes use the remaining lock time, reject foreign, unknown and expired locks, and execute as LockAmountIncreased", async () => {
    const receipt = await send(devnet, fresh.privateKey, furnace([1000n * E18, 0n, 30n * DAY, false, 1n]));
    const [created] = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName: "LockCreated", logs: receipt.logs });
    const id = created!.args.tokenId;
    const lockEnd = created!.args.lockEnd;

    const now = (await devnet.clients.publicClient.getBlock()).timestamp;
    const [principal, bonus, veOut, route] = await quote(fresh.address, 10n * E18, id, 0n, false);
    const remaining = lockEnd - now;
    const bps = referenceWeight(remaining) / 10n ** 8n;
    expect(route).toBe(id);
    expect(bonus).toBe((principal * (bps - 100n)) / 100_000n);
    expect(veOut).toBe(((principal + bonus) * remaining) / YEAR);

    const topUp = await send(devnet, fresh.privateKey, furnace([10n * E18, id, 0n, false, 1n]));
    const increased = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, logs: topUp.logs }).filter(
      (l) => l.address.toLowerCase() === devnet.addresses.VeLockNFT.toLowerCase(),
    );
    expect(increased.map((l) => l.eventName)).toEqual(["LockAmountIncreased"]);

    const name = (user: `0x${string}`, key: `0x${string}`, target: bigint) =>
      revertName(devnet, key, quoter("quoteEnterWithClaim", [user, 10n * E18, target, 0n, false]));
    expect(await name(alice.address, alice.privateKey, id)).toBe("NotAuthorized");
    // a never-minted id: InvalidToken (published: ownerOf reverts → InvalidToken)
    expect(await name(fresh.address, fresh.privateKey, 999n)).toBe("InvalidToken");
    await devnet.clients.testClient.increaseTime({ seconds: Number(31n * DAY) });
    await devnet.clients.testClient.mine({ blocks: 1 });
    expect(await name(fresh.address, fresh.privateKey, id)).toBe("LockExpired");
    expect(await revertName(devnet, fresh.privateKey, furnace([10n * E18, id, 0n, false, 1n]))).toBe("LockExpired");
  });

  it("only the royalties, vault and ClaimAllHelper contracts may enter for someone else; only the owner settles sell-backs", async () => {
    const call: DevCall = {
      address: devnet.addresses.Furnace,
      abi: devnet.deployment.artifacts.Furnace.abi,
      functionName: "enterWithClaimFor",
      args: [alice.address, 1000n * E18, 0n, 30n * DAY, false, 1n],
    };
    expect(await revertName(devnet, fresh.privateKey, call)).toBe("NotAuthorized");
    const settle: DevCall = {
      address: devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "settleSellBack",
      args: [1n],
    };
    expect(await revertName(devnet, fresh.privateKey, settle)).toBe("NotAuthorized");
  });
});
