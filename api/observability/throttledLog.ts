import type { LogFields, Logger, LogLevel } from "./logger";

/**
 * A log line for an event that can happen thousands of times a second (a refused connection): the first
 * occurrence is written at once, the ones after it are counted, and at most one line per `intervalMs` says
 * how many there were (`count`, with the fields of the latest). Nothing is written while nothing happens.
 */
export function throttledLog(
  logger: Logger,
  level: LogLevel,
  msg: string,
  intervalMs = 60_000,
): (fields?: LogFields) => void {
  let timer: NodeJS.Timeout | undefined;
  let count = 0;
  let latest: LogFields = {};
  const flush = () => {
    timer = undefined;
    if (count === 0) return;
    logger[level](msg, { ...latest, count, intervalSec: intervalMs / 1000 });
    count = 0;
    timer = setTimeout(flush, intervalMs).unref();
  };
  return (fields = {}) => {
    if (timer === undefined) {
      logger[level](msg, { ...fields, count: 1 });
      timer = setTimeout(flush, intervalMs).unref();
      return;
    }
    count++;
    latest = fields;
  };
}
