/**
 * Warnings that an outage repeats (the index database down, the node failing) written at most once per window per
 * kind: the first at once, with its cause; the ones after it within the window are counted and written as one line
 * when the window ends (`repeated`: how many, `windowSec`, and the latest cause). An outage under load is a few lines
 * a minute, not one per request, and a reader still sees that it went on and why.
 */
import type { LogFields, Logger } from "./logger";

export const WARNING_WINDOW_MS = 60_000;

export type ThrottledWarn = (key: string, msg: string, fields?: LogFields) => void;

/**
 * `key` names the kind of warning (a small, fixed set chosen by the code: one timer per key at most). Returns the
 * warn function and `flush`, which writes what is pending now (tests; shutdown).
 */
export function throttledWarnings(
  logger: Logger,
  windowMs: number = WARNING_WINDOW_MS,
): ThrottledWarn & { flush(): void } {
  type Pending = { msg: string; fields: LogFields; count: number; timer: NodeJS.Timeout };
  const lastAt = new Map<string, number>();
  const pending = new Map<string, Pending>();

  const emit = (key: string) => {
    const p = pending.get(key);
    if (!p) return;
    pending.delete(key);
    clearTimeout(p.timer);
    lastAt.set(key, performance.now());
    logger.warn(p.msg, { ...p.fields, repeated: p.count, windowSec: Math.round(windowMs / 1000) });
  };

  const warn: ThrottledWarn = (key, msg, fields = {}) => {
    const now = performance.now();
    const last = lastAt.get(key);
    const p = pending.get(key);
    if (p) {
      p.count++;
      p.msg = msg;
      p.fields = fields;
      return;
    }
    if (last === undefined || now - last >= windowMs) {
      lastAt.set(key, now);
      logger.warn(msg, fields);
      return;
    }
    const timer = setTimeout(() => emit(key), last + windowMs - now);
    timer.unref();
    pending.set(key, { msg, fields, count: 1, timer });
  };
  return Object.assign(warn, {
    flush: () => {
      for (const key of [...pending.keys()]) emit(key);
    },
  });
}

/** An error's cause in one short line: its code (ECONNREFUSED, an SQLSTATE …) and message, never a stack. */
export function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error).slice(0, 200);
  const code = (error as { code?: unknown }).code;
  const text = `${typeof code === "string" ? `${code}: ` : ""}${error.message || error.name}`;
  return text.slice(0, 200);
}
