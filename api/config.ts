import { z } from "zod";
import { DEFAULT_RPC_TIMEOUT_MS, redactUrl } from "./chain/rpc";
import { loadManifest, type Manifest, NETWORKS, type Network } from "./manifest";

export const LOCAL_RPC_URL = "http://127.0.0.1:8545";

/** The service's whole configuration, built once from the environment at start-up. */
export type AppConfig = {
  network: Network;
  chainId: number;
  manifest: Manifest;
  /** null → the supply routes answer SUPPLY_NO_RPC_URL, reads fail upstream; /max still answers. */
  rpcUrl: string | null;
  rpcTimeoutMs: number;
  redisUrl: string | null;
  /** Peers whose X-Forwarded-For is believed (exact IPs). */
  trustedProxies: string[];
  rateLimit: { max: number; windowSec: number };
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

const url = (schemes: string[]) =>
  z.string().refine((v) => {
    try {
      return schemes.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, `must be a URL (${schemes.join(" or ")})`);

const intIn = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be between ${min} and ${max}`);

const envSchema = z.object({
  NETWORK: z.enum(Object.keys(NETWORKS) as [Network, ...Network[]]).default("local"),
  /** Overrides deployments/<NETWORK>.json (tests point it at their own devnet's manifest). */
  MANIFEST_FILE: z.string().optional(),
  RPC_URL: url(["http:", "https:"]).optional(),
  RPC_TIMEOUT_MS: intIn(100, 120_000).optional(),
  REDIS_URL: url(["redis:", "rediss:"]).optional(),
  TRUSTED_PROXIES: z.string().optional(),
  RATE_LIMIT_MAX: intIn(1, 1_000_000).optional(),
  RATE_LIMIT_WINDOW_SEC: intIn(1, 86_400).optional(),
});

/** Reads the environment; a bad or missing value throws one ConfigError naming every variable at fault. */
export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  // Treat empty strings as unset so `RPC_URL=` behaves like no RPC at all.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0]);
      // Never echo a URL variable's value: it may carry an API key.
      return `${name}: ${i.message}`;
    });
    throw new ConfigError(`invalid configuration: ${lines.join("; ")}`);
  }
  const e = parsed.data;
  const manifest = loadManifest(e.NETWORK, e.MANIFEST_FILE);
  const trustedProxies = (e.TRUSTED_PROXIES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    network: e.NETWORK,
    chainId: manifest.chainId,
    manifest,
    // The local devnet's anvil is the one default; every other network must name its node.
    rpcUrl: e.RPC_URL ?? (e.NETWORK === "local" ? LOCAL_RPC_URL : null),
    rpcTimeoutMs: e.RPC_TIMEOUT_MS ?? DEFAULT_RPC_TIMEOUT_MS,
    redisUrl: e.REDIS_URL ?? null,
    trustedProxies,
    rateLimit: { max: e.RATE_LIMIT_MAX ?? 300, windowSec: e.RATE_LIMIT_WINDOW_SEC ?? 60 },
  };
}

/** A one-line description safe to log: no secrets. */
export function describeConfig(config: AppConfig): string {
  return [
    `network=${config.network}`,
    `chainId=${config.chainId}`,
    `rpc=${config.rpcUrl ? redactUrl(config.rpcUrl) : "none"}`,
    `redis=${config.redisUrl ? redactUrl(config.redisUrl) : "none"}`,
  ].join(" ");
}
