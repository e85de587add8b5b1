/**
 * Large answers take one event-loop turn each (api/http/answerTurns.ts): answers that became ready together
 * (one Redis read resolving every pending rate-limit check) are let through one per turn, in order; small
 * answers never wait. A turn is counted by a setImmediate chain running beside
 * them, so letting two through in one turn fails the test.
 */
import { describe, expect, it } from "vitest";
import { answerTurns, LARGE_ANSWER_BYTES } from "../../api/http/answerTurns";
import { iterationCounter } from "../support/loopTurns";

describe("answerTurns", () => {
  it("lets large answers through one per turn, in the order they asked", async () => {
    const turns = answerTurns();
    const counter = iterationCounter();
    const seen: { i: number; turn: number }[] = [];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        turns.turnFor(LARGE_ANSWER_BYTES + i).then(() => seen.push({ i, turn: counter.now() })),
      ),
    );
    counter.stop();
    expect(seen.map((s) => s.i)).toEqual([0, 1, 2, 3, 4, 5]);
    const distinct = new Set(seen.map((s) => s.turn));
    expect(distinct.size).toBe(6);
    expect(turns.waiting()).toBe(0);
  });

  it("never delays a small answer", async () => {
    const turns = answerTurns();
    const large = turns.turnFor(LARGE_ANSWER_BYTES);
    let small = false;
    void turns.turnFor(LARGE_ANSWER_BYTES - 1).then(() => {
      small = true;
    });
    await Promise.resolve();
    expect(small).toBe(true);
    expect(turns.waiting()).toBe(1);
    await large;
  });
});
