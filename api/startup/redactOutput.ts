/**
 * Keeps configured secrets out of everything the process prints, Ponder's own lines included. Ponder's indexer
 * logs viem's HttpRequestError on every failed RPC round trip, and viem prints the full URL ("URL: https://host/
 * v2/<key>"; it strips only user:password). Those lines never pass through our logger, so the process's
 * stdout/stderr writes are filtered instead: every URL is reduced to scheme + host (redactUrl), and the secret
 * parts of the configured URLs (path, query, password) are masked wherever they appear on their own.
 *
 * Covers Ponder's default (pretty) log format, which prints through console.log. `--log-format json` writes to
 * the file descriptor directly (pino's sonic-boom) and is NOT covered: the runbook says to keep the default.
 */
import { redactUrls } from "../redact";

const MASK = "***";

/** The parts of `url` a provider or operator treats as secret (at least 6 characters, so no common word). */
export function secretParts(url: string): string[] {
  try {
    const u = new URL(url);
    // A redis:, rediss: or postgres: URL without a path has the path "" (not "/" as http: has): no path either.
    const path = u.pathname === "/" ? "" : u.pathname;
    const parts = [u.password, path, u.search, ...path.split("/")];
    // A URL with nothing secret in it (scheme, host, port) is shown as redactUrl shows it, not masked whole.
    const secret = u.password !== "" || path !== "" || u.search !== "";
    return (secret ? [url, ...parts] : parts).filter((p) => p.length >= 6);
  } catch {
    return url.length >= 6 ? [url] : [];
  }
}

export function redactText(text: string, secrets: readonly string[]): string {
  let out = redactUrls(text);
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(MASK);
  return out;
}

let installed = false;

/** Wraps process.stdout/stderr.write once per process; `urls` are the configured secret-bearing URLs. */
export function redactProcessOutput(urls: readonly (string | null | undefined)[]): void {
  if (installed) return;
  installed = true;
  // Longest first, so a whole URL is masked before one of its parts.
  const secrets = [...new Set(urls.flatMap((u) => (u ? secretParts(u) : [])))].sort((x, y) => y.length - x.length);
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const text =
        typeof chunk === "string" ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString() : null;
      return write(text === null ? chunk : redactText(text, secrets), ...rest);
    }) as typeof stream.write;
  }
}

/** The environment variables that carry secrets in their URL. */
export function secretUrlsFrom(env: Record<string, string | undefined> = process.env): string[] {
  return Object.entries(env)
    .filter(
      ([k, v]) =>
        v && (/^(RPC_URL|DATABASE_URL|DATABASE_PRIVATE_URL|REDIS_URL)$/.test(k) || /^PONDER_RPC_URL_\d+$/.test(k)),
    )
    .map(([, v]) => v as string);
}
