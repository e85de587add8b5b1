/** The Prometheus text format (0.0.4), for families whose samples are read at scrape time. */

export type Labels = Record<string, string>;
export type Sample = { labels?: Labels; value: number };

export const escapeHelp = (s: string) => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
export const escapeLabelValue = (s: string) => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

/** One family: HELP, TYPE and a line per sample (none: the family is announced, with no series yet). */
export function renderFamily(
  name: string,
  help: string,
  type: "counter" | "gauge",
  samples: readonly Sample[],
): string {
  const lines = [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`];
  for (const { labels, value } of samples) {
    const pairs = Object.entries(labels ?? {}).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
    lines.push(`${name}${pairs.length ? `{${pairs.join(",")}}` : ""} ${value}`);
  }
  return lines.join("\n");
}
