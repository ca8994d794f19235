/**
 * Emptying an app's test data space (src/domain/Grants.ts, `dataSpaceOf`) in
 * one transaction: its records (and so its numbers restart at 000001), its
 * exchange rates, its events and their deliveries, its webhook endpoints'
 * signing secrets and its model files. Live data is never touched: the space
 * emptied is the test space of the app named, whatever the caller passes.
 *
 * A delivery still being retried finds its row gone and stops (attempts.ts).
 * The removed parts leave their tombstones in `part_shape`, so a similarity
 * index built before learns that they are gone. The meter's rows stay: they
 * are the app's usage and request log.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { dataSpaceOf, type TestDataEmptied } from "../domain/Grants.ts"
import { WebhookEndpoint } from "../domain/resources/webhooks.ts"

export const emptyTestData = (appId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const space = dataSpaceOf(appId, "test")
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
      return { appId, mode: "test", records, events, webhookDeliveries, modelFiles } satisfies TestDataEmptied
    }))
  })
