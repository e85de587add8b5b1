/**
 * prom-client's default metrics of this process (process_resident_memory_bytes, process_cpu_seconds_total,
 * process_open_fds, nodejs_eventloop_lag_seconds, nodejs_gc_duration_seconds, nodejs_heap_size_used_bytes, …),
 * named as prom-client names them so the dashboards and alerts written for every Node service apply.
 *
 * One registry per process, made on first use: the metrics describe the process, not one app, and
 * collectDefaultMetrics installs a GC observer and an event-loop-delay monitor that live as long as the
 * process — one per app would pile up where a process builds many apps (the tests). Its own registry, not
 * prom-client's global one, so nothing else loaded in the process (Ponder keeps a registry of its own) adds
 * to or takes from it. Read only at scrape time: no prom-client object is on a request's path.
 */
import { collectDefaultMetrics, Registry } from "prom-client";

let registry: Registry | undefined;

export function processMetrics(): Registry {
  if (registry === undefined) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
