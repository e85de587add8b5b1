import { escapeHelp, escapeLabelValue, type Labels } from "./exposition";

/** Request-duration buckets in seconds: a cached supply answer sits in the first, a slow node's read in the last. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** A histogram family (Prometheus cumulative buckets, _sum and _count): one series per distinct label set. */
export class Histogram {
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[] = DURATION_BUCKETS,
  ) {}

  /** Records one observation (seconds). */
  observe(labels: Labels, value: number): void {
    this.series(labels).observe(value);
  }

  /** One series, resolved once: a hot path keeps the handle instead of building a label key per request. */
  series(labels: Labels): { observe(value: number): void } {
    let key = "";
    for (let i = 0; i < this.labelNames.length; i++)
      key += `${i === 0 ? "" : "\u0000"}${labels[this.labelNames[i]!] ?? ""}`;
    let series = this.#series.get(key);
    if (series === undefined) {
      series = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    const s = series;
    const buckets = this.buckets;
    return {
      observe(value: number) {
        for (let i = 0; i < buckets.length; i++) if (value <= buckets[i]!) s.counts[i]!++;
        s.sum += value;
        s.count++;
      },
    };
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      const pairs = this.labelNames.map((n) => `${n}="${escapeLabelValue(labels[n] ?? "")}"`);
      const at = (extra: string) => `{${[...pairs, ...(extra ? [extra] : [])].join(",")}}`;
      for (let i = 0; i < this.buckets.length; i++)
        lines.push(`${this.name}_bucket${at(`le="${this.buckets[i]}"`)} ${counts[i]}`);
      lines.push(`${this.name}_bucket${at('le="+Inf"')} ${count}`);
      lines.push(`${this.name}_sum${pairs.length ? `{${pairs.join(",")}}` : ""} ${sum}`);
      lines.push(`${this.name}_count${pairs.length ? `{${pairs.join(",")}}` : ""} ${count}`);
    }
    return lines.join("\n");
  }
}
