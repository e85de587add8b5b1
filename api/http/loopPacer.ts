/**
 * The event loop's heavy turns, paced process-wide: the turnstile's starts (api/server/turnstile.ts) and the large
 * answers' builds and writes (api/http/answerTurns.ts) run one per loop iteration across all of them, and after
 * each one the loop goes round empty for a while in proportion to how long it took.
 *
 * Why: libuv (1.52, Node 24; src/unix/stream.c uv__server_io) accepts one connection per poll phase. When every
 * iteration of the loop runs a 7 ms page build, the process accepts about 140 connections a second, so 400
 * clients connecting at once left a new client's connection in the kernel's accept queue for 2–3 s (375 waiting
 * there, `ss -ltn`), while the event loop's delay stayed under 150 ms. A bare Node server whose loop spins 7 ms per
 * iteration accepted 400 connections in 2.96 s; with 16 empty iterations after each spin, in 0.29 s. An empty
 * iteration (a poll of the sockets that are ready, nothing else) costs microseconds.
 */

/** After a heavy turn of `ms`, ceil(ms / HOP_PER_MS) empty iterations (each accepts one waiting connection)… */
export const HOP_PER_MS = 0.25;
/** …and at most this many. */
export const MAX_HOPS = 32;

type Turn = () => void;

/** Turns waiting, FIFO: each runs alone in one loop iteration's check phase (its microtasks with it). */
const ready: (Turn | undefined)[] = [];
let head = 0;
let scheduled = false;
/** Empty iterations still owed before the next turn. */
let hops = 0;
/** When the last turn started; its length (microtasks and the next poll included) is read at the first hop. */
let lastStart = -1;

/** Runs `turn` in a loop iteration of its own, after those already waiting and the empty iterations owed. */
export function pace(turn: Turn): void {
  ready.push(turn);
  schedule();
}

/** Turns waiting now. */
export function pacedWaiting(): number {
  return ready.length - head;
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(tick);
}

function tick(): void {
  scheduled = false;
  if (lastStart >= 0) {
    hops = Math.min(MAX_HOPS, Math.ceil((performance.now() - lastStart) / HOP_PER_MS));
    lastStart = -1;
  }
  if (head === ready.length) {
    hops = 0; // nothing waits: the loop is free to accept anyway
    return;
  }
  if (hops > 0) {
    hops--;
    schedule();
    return;
  }
  const turn = ready[head]!;
  ready[head++] = undefined;
  if (head === ready.length) {
    ready.length = 0;
    head = 0;
  }
  lastStart = performance.now();
  try {
    turn();
  } finally {
    // Even when nothing waits: the next tick reads the turn's length (and forgets it if nothing waits then).
    schedule();
  }
}
