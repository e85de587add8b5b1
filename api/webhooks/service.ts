/**
 * The webhooks of a serving process, assembled once (api/server/process.ts): the store on the deployment's database
 * (or the local stack's in-process one), its tables created on first use, and — once the index routes exist to answer
 * for it (api/webhooks/routes.ts) — the feeder and worker (api/webhooks/engine.ts). Closed with the process.
 */

import type { AnswerFetcher } from "../live/routeAnswers";
import type { Logger } from "../observability/logger";
import type { WebhookMetrics } from "../observability/webhookMetrics";
import type { IndexRuntime } from "../read/runtime";
import { WEBHOOK_TIMING, WebhookEngine, type WebhookSettings, type WebhookTiming } from "./engine";
import type { Sql } from "./sql";
import { WebhookStore } from "./store";

export class Webhooks {
  readonly store: WebhookStore;
  #ready: Promise<void> | null = null;
  #engine: WebhookEngine | null = null;

  constructor(
    sql: Sql,
    schema: string,
    readonly settings: WebhookSettings,
    readonly logger: Logger,
    readonly metrics?: WebhookMetrics,
    readonly timing: WebhookTiming = WEBHOOK_TIMING,
  ) {
    this.store = new WebhookStore(sql, schema);
  }

  /** The tables exist (created on first use); a failure is tried again by the next caller. */
  ready = (): Promise<void> => {
    if (!this.#ready) {
      this.#ready = this.store.migrate().catch((error: unknown) => {
        this.#ready = null;
        throw error;
      });
    }
    return this.#ready;
  };

  /** Starts the feeder and the worker on the index the routes read (once per process). */
  attach(rt: IndexRuntime, fetchAnswer: AnswerFetcher): void {
    if (this.#engine) return;
    this.#engine = new WebhookEngine(
      this.store,
      this.ready,
      rt,
      fetchAnswer,
      this.settings,
      this.logger,
      this.metrics,
      this.timing,
    );
    this.#engine.start();
  }

  /** Wakes this process's worker: a subscription was registered, or a replay re-queued deliveries. */
  wake(): void {
    this.#engine?.wake();
  }

  /** Whether this process's worker polls the outbox now (false: idle, or not started). */
  get polling(): boolean {
    return this.#engine?.polling ?? false;
  }

  async close(): Promise<void> {
    await this.#engine?.stop();
    await this.store.sql.close().catch(() => {});
  }
}
