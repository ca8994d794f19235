/**
 * Meter over SQL, with group commit.
 *
 * Calls add their event and wait for its commit. Up to FLUSH_WORKERS flushes
 * run at once; a call that finds one free starts it there and then, and a
 * flush takes every event pending so far and writes them in one INSERT,
 * which keeps only the events whose secret is still current (same id and
 * hash). A call is answered only once its row is committed, so a response a
 * client received is in the table even if the process is then killed.
 *
 * The flush takes no row locks: `usedAt` is the latest committed meter row of
 * the secret (see SecretStoreSql; retention keeps it when it removes the
 * rows), so concurrent flushes, on this instance or another, never queue
 * behind one hot secret row. The outcomes (status, duration) are added in
 * batches in the background; the scope's finalizer drains both.
 */
import { PgTypes } from "@effect/sql-pg"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Schedule } from "effect"
import type { Statement } from "effect/sql"
import { ServiceUnavailable } from "../../domain/Errors.ts"
import type { RequestLogEntry } from "../../domain/RequestLog.ts"
import { DEFAULT_PAGE_SIZE, rangeEnd, rangeStart } from "../../domain/Resource.ts"
import { traced } from "../../domain/Span.ts"
import type { MeterEvent } from "../../domain/Usage.ts"
import { trackForShutdown } from "../../platform/ShutdownReport.ts"
import { Instruments } from "../../platform/telemetry/Instruments.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { Meter, type UsageFilter } from "../../services/Meter.ts"
import { AuthenticationFailed } from "../../services/SecretStore.ts"
import { MeterSqlClient } from "../storage/Storage.ts"
import { storageFailure } from "../storage/StorageErrors.ts"

interface Pending {
  readonly event: MeterEvent
  readonly done: Deferred.Deferred<void, AuthenticationFailed | ServiceUnavailable>
}

interface Outcome {
  readonly requestId: string
  readonly occurredAt: Date
  readonly status: number
  readonly durationMs: number
  /** The `type` of an error answer; empty for none (a text array holds no mixed nulls). */
  readonly errorType: string
}

/**
 * The events of a flush whose secret is still current (same id, hash and app,
 * and the version of its grants the call was decided with), inserted; answers
 * the request ids written. One event: the common case when calls do not
 * overlap, and cheaper to plan and run than the batch form.
 */
const INSERT_ONE = `
  INSERT INTO meter_event (request_id, app_id, secret_id, operation, method, route, occurred_at, mode, client_address)
  SELECT $1, $2, $3, $5, $6, $7, $8::timestamptz, $10, $11
  FROM incoming_secret s WHERE s.id = $3 AND s.secret_hash = $4 AND s.app_id = $2 AND s.grants_version = $9
  RETURNING request_id`
const INSERT_BATCH = `
  WITH batch AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                         $8::timestamptz[], $9::int[], $10::text[], $11::text[])
      AS b(request_id, app_id, secret_id, secret_hash, operation, method, route, occurred_at, grants_version, mode, client_address)
  ),
  current AS (
    SELECT b.* FROM batch b
    JOIN incoming_secret s ON s.id = b.secret_id AND s.secret_hash = b.secret_hash AND s.app_id = b.app_id
                          AND s.grants_version = b.grants_version
  )
  INSERT INTO meter_event (request_id, app_id, secret_id, operation, method, route, occurred_at, mode, client_address)
  SELECT request_id, app_id, secret_id, operation, method, route, occurred_at, mode, client_address FROM current
  RETURNING request_id`

/**
 * Flushes in flight at once; calls batch up only while all are busy. Two
 * rather than more: a call still finds a flush slot free unless two commits
 * are under way, and under load the calls gather in fewer, larger batches,
 * each one commit, one statement written and one answer read (bench/README.md,
 * "Two meter flushes in flight").
 */
const FLUSH_WORKERS = 2

/** Outcomes kept while storage is unreachable; beyond it the oldest are dropped (the calls stay metered). */
const MAX_PENDING_OUTCOMES = 100_000
const OUTCOME_FLUSH_INTERVAL = "100 millis"
/**
 * After a failed write the next waits the interval, then twice as long each
 * time, at most 5 s: while storage is down, the backlog (up to
 * MAX_PENDING_OUTCOMES) is encoded once every few seconds, not ten times a second.
 */
/** A meter row as the request log reads it. */
interface RequestLogRow {
  readonly request_id: string
  readonly occurred_at: Date
  readonly method: string
  readonly route: string
  readonly operation: string
  readonly status: number | null
  readonly error_type: string | null
  readonly duration_ms: number | null
  readonly secret_id: string
  readonly client_address: string | null
  readonly total: string | number
}

const toLogEntry = (row: RequestLogRow): RequestLogEntry => ({
  requestId: row.request_id,
  createdAt: new Date(row.occurred_at).toISOString(),
  method: row.method,
  route: row.route,
  operation: row.operation,
  status: row.status,
  errorType: row.error_type,
  durationMs: row.duration_ms === null ? null : Math.round(row.duration_ms * 1000) / 1000,
  secretId: row.secret_id,
  clientAddress: row.client_address
})

const OUTCOME_RETRY = Schedule.min([Schedule.exponential(OUTCOME_FLUSH_INTERVAL), Schedule.spaced("5 seconds")])

export const MeterSql = Layer.effect(
  Meter,
  Effect.gen(function*() {
    const sql = yield* MeterSqlClient
    const config = yield* AppConfig
    const instruments = yield* Instruments
    /** Events waiting for a flush, and the flushes running (at most FLUSH_WORKERS). */
    const pending: Array<Pending> = []
    let flushing = 0
    let closed = false
    let outcomes: Array<Outcome> = []
    /** Meter rows written by this process (a graceful stop reports how many it drained). */
    let rowsWritten = 0
    yield* trackForShutdown("meterRowsWritten", () => rowsWritten)

    // Both statements are constant strings (one per batch shape), so neither the SQL compiler nor the
    // prepared statement cache builds or hashes the text anew on every flush.
    const insertBatch = (events: ReadonlyArray<MeterEvent>) => {
      if (events.length === 1) {
        const e = events[0]!
        return sql.unsafe<{ request_id: string }>(INSERT_ONE, [
          e.requestId,
          e.appId,
          e.secretId,
          e.secretHash,
          e.operation,
          e.method,
          e.route,
          e.occurredAt.toISOString(),
          e.grantsVersion,
          e.mode,
          e.clientAddress
        ])
      }
      const column = (f: (e: MeterEvent) => string) => events.map(f)
      return sql.unsafe<{ request_id: string }>(INSERT_BATCH, [
        column((e) => e.requestId),
        column((e) => e.appId),
        column((e) => e.secretId),
        column((e) => e.secretHash),
        column((e) => e.operation),
        column((e) => e.method),
        column((e) => e.route),
        column((e) => e.occurredAt.toISOString()),
        events.map((e) => e.grantsVersion),
        column((e) => e.mode),
        column((e) => e.clientAddress)
      ])
    }

    /** The flush's size and latency, when an exporter wants them (`meter.flush.size`, `meter.flush.duration`). */
    const measured = <A, E, R>(size: number, effect: Effect.Effect<A, E, R>) =>
      !instruments.enabled ? effect : Effect.suspend(() => {
        const startedAt = performance.now()
        return Effect.ensuring(effect, Effect.sync(() => instruments.meterFlush(size, (performance.now() - startedAt) / 1000)))
      })

    const flush = (batch: ReadonlyArray<Pending>) =>
      insertBatch(batch.map((p) => p.event)).pipe(
        Effect.catchTag("SqlError", storageFailure),
        Effect.exit,
        (insert) => measured(batch.length, insert),
        Effect.flatMap((exit) =>
          Effect.sync(() => {
            if (Exit.isSuccess(exit)) {
              rowsWritten += exit.value.length
              const written = new Set(exit.value.map((row) => row.request_id))
              for (const { done, event } of batch) {
                // Not written: the secret was revoked, regenerated or had its grants changed since this instance
                // last looked; the guard looks it up again.
                Deferred.doneUnsafe(
                  done,
                  written.has(event.requestId) ? Exit.void : Exit.fail(AuthenticationFailed.because("revoked"))
                )
              }
            } else {
              const failure = Cause.hasFails(exit.cause) ? ServiceUnavailable.storage() : undefined
              for (const { done } of batch) {
                Deferred.doneUnsafe(done, failure ? Exit.fail(failure) : Exit.failCause(exit.cause as Cause.Cause<never>))
              }
            }
          })
        ),
        traced("Meter.flush", { attributes: { "meter.batch_size": batch.length } })
      )

    /** Everything pending, or, when nothing is, undefined and this flusher's slot given back (in one step). */
    const takeOrLeave = Effect.sync(() => {
      if (pending.length > 0) return pending.splice(0)
      flushing--
      return undefined
    })

    /**
     * A flusher writes what is pending, batch after batch, until nothing is.
     * It starts at once, in the call that found a flush slot free, so the
     * INSERT leaves in the same tick as the call (before a read's SELECT,
     * which then runs beside it); it runs in the layer's context, not the
     * call's, so a call that goes away does not take the flush of the others
     * with it.
     */
    const flushPending = Effect.gen(function*() {
      if (config.meterFlushWindowMs > 0) yield* Effect.sleep(config.meterFlushWindowMs)
      while (true) {
        const batch = yield* takeOrLeave
        if (batch === undefined) return
        yield* flush(batch)
      }
    })

    const startFlusher = Effect.runForkWith(yield* Effect.context<never>())
    const flushers = new Set<Fiber.Fiber<void>>()
    const flushIfIdle = () => {
      if (flushing >= FLUSH_WORKERS) return
      flushing++
      const fiber = startFlusher(flushPending)
      if (fiber.pollUnsafe() === undefined) {
        flushers.add(fiber)
        fiber.addObserver(() => flushers.delete(fiber))
      }
    }

    /** Writes the outcomes gathered so far; storage's refusal keeps them for the next write. */
    const writeOutcomes = Effect.suspend(() => {
      if (outcomes.length === 0) return Effect.void
      const batch = outcomes
      outcomes = []
      // Unprepared, so planned for each batch against the table as it is: a prepared statement's
      // generic plan, made while meter_event held a few hundred rows, is a hash join over a scan of
      // the whole table, kept by the connection however large the table grows (bench/README.md,
      // "Plans kept from when a table was small").
      // Each element typed: the driver infers an untyped array's type from its elements, and a
      // duration that happens to be a whole number (int4 beside float8) would fail the whole batch.
      // The rows are found by their key, request id and time; the batch's span of times lets PostgreSQL look in the
      // months (partitions) it covers only. A late outcome replaces an `unknown` the sweep settled meanwhile.
      // The error types go along only when the batch has one (a batch of successes, the usual one, sends none).
      let earliest = Infinity
      let latest = -Infinity
      for (const { occurredAt } of batch) {
        earliest = Math.min(earliest, occurredAt.getTime())
        latest = Math.max(latest, occurredAt.getTime())
      }
      const typed = batch.some((o) => o.errorType !== "")
      const errorTypes = typed ? sql`, ${batch.map((o) => PgTypes.text(o.errorType))}::text[]` : sql``
      return sql`
        UPDATE meter_event m SET status = o.status, duration_ms = o.duration_ms, outcome_unknown = false
          ${typed ? sql`, error_type = NULLIF(o.error_type, '')` : sql``}
        FROM unnest(${batch.map((o) => PgTypes.text(o.requestId))}::text[], ${batch.map((o) => PgTypes.text(o.occurredAt.toISOString()))}::timestamptz[], ${
        batch.map((o) => PgTypes.int4(o.status))
      }::int[],
                    ${batch.map((o) => PgTypes.float8(o.durationMs))}::float8[]${errorTypes})
          AS o(request_id, occurred_at, status, duration_ms${typed ? sql`, error_type` : sql``})
        WHERE m.request_id = o.request_id AND m.occurred_at = o.occurred_at
          AND m.occurred_at >= ${new Date(earliest).toISOString()}::timestamptz
          AND m.occurred_at <= ${new Date(latest).toISOString()}::timestamptz`.unprepared.pipe(
        Effect.tapError((error) =>
          Effect.sync(() => {
            outcomes = batch.concat(outcomes).slice(-MAX_PENDING_OUTCOMES)
          }).pipe(Effect.andThen(Effect.logWarning("meter outcomes not written yet", error.reason._tag)))
        ),
        traced("Meter.writeOutcomes", { attributes: { "meter.batch_size": batch.length } })
      )
    }).pipe(
      // The batch has left the buffer: an interrupt at shutdown must wait for it, not drop it.
      Effect.uninterruptible
    )

    const outcomeLoop = yield* Effect.forkScoped(
      writeOutcomes.pipe(Effect.retry(OUTCOME_RETRY), Effect.repeat(Schedule.spaced(OUTCOME_FLUSH_INTERVAL)))
    )
    // Shutdown: stop taking calls, write what is queued, then the outcomes.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        closed = true
        yield* Fiber.awaitAll([...flushers])
        yield* Fiber.interrupt(outcomeLoop)
        // Refused, they are lost with the process (the warning says so); the calls stay metered.
        yield* Effect.ignore(writeOutcomes)
      })
    )

    return Meter.of({
      submit: (event) =>
        Effect.sync(() => {
          // Shutting down: a call that was not recorded is not run.
          if (closed) return Effect.fail(ServiceUnavailable.storage())
          const done = Deferred.makeUnsafe<void, AuthenticationFailed | ServiceUnavailable>()
          pending.push({ event, done })
          flushIfIdle()
          return Deferred.await(done)
        }),
      complete: (requestId, occurredAt, status, durationMs, errorType) => {
        outcomes.push({ requestId, occurredAt, status, durationMs, errorType: errorType ?? "" })
      },
      usage: Effect.fn("Meter.usage")(function*(filter) {
        // The calls still in meter_event, and the days retention rolled up (meter_daily), counted whole when their
        // UTC date is within the range's: a row is in one or the other, never both (MeterUpkeepSql.ts).
        const rows = yield* sql<{ operation: string; calls: number; outcome_unknown: number }>`
          SELECT operation, sum(calls)::int AS calls, sum(outcome_unknown)::int AS outcome_unknown FROM (
            SELECT operation, count(*) AS calls, count(*) FILTER (WHERE outcome_unknown) AS outcome_unknown FROM meter_event
            ${whereAll(usageConditions(filter, sql`occurred_at`))}
            GROUP BY operation
            UNION ALL
            SELECT operation, sum(calls), sum(outcome_unknown) FROM meter_daily
            ${whereAll(usageConditions(filter, sql`day`, "::date"))}
            GROUP BY operation
          ) AS counted
          GROUP BY operation ORDER BY operation`.pipe(Effect.catchTag("SqlError", storageFailure))
        const byOperation = rows.map((row) => ({ operation: row.operation, calls: row.calls, outcomeUnknown: row.outcome_unknown }))
        return {
          total: byOperation.reduce((sum, row) => sum + row.calls, 0),
          outcomeUnknown: byOperation.reduce((sum, row) => sum + row.outcomeUnknown, 0),
          byOperation
        }
      }),
      requestLog: Effect.fn("Meter.requestLog")(function*({ appId, mode, query, reader }) {
        const conditions = [sql`app_id = ${appId}`, sql`mode = ${mode}`, sql`request_id <> ${reader}`]
        if (query.requestId !== undefined) conditions.push(sql`request_id = ANY(${query.requestId}::text[])`)
        if (query.operation !== undefined) conditions.push(sql`operation = ANY(${query.operation}::text[])`)
        if (query.status !== undefined) conditions.push(sql`status = ANY(${query.status.map((status) => PgTypes.int4(Number(status)))}::int[])`)
        if (query.secretId !== undefined) conditions.push(sql`secret_id = ANY(${query.secretId}::text[])`)
        const from = query["createdAt[from]"] ?? query.createdAt
        const to = query["createdAt[to]"] ?? query.createdAt
        if (from !== undefined) conditions.push(sql`occurred_at >= ${rangeStart(from).toISOString()}::timestamptz`)
        if (to !== undefined) conditions.push(sql`occurred_at <= ${rangeEnd(to).toISOString()}::timestamptz`)
        const limit = query.limit ?? DEFAULT_PAGE_SIZE
        const offset = query.offset ?? 0
        // Unprepared, as the outcomes' update: planned against the table as it is now (it only grows).
        const rows = yield* sql<RequestLogRow>`
          SELECT request_id, occurred_at, method, route, operation, status, error_type, duration_ms, secret_id, client_address,
                 count(*) OVER () AS total
          FROM meter_event WHERE ${sql.and(conditions)}
          ORDER BY occurred_at, request_id LIMIT ${limit} OFFSET ${offset}`.unprepared.pipe(Effect.catchTag("SqlError", storageFailure))
        if (rows.length > 0) return { items: rows.map(toLogEntry), total: Number(rows[0]!.total) }
        const counted = yield* sql<{ total: string | number }>`SELECT count(*) AS total FROM meter_event WHERE ${sql.and(conditions)}`
          .unprepared.pipe(Effect.catchTag("SqlError", storageFailure))
        return { items: [], total: Number(counted[0]?.total ?? 0) }
      })
    })

    /** The filter's conditions on `column` (a time, or a day when `cast` is `::date`: the UTC dates of the bounds). */
    function usageConditions(filter: UsageFilter, column: Statement.Fragment, cast: "" | "::date" = "") {
      const bound = (at: Date) => cast === "" ? sql`${at.toISOString()}::timestamptz` : sql`(${at.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date`
      return [
        ...(filter.appId !== undefined ? [sql`app_id = ${filter.appId}`] : []),
        ...(filter.mode !== undefined ? [sql`mode = ${filter.mode}`] : []),
        ...(filter.from !== undefined ? [sql`${column} >= ${bound(filter.from)}`] : []),
        ...(filter.to !== undefined ? [sql`${column} <= ${bound(filter.to)}`] : [])
      ]
    }
    function whereAll(conditions: ReadonlyArray<Statement.Fragment>) {
      return conditions.length > 0 ? sql`WHERE ${sql.and(conditions)}` : sql``
    }
  })
)
