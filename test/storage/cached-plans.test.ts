/**
 * The statements the service repeats for as long as it runs, on tables that
 * only grow (meter_event, engine_event), keep to their indexes however large
 * the table has grown since the connection first prepared them.
 *
 * A prepared statement settles on a generic plan after five runs and keeps it
 * until the table's statistics change, which on PGlite, and on a PostgreSQL
 * without autovacuum, is never. A generic plan made while the table held a
 * few hundred rows can be a scan of the whole table; each test runs its
 * statement while the table is small, grows the table as days of calls
 * would, and counts the whole-table scans of the statement's next runs.
 * Statements that only a table's statistics can set right again rely on
 * autovacuum, or where none runs (PGlite, a PostgreSQL with it off) on the
 * server's own analysis (TableStatistics.ts).
 */
import { assert, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { StorageLive } from "../../src/adapters/storage/Storage.ts"
import { ANALYZE_INTERVAL, analyzeChangedTables, analyzesItself, TableStatisticsLive } from "../../src/adapters/storage/TableStatistics.ts"
import { ServicesLive } from "../../src/app/AppLayers.ts"
import { EngineOutboundLive } from "../../src/app/AppLayers.ts"
import { relayEvents } from "../../src/engine/events/relay.ts"
import { InstrumentsNoOp } from "../../src/platform/telemetry/Instruments.ts"
import { Meter } from "../../src/services/Meter.ts"
import { SecretStore } from "../../src/services/SecretStore.ts"
import { backends, testConfig } from "../support/backends.ts"

const StorageSuite = (backend: (typeof backends)[number]) =>
  ServicesLive.pipe(
    Layer.provide(EngineOutboundLive),
    Layer.provideMerge(StorageLive("serve")),
    Layer.provideMerge(InstrumentsNoOp),
    Layer.provideMerge(testConfig(backend))
  )

/** More runs than PostgreSQL makes before it settles on a generic plan, on each connection a statement may take. */
const RUNS_WHILE_SMALL = 13
/** Rows added to the table: enough that a scan of all of them costs more than its index. */
const GROWN_BY = 20_000

/** Counters of `table` so far, once every backend has reported them (at most once a second each). */
const tableCounters = (table: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.sleep("1200 millis")
    yield* sql`SELECT pg_stat_force_next_flush()`.unprepared
    const [row] = yield* sql<{ scans: string; fetched: string }>`
      SELECT seq_scan::text AS scans, coalesce(idx_tup_fetch, 0)::text AS fetched FROM pg_stat_user_tables WHERE relname = ${table}`.unprepared
    return { scans: Number(row!.scans), fetched: Number(row!.fetched) }
  })

/**
 * Whole-table scans of `table` so far. A backend reports its counters when
 * it goes idle, at most once a second; the test's own reads are unprepared
 * (planned for the table as it is), so none of them scans it either.
 */
const tableScans = (table: string) => Effect.map(tableCounters(table), (counters) => counters.scans)

for (const backend of backends) {
  layer(StorageSuite(backend), { timeout: 60_000, excludeTestServices: true })(`Cached plans on growing tables (${backend})`, (it) => {
    it.effect("the meter writes each call's outcome by its key, not by a scan of meter_event", () =>
      Effect.gen(function*() {
        const secrets = yield* SecretStore
        const meter = yield* Meter
        const sql = yield* SqlClient.SqlClient
        const created = yield* secrets.create({ appId: "plans", ipAddresses: ["0.0.0.0/0"] })
        const caller = yield* secrets.authenticate(created.value, "127.0.0.1")
        const call = Effect.gen(function*() {
          const requestId = randomUUID()
          const occurredAt = new Date()
          yield* Effect.flatten(meter.submit({
            requestId,
            appId: caller.appId,
            secretId: caller.secretId,
            secretHash: caller.secretHash,
            grantsVersion: caller.grants.version,
            mode: caller.grants.mode,
            clientAddress: "127.0.0.1",
            operation: "customer.get",
            method: "GET",
            route: "/v1/customer/:id",
            occurredAt
          }))
          meter.complete(requestId, occurredAt, 200, 1)
          // Until the background write has stored the outcome.
          yield* sql<{ status: number | null }>`SELECT status FROM meter_event WHERE request_id = ${requestId}`.unprepared.pipe(
            Effect.flatMap((rows) => rows[0]?.status == null ? Effect.fail("outcome not written yet") : Effect.void),
            Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 200 })
          )
        })

        yield* Effect.repeat(call, { times: RUNS_WHILE_SMALL })
        yield* sql`
          INSERT INTO meter_event (request_id, app_id, secret_id, operation, method, route, occurred_at, status, duration_ms)
          SELECT 'grown-' || i, 'plans', ${created.id}, 'customer.get', 'GET', '/v1/customer/:id', now() - interval '1 day', 200, 1
          FROM generate_series(1, ${GROWN_BY}) i`.unprepared
        yield* call
        const before = yield* tableScans("meter_event")
        yield* call
        yield* call
        assert.strictEqual(yield* tableScans("meter_event"), before, "an outcome write scanned the whole of meter_event")
      }), 60_000)

    it.effect("the webhook relay looks for missed events in the unrelayed index, not by a scan of engine_event", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const look = Effect.asVoid(relayEvents)

        yield* Effect.repeat(look, { times: RUNS_WHILE_SMALL })
        // Events already relayed, as nearly every event is.
        yield* sql`
          INSERT INTO engine_event (id, app_id, type, created_at, data, relayed)
          SELECT 'grown-' || i, 'plans', 'part.created', now() - interval '1 day', '{}', true
          FROM generate_series(1, ${GROWN_BY}) i`.unprepared
        yield* look
        const before = yield* tableScans("engine_event")
        yield* look
        yield* look
        assert.strictEqual(yield* tableScans("engine_event"), before, "the relay's look scanned the whole of engine_event")
      }), 60_000)

    it.effect("once analyzed, a record found by id among many is read alone, not with every record of its resource", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // What a write's reference check sends (integrity.ts, lockReferenced): records of a resource by ids.
        const lookUp = (ids: ReadonlyArray<string>) =>
          sql`SELECT data FROM engine_record WHERE resource = ${"plansTicket"} AND app_id IN (${"plans"}, ${"global"}) AND id = ANY(${ids}::text[])`
        yield* sql`
          INSERT INTO engine_record (resource, id, app_id, data, created_at, updated_at)
          SELECT 'plansTicket', 'small-' || i, 'plans', '{}', now(), now() FROM generate_series(1, 5) i`.unprepared
        yield* Effect.repeat(lookUp(["small-1"]), { times: RUNS_WHILE_SMALL })
        yield* sql`
          INSERT INTO engine_record (resource, id, app_id, data, created_at, updated_at)
          SELECT 'plansTicket', 'grown-' || i, 'plans', '{}', now(), now() FROM generate_series(1, ${GROWN_BY}) i`.unprepared
        yield* tableCounters("engine_record")
        assert.include(yield* analyzeChangedTables, "public.engine_record")

        yield* Effect.repeat(lookUp(["small-1"]), { times: RUNS_WHILE_SMALL })
        const before = yield* tableCounters("engine_record")
        yield* lookUp(["small-2"])
        const after = yield* tableCounters("engine_record")
        assert.strictEqual(after.scans, before.scans, "the look-up scanned the whole of engine_record")
        assert.isBelow(after.fetched - before.fetched, 10, "the look-up fetched the resource's other records")
      }), 60_000)

    it.effect(
      "where no autovacuum runs, the server analyzes the tables changed past autovacuum's threshold once a minute",
      () =>
        Effect.scoped(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const embedded = backend === "pglite"
          const analyses = sql<{ count: string }>`
          SELECT analyze_count::text AS count FROM pg_stat_user_tables WHERE relname = 'engine_record'`.unprepared.pipe(
            Effect.map(([row]) => Number(row!.count))
          )
          yield* sql`
          INSERT INTO engine_record (resource, id, app_id, data, created_at, updated_at)
          SELECT 'statsTicket', 'changed-' || i, 'plans', '{}', now(), now() FROM generate_series(1, ${GROWN_BY}) i`.unprepared
          yield* tableCounters("engine_record")
          const before = yield* analyses

          const clock = yield* TestClock.make()
          yield* Layer.build(TableStatisticsLive(embedded)).pipe(Effect.provideService(Clock.Clock, clock))
          yield* clock.adjust(ANALYZE_INTERVAL)
          if (yield* analyzesItself(embedded)) {
            // The analysis reaches the statistics views once its backend reports them.
            yield* analyses.pipe(
              Effect.flatMap((count) => count > before ? Effect.void : Effect.fail("not analyzed yet")),
              Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 75 })
            )
          } else {
            yield* tableCounters("engine_record")
            assert.strictEqual(yield* analyses, before, "the server analyzed a table autovacuum looks after")
          }
        })),
      60_000
    )
  })
}
