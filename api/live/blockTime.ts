/**
 * A block's timestamp, for the windowed duration boards' exits (an entry leaves its window at the first block whose
 * timestamp is past the entry's + the window): the stream hub (api/index/streamHub.ts) and the webhook feeder
 * (api/webhooks/engine.ts) both ask it where a range of blocks starts.
 */
import type { IndexRuntime } from "../read/runtime";

/** A block's timestamp: the clock's, else the index's (an event in it, or its head), else the node's. */
export async function timeOfBlock(rt: IndexRuntime, block: bigint): Promise<bigint> {
  const cached = rt.clock.cached(block);
  if (cached !== null) return cached;
  const generation = rt.clock.generation;
  const { head, eventTime } = await rt.index.probe(block);
  return rt.clock.known(block, head, eventTime, generation) ?? (await rt.clock.fromNode(block, head, rt.rpc));
}
