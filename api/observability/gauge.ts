import { escapeHelp } from "./exposition";

/** A single-series gauge in the Prometheus text format: a value that goes up and down, absent until first set. */
export class Gauge {
  #value: number | undefined;
  #read: (() => number | undefined) | undefined;
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  set(value: number | bigint): void {
    this.#value = Number(value);
  }

  /** Reads its value from `read` whenever it is read or rendered (a state kept elsewhere), instead of set(). */
  sample(read: () => number | undefined): void {
    this.#read = read;
  }

  get(): number | undefined {
    return this.#read ? this.#read() : this.#value;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`];
    lines.push(`# TYPE ${this.name} gauge`);
    const value = this.get();
    if (value !== undefined) lines.push(`${this.name} ${value}`);
    return lines.join("\n");
  }
}

/** How far the lock index trails the chain, as the state route last saw both (api/mcp/v1/snapshot.ts). */
export type IndexLagGauges = {
  indexedBlock: Gauge;
  chainHead: Gauge;
  lagBlocks: Gauge;
  /** When the three above were last set: they move only with state reads, so a quiet API shows as stale. */
  observedAt: Gauge;
  /** Records one observation: the chain head a state read was answered at and the index's block (null: no index). */
  observe(head: bigint, indexed: bigint | null): void;
};

export function createIndexLagGauges(): IndexLagGauges {
  const indexedBlock = new Gauge(
    "api_index_indexed_block",
    "The last block the lock index had processed, as of the latest state read (absent: index never reachable).",
  );
  const chainHead = new Gauge("api_chain_head_block", "The chain's block the latest state read was answered at.");
  const lagBlocks = new Gauge(
    "api_index_lag_blocks",
    "Chain head minus indexed block at the latest state read; -1 when the index was unavailable.",
  );
  const observedAt = new Gauge(
    "api_index_lag_observed_timestamp_seconds",
    "Unix time of the state read that last set api_index_lag_blocks.",
  );
  return {
    indexedBlock,
    chainHead,
    lagBlocks,
    observedAt,
    observe(head, indexed) {
      observedAt.set(Math.floor(Date.now() / 1000));
      chainHead.set(head);
      if (indexed === null) {
        lagBlocks.set(-1);
        return;
      }
      indexedBlock.set(indexed);
      lagBlocks.set(head > indexed ? head - indexed : 0n);
    },
  };
}
