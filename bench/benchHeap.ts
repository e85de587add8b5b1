/**
 * The bench's own process as a quiet instrument. A bench that built a Base-scale synthetic index holds it (hundreds of
 * MB) unless it lets go, and V8 collects such a heap on its helper threads: the soak's stall log found the bench's
 * process taking ~80 % of a core for 1.2 s at a flood's opening (an incremental mark of 226 ms, four helper threads),
 * on a 2-core machine where Postgres held the other, and the API process it measured waited for a core (its head
 * readers' slowest samples, all four at once). So a bench drops what it no longer needs (ServedIndex.releaseIndex)
 * and collects before each measured phase, when a collection costs the API nothing.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let gc: (() => void) | undefined;

/**
 * A full collection of this process's heap, now (V8's `gc`, exposed at run time without a command-line flag); answers
 * the heap in use after it, in MB, for the bench to print.
 */
export function collectNow(): number {
  if (gc === undefined) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}
