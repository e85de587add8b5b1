/**
 * The start-up check of REDIS_URL (api/server/process.ts, before the caches and the limiter open their connections).
 * An unreachable Redis is an outage the service rides out: it starts degraded (in-process caches and limits) and
 * shares again once Redis answers. But a Redis that answers and refuses what the URL asks — a database index it does
 * not have, a wrong password, no password where one is required, a user without the rights — refuses it on every
 * reconnect, for ever: that is a configuration mistake, and the process stops with a message naming REDIS_URL (its
 * host only: the URL carries the password) instead of running degraded until someone reads the warnings.
 */
import { Redis } from "ioredis";
import { ConfigError } from "../config";
import { redactUrl } from "../redact";

/**
 * Redis's answers that no retry changes: AUTH's (WRONGPASS, "invalid password"), a command before AUTH (NOAUTH), an
 * ACL refusal (NOPERM), SELECT of a database the server does not have.
 */
const PERMANENT = /^(WRONGPASS|NOAUTH|NOPERM)\b|invalid (username-)?password|DB index is out of range/i;

/**
 * Opens one connection as the service's clients do (the same URL: TLS, user, password, database), sends PING and
 * closes it, all within `connectTimeoutMs` (2 s). Throws ConfigError when Redis answers with a permanent refusal;
 * anything else (unreachable, silent, slow) is left to the caches, which start degraded and warn.
 */
export async function checkRedis(url: string, options: { connectTimeoutMs?: number } = {}): Promise<void> {
  const probe = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    // One try: an unreachable Redis is not waited for here (the caches retry in the background).
    retryStrategy: () => null,
  });
  // The handshake's refusals (AUTH, SELECT) arrive as error events, not as the connect's rejection.
  const errors: Error[] = [];
  probe.on("error", (error: Error) => errors.push(error));
  // The whole check is bounded, not only the TCP connect: a Redis that takes the connection and never answers (hung,
  // SIGSTOPped, a silent proxy) left the handshake and PING waiting, and the process did not listen until it answered.
  // Past the bound it is an outage like an unreachable one: the caches start degraded and retry.
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, options.connectTimeoutMs ?? 2_000);
  });
  try {
    await Promise.race([
      (async () => {
        await probe.connect();
        await probe.ping();
      })().catch((error: unknown) => {
        errors.push(error as Error);
      }),
      silent,
    ]);
  } finally {
    clearTimeout(timer);
    probe.disconnect();
  }
  const refusal = errors.find((e) => PERMANENT.test(e.message));
  if (refusal) {
    throw new ConfigError(
      `invalid configuration: REDIS_URL at ${redactUrl(url)}: Redis refused it (${refusal.message})`,
    );
  }
}
