/**
 * An index signal the test tells itself, as the NOTIFY would (api/read/indexSignal.ts: a head, its time, the revert
 * heard before it). What the real signal hears of Ponder's SQL is test/read/indexSignal.test.ts's business; tests of
 * what listens to it (the compute-ahead, the stream hub, the webhook feeder) tell it here.
 */
import type { IndexSignalListener, IndexSignalSource, Reverted } from "../../api/read/indexSignal";
import { checkpointOf, type SyntheticIndex } from "./syntheticIndex";

export type ToldSignal = {
  signal: IndexSignalSource;
  /**
   * Tells every listener, as one notification would (`writes`: the lock events' write count it carried; `carried`:
   * the lock events it carried, "<rewrites>:<old block>:<rows>").
   */
  tell(block: bigint, time?: bigint, reverted?: Reverted, writes?: string, carried?: string): void;
};

export function toldSignal(): ToldSignal {
  const listeners = new Set<IndexSignalListener>();
  return {
    signal: {
      subscribe: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      head: null,
      listening: true,
    },
    tell(block, time, reverted, writes, carried) {
      for (const listener of listeners) listener(block, time, reverted, writes, carried);
    },
  };
}

/**
 * The synthetic index's head moved to `block` (Ponder's checkpoint row, as the indexer's commit writes it), then told:
 * `query` runs on the index's database, `schema` holds its tables.
 */
export async function commitTold(
  told: ToldSignal,
  query: (text: string, params: unknown[]) => Promise<unknown>,
  schema: string,
  index: SyntheticIndex,
  block: bigint,
  reverted?: Reverted,
  writes?: string,
  carried?: string,
): Promise<void> {
  const time = index.blockTimes.get(block)!;
  await query(`UPDATE ${schema}._ponder_checkpoint SET latest_checkpoint = $1`, [checkpointOf(8453, block, time)]);
  told.tell(block, time, reverted, writes, carried);
}
