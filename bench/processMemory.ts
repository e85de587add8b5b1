/**
 * What an API process's RSS is made of, for the abuse benches: anonymous and file-backed pages (/proc), V8's heap
 * used and total and its external memory (the process's own /api/metrics). Used by bench/abuse-soak.ts and
 * bench/abuse-choices.ts.
 */
import { readFileSync } from "node:fs";

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
