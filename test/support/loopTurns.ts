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
