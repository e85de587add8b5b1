/** Counts event-loop iterations (check phases: a setImmediate chain) until stop() is called. */
export function iterationCounter() {
  let n = 0;
  let running = true;
  const tick = () => {
    n++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    now: () => n,
    stop: () => {
      running = false;
    },
  };
}

/**
 * How late a timer of `ms` set now fires (ms): this process's event-loop lag over that span, which a bound on an
 * answer's time can allow for, on a machine busy with other tests, without loosening what it checks.
 */
export function timerLateness(ms: number): Promise<number> {
  const due = performance.now() + ms;
  return new Promise((resolve) => setTimeout(() => resolve(Math.max(0, performance.now() - due)), ms));
}
