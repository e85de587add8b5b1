/**
 * The heavy turns' pacing (api/http/loopPacer.ts): turns of any queue run one per loop iteration, in order, and a
 * long turn is followed by empty iterations, so a server whose loop is busy with them still accepts connections at
 * pace. libuv accepts one connection per poll phase: 400 clients connecting at once (from a child process, each
 * from its own loopback address) while every iteration runs a 7 ms turn are counted by the server's 'connection'
 * events, paced and, in the same run, unpaced (a plain setImmediate chain, as the turns ran before).
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { answerTurns, LARGE_ANSWER_BYTES } from "../../api/http/answerTurns";
import { MAX_HOPS, pace, pacedWaiting } from "../../api/http/loopPacer";
import { iterationCounter } from "../support/loopTurns";

const spin = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

/**
 * ms from a child process starting 400 connections to a server whose loop runs 7 ms turns back to back (`next`
 * schedules each) having accepted all of them (wall clocks: Date.now() on both sides).
 */
async function acceptUnderTurns(next: (turn: () => void) => void): Promise<number> {
  let accepted = 0;
  let allAt = Number.NaN;
  const server = createServer((_req, res) => res.end());
  server.on("connection", () => {
    if (++accepted === 400) allAt = Date.now();
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: "127.0.0.1", backlog: 4096 }, resolve));
  const { port } = server.address() as AddressInfo;
  let turning = true;
  const turn = () => {
    spin(7);
    if (turning) next(turn);
  };
  next(turn);
  const client = spawn(process.execPath, [
    "-e",
    `const net = require("node:net");
     const at = Date.now();
     for (let i = 0; i < 400; i++) {
       const s = net.connect({ host: "127.0.0.1", port: ${port}, localAddress: "127.0." + (1 + Math.floor(i / 250)) + "." + (1 + (i % 250)) });
       s.on("error", () => {});
     }
     process.stdout.write(String(at));
     setTimeout(() => process.exit(0), 15000);`,
  ]);
  let out = "";
  client.stdout.on("data", (d) => {
    out += d;
  });
  const by = Date.now() + 12_000;
  while (Number.isNaN(allAt) && Date.now() < by) await new Promise((r) => setTimeout(r, 20));
  turning = false;
  client.kill();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  expect(accepted).toBe(400);
  expect(out).toMatch(/^\d+$/);
  return allAt - Number(out);
}

describe("loopPacer", () => {
  it("runs turns of different queues one per loop iteration, in the order they came", async () => {
    const a = answerTurns();
    const b = answerTurns();
    const counter = iterationCounter();
    const seen: { who: string; at: number }[] = [];
    const mark = (who: string) => () => {
      seen.push({ who, at: counter.now() });
    };
    await Promise.all([
      a.turnFor(LARGE_ANSWER_BYTES).then(mark("a0")),
      b.turnFor(LARGE_ANSWER_BYTES).then(mark("b0")),
      new Promise<void>((resolve) => pace(() => resolve(mark("p0")()))),
      a.turnFor(LARGE_ANSWER_BYTES).then(mark("a1")),
    ]);
    counter.stop();
    expect(seen.map((s) => s.who)).toEqual(["a0", "b0", "p0", "a1"]);
    expect(new Set(seen.map((s) => s.at)).size).toBe(4);
    expect(pacedWaiting()).toBe(0);
  });

  it("after a long turn, lets the loop go round empty (up to MAX_HOPS) before the next", async () => {
    const counter = iterationCounter();
    const at: number[] = [];
    await new Promise<void>((resolve) => {
      pace(() => {
        at.push(counter.now());
        spin(20);
      });
      pace(() => {
        at.push(counter.now());
        resolve();
      });
    });
    counter.stop();
    // 20 ms at one empty iteration per 0.25 ms is 80, capped.
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(MAX_HOPS);
    expect(at[1]! - at[0]!).toBeLessThanOrEqual(MAX_HOPS + 3);
  });

  it("a loop busy with 7 ms turns accepts 400 connections at least 3× sooner paced than unpaced", async () => {
    const unpaced = await acceptUnderTurns((turn) => setImmediate(turn));
    const paced = await acceptUnderTurns(pace);
    console.log(
      `400 connections accepted under 7 ms turns: unpaced ${Math.round(unpaced)} ms, paced ${Math.round(paced)} ms`,
    );
    expect(paced).toBeLessThan(unpaced / 3);
    expect(paced).toBeLessThan(1_500);
  }, 40_000);
});
