/**
 * The settings of webhook delivery, defined once (see src/domain/Setting.ts):
 * how long a receiver has to answer, and where this instance's delivery
 * runner listens for the other instances sharing its PostgreSQL database
 * (docs/webhooks.md). AppConfig reads them with everything else at start.
 */
import { Duration, type Effect } from "effect"
import type { InvalidConfig } from "./Errors.ts"
import { duration, integer, readSettings, setting, text } from "./Setting.ts"

export interface WebhookSettings {
  /** A delivery attempt's time to a 2xx (WEBHOOK_TIMEOUT). */
  readonly timeout: Duration.Duration
  /** The address the other instances reach this instance's runner at (CLUSTER_RUNNER_HOST). */
  readonly runnerHost: string
  /** The runner's port; 0 is a free port chosen at start (CLUSTER_RUNNER_PORT). */
  readonly runnerPort: number
}

export const DEFAULT_WEBHOOKS: WebhookSettings = {
  timeout: Duration.seconds(10),
  runnerHost: "127.0.0.1",
  runnerPort: 0
}

export const WEBHOOK_SETTINGS = {
  timeout: setting("WEBHOOK_TIMEOUT", {
    ...duration({ min: Duration.millis(1) }),
    default: DEFAULT_WEBHOOKS.timeout,
    defaultText: "10 seconds",
    meaning: "time a webhook receiver has to answer a delivery with a 2xx; a slower answer is a failed attempt, retried"
  }),
  runnerHost: setting("CLUSTER_RUNNER_HOST", {
    ...text,
    default: DEFAULT_WEBHOOKS.runnerHost,
    defaultText: "127.0.0.1",
    meaning: "on PostgreSQL: the address this instance's delivery runner listens on and the other instances sharing the " +
      "database reach it at (instances on several hosts set their own reachable address)"
  }),
  runnerPort: setting("CLUSTER_RUNNER_PORT", {
    ...integer({ min: 0, max: 65535 }),
    default: DEFAULT_WEBHOOKS.runnerPort,
    defaultText: "0 (a free port)",
    meaning: "on PostgreSQL: the port of this instance's delivery runner (0: a free one, chosen at start)"
  })
}

/** WEBHOOK_* and CLUSTER_RUNNER_*, defaults for what is not set. */
export const webhookConfig: Effect.Effect<WebhookSettings, InvalidConfig> = readSettings(WEBHOOK_SETTINGS)
