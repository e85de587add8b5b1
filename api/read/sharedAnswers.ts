/**
 * The per-block answers (the ve ranking, the stats) shared by replicas: with REDIS_URL set, the first replica to
 * need a block's answer computes it and writes it to Redis (api/cache/redisTtlCache.ts: a lock on a renewed lease, the others
 * wait for the value), so N replicas make one computation per block between them, not one each. Keyed by chain,
 * block and timestamp. Without Redis each process computes once per block (api/read/blockMemo.ts). A value read
 * from Redis is only used if it parses as this format; a failure is never written.
 */
import { RedisTtlCache } from "../cache/redisTtlCache";
import type { TtlCache } from "../cache/ttlCache";
import type { AppConfig } from "../config";
import { v1DeadlineMs } from "../http/cancellation";
import type { Logger } from "../observability/logger";
import type { AtBlock, BoardAnswer, BoardValue, LockChange, LockStats, Seal, VeLock, VeLocksAnswer } from "./contract";

/** How long a reader waits for another replica's computation before computing it itself: half the route's deadline. */
export const sharedWaitMs = (rpcTimeoutMs: number) => Math.floor(v1DeadlineMs(rpcTimeoutMs) / 2);

/** How long a block's answer stays in Redis: long enough for every replica and a slow reader's pages. */
export const SHARED_TTL_MS = 120_000;
/**
 * Version 3: a duration board's change of value 0 is an account ranked at 0, NOT_RANKED (−1) one off the board (in
 * version 2 a 0 meant off the board, so a version-2 answer is never read: it would drop the accounts ranked at 0).
 * Version 2: a ranking's rows with the seal read in their statement (api/read/cursorSeal.ts); version 1 had none.
 */
const FORMAT = '{"v":3,';
/** The in-process mirror of the shared answers: at most 64 blocks' answers and 32 Mi code units (64 MB) of them. */
export const MIRROR_MAX_ENTRIES = 64;
export const MIRROR_MAX_CHARS = 32 * 1024 * 1024;

export async function createSharedAnswers(
  config: AppConfig,
  options: { keyPrefix: string; logger?: Logger },
): Promise<TtlCache | null> {
  if (config.redisUrl === null) return null;
  const logger = options.logger;
  return RedisTtlCache.create({
    url: config.redisUrl,
    keyPrefix: options.keyPrefix,
    // The holder renews its lock while it computes (bounded by the whole-index statement timeout,
    // api/server/indexDatabase.ts); a replica that dies mid-computation is taken over after this lease. Longer than
    // the supply cache's: a large ranking's JavaScript work can hold the event loop for a second or more.
    leaseMs: 5_000,
    // A replica whose holder neither writes nor lets its lock lapse (stuck mid-computation) is waited on for half the
    // index routes' deadline, then the answer is computed here: an answer within the deadline, never its 502.
    waitMs: sharedWaitMs(config.rpcTimeoutMs),
    afterWait: "load",
    pollMs: 25,
    // A value is large (a ranking of 60,000 holders is ~6 MB) and replicas busy: more than the supply cache's 500 ms.
    commandTimeoutMs: 2_000,
    accept: (value) => value.startsWith(FORMAT),
    // The request chooses the block, so the in-process copies are few and bounded in bytes (Redis keeps the rest).
    mirror: { maxEntries: MIRROR_MAX_ENTRIES, maxChars: MIRROR_MAX_CHARS },
    ...(logger ? { logger, warning: "index answer sharing degraded" } : {}),
  });
}

type Head = AtBlock<unknown>["head"];
type HeadJson = { block: string; time: string; finalized: string; build?: string };
const headJson = (h: Head): HeadJson => ({
  block: String(h.block),
  time: String(h.time),
  finalized: String(h.finalized),
  ...(h.build === undefined ? {} : { build: h.build }),
});
/** A statement's seal as shared: [from, digest], null (none: a final block), or absent (none read). */
type SealJson = [string, string] | null;
const sealJson = (a: { seal?: Seal | null }): string =>
  a.seal === undefined
    ? ""
    : `,"seal":${a.seal === null ? "null" : JSON.stringify([String(a.seal.from), a.seal.digest])}`;
const sealOf = (s: SealJson | undefined): { seal?: Seal | null } =>
  s === undefined ? {} : { seal: s === null ? null : { from: BigInt(s[0]), digest: s[1] } };

const headOf = (h: HeadJson): Head => ({
  block: BigInt(h.block),
  time: BigInt(h.time),
  finalized: BigInt(h.finalized),
  ...(h.build === undefined ? {} : { build: h.build }),
});

/** A duration board's ranking (or a board's changes between two blocks): [address, value] pairs. */
export const boardCodec = {
  encode: (a: BoardAnswer): string =>
    `${FORMAT}"head":${JSON.stringify(headJson(a.head))},"block":"${a.block}","time":"${a.time}","inRange":${a.inRange},"finalizedTime":${a.finalizedTime === null ? "null" : `"${a.finalizedTime}"`}${sealJson(a)},"rows":${JSON.stringify(
      a.value.map((r) => [r.address, String(r.value)]),
    )}}`,
  decode: (text: string): BoardAnswer => {
    const o = JSON.parse(text) as {
      head: HeadJson;
      block: string;
      time: string;
      inRange: boolean;
      finalizedTime?: string | null;
      seal?: SealJson;
      rows: [string, string][];
    };
    return {
      head: headOf(o.head),
      block: BigInt(o.block),
      time: BigInt(o.time),
      inRange: o.inRange,
      finalizedTime: o.finalizedTime == null ? null : BigInt(o.finalizedTime),
      ...sealOf(o.seal),
      value: o.rows.map(([address, value]) => ({ address: address as BoardValue["address"], value: BigInt(value) })),
    };
  },
};

/** One lock's wire form: [tokenId, owner, amount, lockEnd, autoMax]. */
type LockJson = [string, string, string, string, boolean];
const lockJson = (l: VeLock): LockJson => [String(l.tokenId), l.owner, String(l.amount), String(l.lockEnd), l.autoMax];
const lockOf = ([tokenId, owner, amount, lockEnd, autoMax]: LockJson): VeLock => ({
  tokenId: BigInt(tokenId),
  owner: owner as VeLock["owner"],
  amount: BigInt(amount),
  lockEnd: BigInt(lockEnd),
  autoMax,
});

/** A codec of live locks or lock changes at a block (the ve ranking's anchor and its changes). */
function veCodec<T, J>(row: (v: T) => J, of: (j: J) => T) {
  return {
    encode: (a: VeLocksAnswer<T>): string =>
      `${FORMAT}"head":${JSON.stringify(headJson(a.head))},"block":"${a.block}","time":"${a.time}","inRange":${a.inRange},"finalizedTime":${a.finalizedTime === null ? "null" : `"${a.finalizedTime}"`}${sealJson(a)},"rows":${JSON.stringify(
        a.value.map(row),
      )}}`,
    decode: (text: string): VeLocksAnswer<T> => {
      const o = JSON.parse(text) as {
        head: HeadJson;
        block: string;
        time: string;
        inRange: boolean;
        finalizedTime: string | null;
        seal?: SealJson;
        rows: J[];
      };
      return {
        head: headOf(o.head),
        block: BigInt(o.block),
        time: BigInt(o.time),
        inRange: o.inRange,
        finalizedTime: o.finalizedTime === null ? null : BigInt(o.finalizedTime),
        ...sealOf(o.seal),
        value: o.rows.map(of),
      };
    },
  };
}

/** The live locks of a block (the ve ranking's anchor). */
export const veLocksCodec = veCodec<VeLock, LockJson>(lockJson, lockOf);
/** The locks changed between two blocks, each [tokenId, its lock or null]. */
export const veDeltaCodec = veCodec<LockChange, [string, LockJson | null]>(
  (c) => [String(c.tokenId), c.lock === null ? null : lockJson(c.lock)],
  ([tokenId, lock]) => ({ tokenId: BigInt(tokenId), lock: lock === null ? null : lockOf(lock) }),
);

export const statsCodec = {
  encode: (a: AtBlock<LockStats>): string => {
    const s = a.value;
    return `${FORMAT}${JSON.stringify({
      head: headJson(a.head),
      block: String(a.block),
      time: String(a.time),
      inRange: a.inRange,
      stats: {
        ...s,
        totalLocked: String(s.totalLocked),
        totalVe: String(s.totalVe),
        autoMaxLocked: String(s.autoMaxLocked),
        expiredLocked: String(s.expiredLocked),
        unlocksByWeek: [...s.unlocksByWeek].map(([w, a]) => [String(w), String(a)]),
      },
    }).slice(1)}`;
  },
  decode: (text: string): AtBlock<LockStats> => {
    const o = JSON.parse(text);
    const s = o.stats;
    return {
      head: headOf(o.head),
      block: BigInt(o.block),
      time: BigInt(o.time),
      inRange: o.inRange,
      value: {
        ...s,
        totalLocked: BigInt(s.totalLocked),
        totalVe: BigInt(s.totalVe),
        autoMaxLocked: BigInt(s.autoMaxLocked),
        expiredLocked: BigInt(s.expiredLocked),
        unlocksByWeek: new Map((s.unlocksByWeek as [string, string][]).map(([w, a]) => [BigInt(w), BigInt(a)])),
      },
    };
  },
};

/** `load` through the shared cache under `key` (or directly without one). */
export function sharedLoad<T>(
  shared: TtlCache | null | undefined,
  key: string,
  codec: { encode(v: T): string; decode(text: string): T },
  load: () => Promise<T>,
): Promise<T> {
  if (!shared) return load();
  // The caller whose load ran takes its own value, not a decode of what it just encoded (a board is megabytes).
  let own: T | undefined;
  return shared
    .getOrLoad(key, SHARED_TTL_MS, async () => {
      own = await load();
      return codec.encode(own);
    })
    .then((text) => own ?? codec.decode(text));
}
