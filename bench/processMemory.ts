/**
 * A served process read from the outside, for the benches: its RSS and CPU time (/proc), what its RSS is made of —
 * anonymous and file-backed pages, V8's heap used and total and its external memory (the process's own
 * /api/metrics) — and its garbage collections. Used by abuse-soak, abuse-choices, first-reader and supply-hit.
 */
import { readFileSync } from "node:fs";

/** The process's resident set in MB (/proc/<pid>/status VmRSS). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rss = /VmRSS:\s+(\d+)/.exec(status);
  if (!rss) throw new Error(`process ${pid} has no RSS (it exited): ${/State:.*/.exec(status)?.[0]}`);
  return Number(rss[1]) / 1024;
}

/** utime + stime of the process, all its threads, in clock ticks (100 a second on Linux). */
export function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

export async function composition(pid: number, base: string): Promise<string> {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024;
  const text = await (await fetch(`${base}/api/metrics`)).text();
  const mb = (name: string) => Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
  return (
    `anon ${kb("RssAnon").toFixed(0)} MB, file ${kb("RssFile").toFixed(0)} MB; V8 heap used ` +
    `${mb("nodejs_heap_size_used_bytes").toFixed(0)} / total ${mb("nodejs_heap_size_total_bytes").toFixed(0)} MB, ` +
    `external ${mb("nodejs_external_memory_bytes").toFixed(0)} MB`
  );
}

/** The process's garbage collections so far (prom-client's nodejs_gc_duration_seconds, all kinds summed). */
export type GcTally = { count: number; seconds: number; over10ms: number; over100ms: number };

export async function gcTally(base: string): Promise<GcTally> {
  const text = await (await fetch(`${base}/api/metrics`)).text();
  const sum = (re: RegExp) =>
    text
      .split("\n")
      .filter((l) => re.test(l))
      .reduce((n, l) => n + Number(l.split(" ").at(-1)), 0);
  const count = sum(/^nodejs_gc_duration_seconds_count\{/);
  return {
    count,
    seconds: sum(/^nodejs_gc_duration_seconds_sum\{/),
    over10ms: count - sum(/^nodejs_gc_duration_seconds_bucket\{le="0\.01",/),
    over100ms: count - sum(/^nodejs_gc_duration_seconds_bucket\{le="0\.1",/),
  };
}

/** What the collector did between two tallies: pauses, their total time, those over 10 and 100 ms. */
export function gcBetween(a: GcTally, b: GcTally): string {
  return (
    `GC ${b.count - a.count} pauses, ${((b.seconds - a.seconds) * 1000).toFixed(0)} ms in all, ` +
    `${b.over10ms - a.over10ms} over 10 ms, ${b.over100ms - a.over100ms} over 100 ms`
  );
}
