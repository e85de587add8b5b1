/**
 * The lock events a carried ranking's basis names since its statement (contract.ts SealBasis `lines`), and their
 * digest as a board cursor carries it (api/read/cursorSeal.ts). The text grows by each carried block's events until a
 * statement reads the changes again (a new anchor, or events a notification could not carry), and the first page of
 * each new head hashed all of it for its next cursor: after a run of busy blocks tens of kB, 0.15–0.25 ms of the first
 * reader's wait at 30–90 kB (`bench/first-reader.ts`, bursts of forty lock events). So a basis made from another by
 * one block's events keeps the running MD5 of its text, carried on from the one it was made from: the same digest,
 * made in the time of that block's events.
 */
import { createHash, type Hash } from "node:crypto";
import type { SealBasis } from "./contract";

/** Each basis's MD5 over its `lines` so far, not yet finished (a WeakMap: gone with the basis). */
const running = new WeakMap<SealBasis, Hash>();

/** `from` with one block's carried events (`lines`) after its own, `;` between; `from` itself when there are none. */
export function extendBasis(from: SealBasis, lines: string): SealBasis {
  if (lines === "") return from;
  const added = from.lines === "" ? lines : `;${lines}`;
  const basis: SealBasis = { ...from, lines: from.lines + added };
  // A basis with no state of its own (its text was made elsewhere) is hashed whole once; the ones after it go on.
  const state = running.get(from);
  running.set(basis, state === undefined ? createHash("md5").update(basis.lines) : state.copy().update(added));
  return basis;
}

/** linesDigest of a basis's `lines`, from its running digest where it has one. */
export function basisLinesDigest(basis: SealBasis): string {
  const state = running.get(basis);
  return state === undefined ? linesDigest(basis.lines) : cut(state.copy().digest());
}

/** Carried events' text as a cursor carries it: MD5 cut to 96 bits of base64url, as a seal's digest. */
export function linesDigest(lines: string): string {
  return cut(createHash("md5").update(lines).digest());
}

const cut = (digest: Buffer): string => digest.subarray(0, 12).toString("base64url");
