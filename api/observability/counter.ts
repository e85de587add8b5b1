import { escapeHelp, escapeLabelValue, type Labels } from "./exposition";

/** A monotonically increasing counter family: one series per distinct label set. */
export class Counter {
  readonly #series = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = this.#key(labels);
    const series = this.#series.get(key);
    if (series) series.value += by;
    else this.#series.set(key, { labels: { ...labels }, value: by });
  }

  /**
   * One series, resolved once: a hot path keeps the handle instead of building and hashing a label key per request
   * (as Histogram.series). The series is listed from its first increment, as with inc().
   */
  series(labels: Labels): { inc(by?: number): void } {
    const key = this.#key(labels);
    const own = { ...labels };
    const all = this.#series;
    let series = all.get(key);
    return {
      inc(by = 1) {
        if (series === undefined) {
          series = all.get(key) ?? { labels: own, value: 0 };
          all.set(key, series);
        }
        series.value += by;
      },
    };
  }

  /** The current value of one series (0 when never incremented). */
  get(labels: Labels = {}): number {
    return this.#series.get(this.#key(labels))?.value ?? 0;
  }

  /** The series key: label values in labelNames order, NUL-separated. A loop, not map+join: inc runs per request. */
  #key(labels: Labels): string {
    const names = this.labelNames;
    let key = "";
    for (let i = 0; i < names.length; i++)
      key += i === 0 ? (labels[names[0]!] ?? "") : `\u0000${labels[names[i]!] ?? ""}`;
    return key;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.#series.values()) {
      const pairs = this.labelNames.map((n) => `${n}="${escapeLabelValue(labels[n] ?? "")}"`);
      lines.push(`${this.name}${pairs.length ? `{${pairs.join(",")}}` : ""} ${value}`);
    }
    return lines.join("\n");
  }
}
