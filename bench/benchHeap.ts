/**
 * The bench's own process as a quiet instrument. A bench that built a Base-scale synthetic index holds it (hundreds of
 * MB) unless it lets go, and V8 collects such a heap on its helper threads: the soak's stall log found the bench's
 * process taking ~80 % of a core for 1.2 s at a flood's opening (an incremental mark of 226 ms, four helper threads),
 * on a 2-core machine where Postgres held the other, and the API process it measured waited for a core (its head
 * readers' slowest samples, all four at once). So a bench drops what it no longer needs (ServedIndex.releaseIndex)
 * and collects before each measured phase, when a collection costs the API nothing.
 */
import { heapAfterCollection } from "../test/support/heap";

/** A full collection of this process's heap, now; answers the heap in use after it, in MB, for the bench to print. */
export function collectNow(): number {
  return heapAfterCollection() / 2 ** 20;
}
