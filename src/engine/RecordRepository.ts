/**
 * The engine's one repository for every resource: records are JSON documents
 * in `engine_record`, keyed by resource and id and owned by one app, or by
 * `*` for reference data every app reads. The resource definitions
 * (src/domain) decide the fields; the generic operations are written for no
 * resource in particular. The statements a rule of one resource needs (a
 * quote's state as read, a catalogue model's configurations, the references
 * between records) are here too, named for what they answer: every statement
 * on `engine_record` is in this file.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { RecordFilter } from "../domain/Resource.ts"
import { Ticket, TicketQuote } from "../domain/resources/orders.ts"
import { timeOrderedUuid } from "../domain/TimeOrderedId.ts"

export type StoredRecord = Readonly<Record<string, unknown>>

/** The owner of reference data: every app reads it, none changes it. */
export const GLOBAL_APP = "*"

const DATE_COLUMNS = { createdAt: "created_at", updatedAt: "updated_at" } as const

export interface InsertOptions {
  /** A human number `<prefix>-000042`, counted per app and prefix (the app's first is `<prefix>-000001`). */
  readonly numberPrefix?: string | undefined
  /** An id chosen by the caller (seeded reference data); otherwise a UUID. */
  readonly id?: string | undefined
}

const FIND_SQL = "SELECT data FROM engine_record WHERE resource = $1 AND id = $2 AND app_id IN ($3, $4)"

/** `lookup`'s statement: $1 resource, $2 identifier as given, $3 upper-cased (a number), $4 app, $5 GLOBAL_APP. */
const LOOKUP_SQL = `SELECT data FROM engine_record
  WHERE resource = $1 AND app_id IN ($4, $5)
    AND (id = $2 OR data->>'number' = $3 OR data->>'externalReference' = $2)
  ORDER BY (id = $2) DESC, (data->>'number' = $3) DESC, created_at LIMIT 1`

/** Digits of a record number; a counter past 999999 simply grows longer. */
const NUMBER_DIGITS = 6

/** The unique index that makes an `externalReference` one record's per app and resource (migration 0008). */
export const EXTERNAL_REFERENCE_INDEX = "engine_record_external_reference_unique"

/** A filter's field name as an SQL string literal; fields are schema-declared identifiers, anything else is a defect. */
export const fieldLiteral = (field: string) => {
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(field)) throw new Error(`not a field name: ${JSON.stringify(field)}`)
  return `'${field}'`
}

/** A `validUntil` SQL can compare (the engine writes them so); any other reads as still valid there. */
export const ISO_INSTANT = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})$"

/** Where a record holds a key: field names, `*` for every element of a list. */
export type KeyPath = ReadonlyArray<string>

/** A JSON path matching a record that holds one of `$keys` at `path`. */
const jsonPath = (path: KeyPath) => `$${path.map((segment) => (segment === "*" ? "[*]" : `.${JSON.stringify(segment)}`)).join("")} ? (@ == $keys[*])`

/** Records of `from` that hold one of `keys` at `path` (and, with `only`, whose field has one of its values): what references a record. */
export interface Referrers {
  readonly from: string
  readonly only?: { readonly field: string; readonly values: ReadonlyArray<string> } | undefined
  readonly path: KeyPath
  readonly keys: ReadonlyArray<string>
}

/** The rows of a list filtered by a quote's state as read, and how many match in all. */
export interface QuoteStateFilter {
  readonly filter: RecordFilter
  readonly ticketIds: ReadonlyArray<string> | undefined
  readonly states: ReadonlyArray<string>
  readonly now: Date
}

export class RecordRepository extends Context.Service<RecordRepository, {
  /** A record of the app, or a global one. */
  readonly find: (resource: string, appId: string, id: string) => Effect.Effect<StoredRecord | undefined, SqlError>
  /** A record of the app (or global) whose id, number (in any case) or external reference is `identifier`. */
  readonly lookup: (resource: string, appId: string, identifier: string) => Effect.Effect<StoredRecord | undefined, SqlError>
  /** The app's own record whose `externalReference` is `value` (at most one: migration 0008). */
  readonly findByExternalReference: (resource: string, appId: string, value: string) => Effect.Effect<StoredRecord | undefined, SqlError>
  /**
   * One of the app's own records, its row locked (`FOR UPDATE`) until the
   * transaction ends: a delete takes it before it looks for records that
   * reference this one (src/engine/integrity.ts).
   */
  readonly lockForRemoval: (resource: string, appId: string, id: string) => Effect.Effect<StoredRecord | undefined, SqlError>
  readonly list: (resource: string, appId: string, filter: RecordFilter) => Effect.Effect<ReadonlyArray<StoredRecord>, SqlError>
  /** One page of a list, in creation order (then id), and how many records match the filter in all. */
  readonly page: (
    resource: string,
    appId: string,
    filter: RecordFilter
  ) => Effect.Effect<{ readonly records: ReadonlyArray<StoredRecord>; readonly total: number }, SqlError>
  readonly insert: (resource: string, appId: string, input: StoredRecord, options?: InsertOptions) => Effect.Effect<StoredRecord, SqlError>
  /** Whole-record replacement of one of the app's own records; `undefined` when it has none with that id. */
  readonly replace: (resource: string, appId: string, id: string, input: StoredRecord) => Effect.Effect<StoredRecord | undefined, SqlError>
  /** Deletes one of the app's own records; `undefined` when it has none with that id. */
  readonly remove: (resource: string, appId: string, id: string) => Effect.Effect<StoredRecord | undefined, SqlError>

  /** A lock on `key` until the transaction ends (`pg_advisory_xact_lock`): what orders writes no row lock can. */
  readonly lockKey: (key: string) => Effect.Effect<void, SqlError>
  /** The app's next value of the counter `prefix` (its first is 1), counted in `engine_counter` as record numbers are. */
  readonly nextCount: (appId: string, prefix: string) => Effect.Effect<string, SqlError>
  /** One of the app's own records, its row locked (`FOR UPDATE`): its `updatedAt`, null when it has none; `undefined` when there is no record. */
  readonly lockedUpdatedAt: (resource: string, appId: string, id: string) => Effect.Effect<string | null | undefined, SqlError>
  /** Inserts the reference data (`GLOBAL_APP`) or updates the records that changed, leaving createdAt of existing ones. */
  readonly writeReferenceData: (
    rows: ReadonlyArray<{ readonly resource: string; readonly id: string; readonly data: string }>,
    epoch: string
  ) => Effect.Effect<void, SqlError>

  /**
   * The app's records holding one of each `Referrers`' keys, counted by
   * resource; none when there is nothing to look for.
   */
  readonly countReferrers: (appId: string, referrers: ReadonlyArray<Referrers>) => Effect.Effect<ReadonlyArray<{ resource: string; n: number }>, SqlError>
  /** The records of `target` the app sees holding one of `keys` at `targetKey`, locked (`FOR KEY SHARE`) until the transaction ends. */
  readonly lockHolding: (target: string, appId: string, targetKey: KeyPath, keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredRecord>, SqlError>

  /** The first catalogue model the app sees (by creation) with a configuration of this id. */
  readonly findByConfiguration: (appId: string, configurationId: string) => Effect.Effect<StoredRecord | undefined, SqlError>
  /** A record of `resource` the app sees, other than `id`, with a configuration whose id is one of `ids`. */
  readonly findConfigurationHolder: (
    resource: string,
    appId: string,
    id: string,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<StoredRecord | undefined, SqlError>
  /** The app's own records of `resource` with a configuration of the material, by creation. */
  readonly listByConfigurationMaterial: (resource: string, appId: string, materialId: string) => Effect.Effect<ReadonlyArray<StoredRecord>, SqlError>

  /**
   * Up to `limit` sent quotes of any app whose `validUntil` passed by `now`,
   * each locked with its ticket; rows another transaction holds are skipped
   * (`SKIP LOCKED`).
   */
  readonly lockExpiredQuotes: (now: Date, limit: number) => Effect.Effect<ReadonlyArray<{ app_id: string; data: StoredRecord }>, SqlError>
  /** One page of the app's quotes whose state as of `now` is one of `states`, and how many match in all. */
  readonly pageQuotesByState: (
    appId: string,
    query: QuoteStateFilter
  ) => Effect.Effect<{ readonly records: ReadonlyArray<StoredRecord>; readonly total: number }, SqlError>
}>()("mfg/engine/RecordRepository") {
  static readonly layer = Layer.effect(
    RecordRepository,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const visible = (appId: string) => sql`app_id IN (${appId}, ${GLOBAL_APP})`
      const first = Effect.map((rows: ReadonlyArray<{ data: StoredRecord }>) => rows[0]?.data)
      /** The condition: the row holds one of `keys` at `path` (a top-level field by its expression index where there is one). */
      const holds = (path: KeyPath, keys: ReadonlyArray<string>) =>
        path.length === 1
          ? sql`data->>${sql.literal(fieldLiteral(path[0]!))} = ANY(${keys}::text[])`
          : sql`jsonb_path_exists(data, ${jsonPath(path)}::jsonpath, jsonb_build_object('keys', ${keys}::text[]))`
      /** The rows of `resource` the app sees that pass `filter` (its ids, equalities and date ranges). */
      const matching = (resource: string, appId: string, filter: RecordFilter) => {
        const conditions = [sql`resource = ${resource}`, visible(appId)]
        if (filter.ids !== undefined) conditions.push(sql`id = ANY(${filter.ids}::text[])`)
        for (const { field, ignoreCase, values } of filter.equals) {
          // The field as a literal, so that an expression index on it (migration 0006) can serve the filter.
          const value = sql`data->>${sql.literal(fieldLiteral(field))}`
          conditions.push(
            ignoreCase === true
              ? sql`lower(${value}) = ANY(${values.map((text) => text.toLowerCase())}::text[])`
              : sql`${value} = ANY(${values}::text[])`
          )
        }
        for (const { field, from, to } of filter.dates) {
          const column = sql.literal(DATE_COLUMNS[field])
          if (from !== undefined) conditions.push(sql`${column} >= ${from.toISOString()}::timestamptz`)
          if (to !== undefined) conditions.push(sql`${column} <= ${to.toISOString()}::timestamptz`)
        }
        return sql.and(conditions)
      }

      return RecordRepository.of({
        // The hottest statement: its text is one constant string, so neither the compiler nor the prepared
        // statement cache builds or hashes it anew on every call.
        find: (resource, appId, id) => sql.unsafe<{ data: StoredRecord }>(FIND_SQL, [resource, id, appId, GLOBAL_APP]).pipe(first),

        // A number matches whatever its letters' case (`t-000001` is T-000001; numbers are stored upper case, so the
        // index on them serves it); an id and an external reference match exactly. A constant text, as `find`'s.
        lookup: (resource, appId, identifier) =>
          sql.unsafe<{ data: StoredRecord }>(LOOKUP_SQL, [resource, identifier, identifier.toUpperCase(), appId, GLOBAL_APP]).pipe(first),

        findByExternalReference: (resource, appId, value) =>
          sql<{ data: StoredRecord }>`
            SELECT data FROM engine_record
            WHERE resource = ${resource} AND app_id = ${appId} AND data->>'externalReference' = ${value}
            LIMIT 1`.pipe(first),

        lockForRemoval: (resource, appId, id) =>
          sql<{ data: StoredRecord }>`
            SELECT data FROM engine_record WHERE resource = ${resource} AND id = ${id} AND app_id = ${appId}
            FOR UPDATE`.pipe(first),

        list: (resource, appId, filter) =>
          sql<{ data: StoredRecord }>`
            SELECT data FROM engine_record WHERE ${matching(resource, appId, filter)}
            ORDER BY created_at, id LIMIT ${filter.limit} OFFSET ${filter.offset}`.pipe(
            Effect.map((rows) => rows.map((row) => row.data))
          ),

        // The total is counted in the statement that reads the page (a window over the matching rows, before
        // LIMIT); only a page past the end, which has no row to carry it, counts again.
        page: Effect.fnUntraced(function*(resource, appId, filter) {
          const where = matching(resource, appId, filter)
          const rows = yield* sql<{ data: StoredRecord; total: string | number }>`
            SELECT data, count(*) OVER () AS total FROM engine_record WHERE ${where}
            ORDER BY created_at, id LIMIT ${filter.limit} OFFSET ${filter.offset}`
          if (rows.length > 0) return { records: rows.map((row) => row.data), total: Number(rows[0]!.total) }
          if (filter.offset === 0) return { records: [], total: 0 }
          const [counted] = yield* sql<{ total: string | number }>`SELECT count(*) AS total FROM engine_record WHERE ${where}`
          return { records: [], total: Number(counted?.total ?? 0) }
        }),

        insert: Effect.fnUntraced(function*(resource, appId, input, options = {}) {
          const now = new Date().toISOString()
          const id = options.id ?? timeOrderedUuid()
          const prefix = options.numberPrefix
          if (prefix === undefined) {
            const stored = JSON.stringify({ ...input, id, createdAt: now, updatedAt: now })
            yield* sql`
              INSERT INTO engine_record (resource, id, app_id, data, created_at, updated_at)
              VALUES (${resource}, ${id}, ${appId}, ${stored}::jsonb, ${now}::timestamptz, ${now}::timestamptz)`
            // The record as stored and as every later read answers it: JSON (a field set to `undefined` is absent).
            return JSON.parse(stored) as StoredRecord
          }
          // The app's next number of this prefix and the record, in one statement: the counter row's lock
          // (ON CONFLICT DO UPDATE) orders concurrent creates, so no two get the same number, and a record that
          // is not stored (a unique violation, a rolled-back transaction) gives its number back.
          const stored = JSON.stringify({ ...input, id, createdAt: now, updatedAt: now })
          const [row] = yield* sql<{ number: string }>`
            WITH counter AS (
              INSERT INTO engine_counter (app_id, prefix, value) VALUES (${appId}, ${prefix}, 1)
              ON CONFLICT (app_id, prefix) DO UPDATE SET value = engine_counter.value + 1
              RETURNING value
            ), numbered AS (
              SELECT ${prefix}::text || '-' || lpad(value::text, greatest(${NUMBER_DIGITS}::int, length(value::text)), '0') AS number FROM counter
            )
            INSERT INTO engine_record (resource, id, app_id, data, created_at, updated_at)
            SELECT ${resource}::text, ${id}::text, ${appId}::text, ${stored}::jsonb || jsonb_build_object('number', number),
              ${now}::timestamptz, ${now}::timestamptz
            FROM numbered
            RETURNING data->>'number' AS number`
          const { createdAt, updatedAt, ...fields } = JSON.parse(stored) as Record<string, unknown>
          return { ...fields, number: row!.number, createdAt, updatedAt } as StoredRecord
        }),

        replace: (resource, appId, id, input) => {
          const now = new Date().toISOString()
          // Whole-record replacement: only the identity (id, number) and createdAt survive.
          return sql<{ data: StoredRecord }>`
            UPDATE engine_record
            SET data = ${JSON.stringify(input)}::jsonb
                  || jsonb_strip_nulls(jsonb_build_object('id', data->'id', 'number', data->'number', 'createdAt', data->'createdAt'))
                  || jsonb_build_object('updatedAt', ${now}::text),
                updated_at = ${now}::timestamptz
            WHERE resource = ${resource} AND id = ${id} AND app_id = ${appId}
            RETURNING data`.pipe(first)
        },

        remove: (resource, appId, id) =>
          sql<{ data: StoredRecord }>`
            DELETE FROM engine_record WHERE resource = ${resource} AND id = ${id} AND app_id = ${appId}
            RETURNING data`.pipe(first),

        lockKey: (key) => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`),

        nextCount: (appId, prefix) =>
          Effect.map(
            sql<{ value: string }>`
              INSERT INTO engine_counter (app_id, prefix, value) VALUES (${appId}, ${prefix}, 1)
              ON CONFLICT (app_id, prefix) DO UPDATE SET value = engine_counter.value + 1
              RETURNING value::text AS value`,
            ([row]) => row!.value
          ),

        lockedUpdatedAt: (resource, appId, id) =>
          Effect.map(
            sql<{ updatedAt: string | null }>`
              SELECT data->>'updatedAt' AS "updatedAt" FROM engine_record
              WHERE resource = ${resource} AND id = ${id} AND app_id = ${appId}
              FOR UPDATE`,
            ([row]) => row?.updatedAt
          ),

        writeReferenceData: (rows, epoch) =>
          Effect.asVoid(sql`
            INSERT INTO engine_record (resource, id, app_id, data, created_at, updated_at)
            SELECT r.resource, r.id, ${GLOBAL_APP}, r.data::jsonb, ${epoch}::timestamptz, ${epoch}::timestamptz
            FROM unnest(${rows.map((r) => r.resource)}::text[], ${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.data)}::text[])
              AS r(resource, id, data)
            ON CONFLICT (resource, id, app_id) DO UPDATE SET data = EXCLUDED.data
            WHERE engine_record.app_id = ${GLOBAL_APP} AND engine_record.data IS DISTINCT FROM EXCLUDED.data`),

        countReferrers: (appId, referrers) => {
          const conditions = referrers.filter(({ keys }) => keys.length > 0).map(({ from, keys, only, path }) => {
            const onlyThese = only === undefined ? [] : [sql`data->>${sql.literal(fieldLiteral(only.field))} = ANY(${only.values}::text[])`]
            return sql.and([sql`resource = ${from}`, ...onlyThese, holds(path, keys)])
          })
          if (conditions.length === 0) return Effect.succeed([])
          return sql<{ resource: string; n: number }>`
            SELECT resource, count(*)::int AS n FROM engine_record
            WHERE app_id = ${appId} AND ${sql.or(conditions)}
            GROUP BY resource`
        },

        lockHolding: (target, appId, targetKey, keys) =>
          sql<{ data: StoredRecord }>`
            SELECT data FROM engine_record
            WHERE resource = ${target} AND app_id IN (${appId}, ${GLOBAL_APP}) AND ${
            targetKey.length === 1 && targetKey[0] === "id" ? sql`id = ANY(${keys}::text[])` : holds(targetKey, keys)
          }
            FOR KEY SHARE`.pipe(Effect.map((rows) => rows.map((row) => row.data))),

        findByConfiguration: (appId, configurationId) =>
          sql<{ data: StoredRecord }>`
            SELECT data FROM engine_record
            WHERE resource = 'catalogueModel' AND app_id IN (${appId}, ${GLOBAL_APP})
              AND data->'configurations' @> ${JSON.stringify([{ id: configurationId }])}::jsonb
            ORDER BY created_at LIMIT 1`.pipe(first),

        findConfigurationHolder: (resource, appId, id, ids) =>
          sql<{ data: StoredRecord }>`
            SELECT data FROM engine_record
            WHERE resource = ${resource} AND app_id IN (${appId}, ${GLOBAL_APP}) AND id <> ${id}
              AND EXISTS (SELECT 1 FROM jsonb_array_elements(data->'configurations') c WHERE c->>'id' = ANY(${ids}::text[]))
            LIMIT 1`.pipe(first),

        listByConfigurationMaterial: (resource, appId, materialId) =>
          sql<{ data: StoredRecord }>`
            SELECT data FROM engine_record
            WHERE resource = ${resource} AND app_id = ${appId}
              AND data->'configurations' @> ${JSON.stringify([{ materialId }])}::jsonb
            ORDER BY created_at, id`.pipe(Effect.map((rows) => rows.map((row) => row.data))),

        // CASE evaluates in order: only a well-formed validUntil is cast.
        lockExpiredQuotes: (now, limit) =>
          sql<{ app_id: string; data: StoredRecord }>`
            SELECT quote.app_id, quote.data FROM engine_record quote
            JOIN engine_record ticket
              ON ticket.resource = ${Ticket.name} AND ticket.app_id = quote.app_id AND ticket.id = quote.data->>'ticketId'
            WHERE quote.resource = ${TicketQuote.name} AND quote.data->>'state' = 'sent'
              AND (CASE WHEN quote.data->>'validUntil' ~ ${ISO_INSTANT}
                THEN (quote.data->>'validUntil')::timestamptz <= ${now.toISOString()}::timestamptz ELSE false END)
            ORDER BY quote.created_at, quote.id
            LIMIT ${limit}
            FOR UPDATE OF quote, ticket SKIP LOCKED`,

        pageQuotesByState: Effect.fnUntraced(function*(appId, { filter, now, states, ticketIds }) {
          // CASE evaluates in order: only a sent quote with a well-formed validUntil is cast.
          const stateAsRead = sql`(CASE
            WHEN data->>'state' <> 'sent' THEN data->>'state'
            WHEN data->>'validUntil' !~ ${ISO_INSTANT} THEN 'sent'
            WHEN (data->>'validUntil')::timestamptz <= ${now.toISOString()}::timestamptz THEN 'expired'
            ELSE 'sent' END)`
          const conditions = [sql`resource = ${TicketQuote.name}`, sql`app_id IN (${appId}, ${GLOBAL_APP})`]
          if (filter.ids !== undefined) conditions.push(sql`id = ANY(${filter.ids}::text[])`)
          if (ticketIds !== undefined) conditions.push(sql`data->>'ticketId' = ANY(${ticketIds}::text[])`)
          conditions.push(sql`${stateAsRead} = ANY(${states}::text[])`)
          for (const { field, from, to } of filter.dates) {
            const column = sql.literal(DATE_COLUMNS[field])
            if (from !== undefined) conditions.push(sql`${column} >= ${from.toISOString()}::timestamptz`)
            if (to !== undefined) conditions.push(sql`${column} <= ${to.toISOString()}::timestamptz`)
          }
          const rows = yield* sql<{ data: StoredRecord; total: string | number }>`
            SELECT data, count(*) OVER () AS total FROM engine_record WHERE ${sql.and(conditions)}
            ORDER BY created_at, id LIMIT ${filter.limit} OFFSET ${filter.offset}`
          if (rows.length > 0 || filter.offset === 0) return { records: rows.map((row) => row.data), total: Number(rows[0]?.total ?? 0) }
          // A page past the end has no row to carry the count.
          const [counted] = yield* sql<{ total: string | number }>`SELECT count(*) AS total FROM engine_record WHERE ${sql.and(conditions)}`
          return { records: [], total: Number(counted?.total ?? 0) }
        })
      })
    })
  )
}
