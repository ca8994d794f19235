/**
 * The statements that empty one data space, in one transaction: its webhook
 * endpoints' signing secrets, its deliveries, events, model files (chunks
 * first), records, counters and exchange rates. Which space, and that it is
 * never a live one, testData.ts decides.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { WebhookEndpoint } from "../domain/resources/webhooks.ts"

/** What emptying a space removed, counted in the database. */
export interface SpaceRemoved {
  readonly records: number
  readonly events: number
  readonly webhookDeliveries: number
  readonly modelFiles: number
}

export const removeDataSpace = (space: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    /** How many rows a DELETE removed, counted in the database. */
    const count = (rows: ReadonlyArray<{ readonly removed: number }>) => rows[0]?.removed ?? 0
    return sql.withTransaction(Effect.gen(function*() {
      yield* sql`
        DELETE FROM engine_webhook_secret WHERE endpoint_id IN (
          SELECT id FROM engine_record WHERE resource = ${WebhookEndpoint.name} AND app_id = ${space})`
      const webhookDeliveries = count(
        yield* sql<{ removed: number }>`
        WITH gone AS (DELETE FROM engine_webhook_delivery WHERE app_id = ${space} RETURNING 1) SELECT count(*)::int AS removed FROM gone`
      )
      const events = count(
        yield* sql<{ removed: number }>`
        WITH gone AS (DELETE FROM engine_event WHERE app_id = ${space} RETURNING 1) SELECT count(*)::int AS removed FROM gone`
      )
      yield* sql`
        DELETE FROM engine_model_file_chunk WHERE upload_id IN (SELECT id FROM engine_model_file WHERE app_id = ${space})`
      const modelFiles = count(
        yield* sql<{ removed: number }>`
        WITH gone AS (DELETE FROM engine_model_file WHERE app_id = ${space} RETURNING 1) SELECT count(*)::int AS removed FROM gone`
      )
      const records = count(
        yield* sql<{ removed: number }>`
        WITH gone AS (DELETE FROM engine_record WHERE app_id = ${space} RETURNING 1) SELECT count(*)::int AS removed FROM gone`
      )
      yield* sql`DELETE FROM engine_counter WHERE app_id = ${space}`
      yield* sql`DELETE FROM engine_exchange_rate WHERE app_id = ${space}`
      // The answers of its keyed writes name records that are gone: a key used again runs afresh.
      yield* sql`DELETE FROM engine_idempotency WHERE app_id = ${space}`
      return { records, events, webhookDeliveries, modelFiles } satisfies SpaceRemoved
    }))
  })
