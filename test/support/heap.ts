/**
 * The heap in use after full collections, for tests and benches that measure what something keeps. V8's `gc` is
 * exposed at run time (no command-line flag, so vitest's workers and tsx need nothing); twice, because the first
 * collection's finalizers can free more for the second.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let gc: (() => void) | undefined;

/** Two full collections of this process's heap, now; the bytes in use after them. */
export function heapAfterCollection(): number {
  if (gc === undefined) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
