/**
 * Structured logs: one JSON object per line on stdout. Every value passes through `scrub` before it is
 * written, because RPC URLs carry provider API keys (design.md: secrets never appear in logs) and a
 * user's address is personal data we do not keep at info level.
 */
import { redactUrls } from "../redact";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Whether a line at this level would be written, so hot paths can skip building its fields. */
  enabled?(level: LogLevel): boolean;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export const LOG_LEVELS = Object.keys(RANK) as LogLevel[];

// Exactly 40 hex digits after 0x, not part of a longer hex run (a tx hash or calldata is left alone).
const ADDRESS_RE = /\b0x([0-9a-fA-F]{4})[0-9a-fA-F]{32}([0-9a-fA-F]{4})(?![0-9a-fA-F])/g;

/** 0x1234…abcd: enough to tell two users apart in a log, not enough to identify one. */
export function shortenAddress(address: string): string {
  return address.replace(ADDRESS_RE, "0x$1…$2");
}

/**
 * Removes secrets from any text: every URL is reduced to scheme + host (redactUrl); above debug
 * level every 0x-address is shortened too.
 */
export function scrubText(text: string, keepAddresses = false): string {
  const noUrls = redactUrls(text);
  return keepAddresses ? noUrls : shortenAddress(noUrls);
}

function scrub(value: unknown, keepAddresses: boolean, depth = 0): unknown {
  if (typeof value === "string") return scrubText(value, keepAddresses);
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return { name: value.name, message: scrubText(value.message, keepAddresses) };
  if (value === null || typeof value !== "object") return value;
  if (depth > 6) return "[deep]";
  if (Array.isArray(value)) return value.map((v) => scrub(v, keepAddresses, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v, keepAddresses, depth + 1)]));
}

export type LoggerOptions = {
  /** Lines below this level are dropped. Default: "info" (a process gives its LOG_LEVEL: api/config.ts). */
  level?: LogLevel;
  /** Where a finished line goes (without the newline). Default: stdout. */
  write?: (line: string) => void;
  /** Fields on every line (e.g. `{ service: "api" }`). */
  base?: LogFields;
};

export function createLogger(options: LoggerOptions = {}): Logger {
  const min = RANK[options.level ?? "info"];
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const base = options.base ?? {};
  const log =
    (level: LogLevel) =>
    (msg: string, fields: LogFields = {}) => {
      if (RANK[level] < min) return;
      const keep = level === "debug";
      const { msg: text, ...record } = scrub({ ...base, ...fields, msg }, keep) as LogFields;
      const head = { time: new Date().toISOString(), level, msg: text };
      // head first for readability, and again last so no field can overwrite time, level or msg.
      write(JSON.stringify(Object.assign({ ...head }, record, head)));
    };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    enabled: (level) => RANK[level] >= min,
  };
}

/** Drops everything; for callers that have not asked for logs. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, enabled: () => false };
