/**
 * The engine's one repository for every resource: records are JSON documents
 * in `engine_record`, keyed by resource and id and owned by one app. The
 * resource definitions (src/domain) decide the fields; nothing here is
 * written per resource.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { randomUUID } from "node:crypto"
import type { RecordFilter } from "../domain/Resource.ts"

export type StoredRecord = Readonly<Record<string, unknown>>

const DATE_COLUMNS = { createdAt: "created_at", updatedAt: "updated_at" } as const

export class RecordRepository extends Context.Service<RecordRepository, {
  readonly find: (resource: string, appId: string, id: string) => Effect.Effect<StoredRecord | undefined, SqlError>
  readonly list: (resource: string, appId: string, filter: RecordFilter) => Effect.Effect<ReadonlyArray<StoredRecord>, SqlError>
  readonly insert: (resource: string, appId: string, input: StoredRecord) => Effect.Effect<StoredRecord, SqlError>
  /** `undefined` when no such record belongs to the app. */
  readonly replace: (resource: string, appId: string, id: string, input: StoredRecord) => Effect.Effect<StoredRecord | undefined, SqlError>
}>()("mfg/engine/RecordRepository") {
  static readonly layer = Layer.effect(
    RecordRepository,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      return RecordRepository.of({
        find: (resource, appId, id) =>
          sql<{ data: StoredRecord }>`
            SELECT data FROM engine_record WHERE resource = ${resource} AND id = ${id} AND app_id = ${appId}`.pipe(
            Effect.map((rows) => rows[0]?.data)
          ),

        list: (resource, appId, filter) => {
          const conditions = [sql`resource = ${resource}`, sql`app_id = ${appId}`]
          if (filter.ids !== undefined) conditions.push(sql`id = ANY(${filter.ids}::text[])`)
          for (const { field, values } of filter.equals) {
            conditions.push(sql`data->>${field} = ANY(${values}::text[])`)
          }
          for (const { field, from, to } of filter.dates) {
            const column = sql.literal(DATE_COLUMNS[field])
            if (from !== undefined) conditions.push(sql`${column} >= ${from.toISOString()}::timestamptz`)
            if (to !== undefined) conditions.push(sql`${column} <= ${to.toISOString()}::timestamptz`)
          }
          return sql<{ data: StoredRecord }>`
            SELECT data FROM engine_record WHERE ${sql.and(conditions)}
            ORDER BY created_at, id LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(
            Effect.map((rows) => rows.map((row) => row.data))
          )
        },

        insert: (resource, appId, input) => {
          const now = new Date().toISOString()
          const record = { ...input, id: randomUUID(), createdAt: now, updatedAt: now }
          return sql`
            INSERT INTO engine_record (resource, id, app_id, data, created_at, updated_at)
            VALUES (${resource}, ${record.id}, ${appId}, ${JSON.stringify(record)}::jsonb, ${now}::timestamptz, ${now}::timestamptz)`.pipe(
            Effect.as(record)
          )
        },

        replace: (resource, appId, id, input) => {
          const now = new Date().toISOString()
          // Whole-record replacement: only id and createdAt survive from the stored record.
          return sql<{ data: StoredRecord }>`
            UPDATE engine_record
            SET data = ${JSON.stringify(input)}::jsonb || jsonb_build_object('id', id, 'createdAt', data->'createdAt', 'updatedAt', ${now}::text),
                updated_at = ${now}::timestamptz
            WHERE resource = ${resource} AND id = ${id} AND app_id = ${appId}
            RETURNING data`.pipe(Effect.map((rows) => rows[0]?.data))
        }
      })
    })
  )
}
