/**
 * `npm start`'s own variables (devnet/start.ts), read as the API's configuration reads every variable
 * (api/config.ts): trimmed, and an empty value counts as unset, so `PORT=` from an env file is the default port
 * rather than port 0. A bad value stops the stack naming the variable, never echoing the value.
 */
export type StartSettings = {
  /** PORT: the API's port (42069). */
  port: number;
  /** ANVIL_PORT: the devnet's port (8545). */
  anvilPort: number;
  /** HOST: the API's listening address (127.0.0.1: the local stack stays on this machine unless asked). */
  host: string;
};

export const START_DEFAULTS = { port: 42069, anvilPort: 8545, host: "127.0.0.1" } as const;

/** Trimmed; empty is unset. */
const value = (v: string | undefined) => v?.trim() || undefined;

function portOf(raw: string | undefined, name: string, fallback: number, problems: string[]) {
  const v = value(raw);
  if (v === undefined) return fallback;
  const n = /^[0-9]+$/.test(v) ? Number(v) : Number.NaN;
  if (!(n >= 1 && n <= 65_535)) {
    problems.push(`${name}: must be a whole number between 1 and 65535`);
    return fallback;
  }
  return n;
}

export function startSettings(env: Record<string, string | undefined> = process.env): StartSettings {
  const problems: string[] = [];
  const port = portOf(env.PORT, "PORT", START_DEFAULTS.port, problems);
  const anvilPort = portOf(env.ANVIL_PORT, "ANVIL_PORT", START_DEFAULTS.anvilPort, problems);
  if (problems.length > 0) throw new Error(`invalid configuration: ${problems.join("; ")}`);
  return { port, anvilPort, host: value(env.HOST) ?? START_DEFAULTS.host };
}

/** How to reach a listener on `host` from this machine: a wildcard address is reached on loopback. */
export function urlHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
