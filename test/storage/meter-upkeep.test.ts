/**
 * The meter's upkeep on each backend (issue 37, items 3 and 5), through the
 * admin API's usage as an operator reads it:
 *
 * - the sweep settles rows left without an outcome past METER_OUTCOME_TIMEOUT
 *   as unknown, counted apart (`outcomeUnknown`); a late outcome replaces the
 *   mark; a second sweep settles nothing more;
 * - retention removes the rows older than METER_RETENTION (whole monthly
 *   partitions on PostgreSQL, batched deletes on PGlite) and keeps their
 *   totals per day: usage answers the same totals before and after, for every
 *   range and app asked; a second run changes nothing; a secret's last use
 *   stays when its rows go.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { MeterUpkeepSql, RETENTION_BATCH } from "../../src/adapters/sql/MeterUpkeepSql.ts"
import { ensurePartition, meterIsPartitioned, monthPartition, monthPartitions, monthStart } from "../../src/adapters/storage/MeterPartitions.ts"
import { Meter } from "../../src/services/Meter.ts"
import { MeterUpkeep } from "../../src/services/MeterUpkeep.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const DAY = 24 * 60 * 60 * 1000
const admin = { "x-admin-token": ADMIN_TOKEN }

interface Usage {
  readonly total: number
  readonly outcomeUnknown: number
  readonly byOperation: ReadonlyArray<{ readonly operation: string; readonly calls: number; readonly outcomeUnknown: number }>
}

for (const backend of backends) {
  const app = TestApp(backend, { meterRetention: Duration.days(400), meterOutcomeTimeout: Duration.seconds(60) })
  layer(MeterUpkeepSql.pipe(Layer.provideMerge(app)), {
    timeout: 120_000,
    excludeTestServices: true
  })(`Meter upkeep (${backend})`, (it) => {
    const usage = (query: string) =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const reply = yield* client.call("GET", `/api/v1/usage?${query}`, { headers: admin })
        assert.strictEqual(reply.status, 200, reply.text)
        return reply.json() as Usage
      })

    it.effect("the sweep settles rows left without an outcome as unknown, counted apart; a late outcome replaces the mark", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const upkeep = yield* MeterUpkeep
        const meter = yield* Meter
        const appId = `sweep-${randomUUID().slice(0, 8)}`
        const now = Date.now()
        const rows = [
          { id: randomUUID(), ago: 120_000, status: null },
          { id: randomUUID(), ago: 90_000, status: null },
          { id: randomUUID(), ago: 120_000, status: 200 },
          // Not due yet: its outcome may still come.
          { id: randomUUID(), ago: 10_000, status: null }
        ]
        for (const row of rows) {
          yield* sql`
            INSERT INTO meter_event (request_id, app_id, secret_id, operation, method, route, occurred_at, status)
            VALUES (${row.id}, ${appId}, 's', 'customer.create', 'POST', '/v1/customer', ${new Date(now - row.ago).toISOString()}::timestamptz,
                    ${row.status})`
        }
        // Other instances' sweeps may run meanwhile: whoever settles them, the rows end up settled.
        yield* upkeep.sweep
        const settled = yield* sql<{ request_id: string }>`SELECT request_id FROM meter_event WHERE app_id = ${appId} AND outcome_unknown`
        assert.sameMembers(settled.map((row) => row.request_id), [rows[0]!.id, rows[1]!.id])
        assert.strictEqual(yield* upkeep.sweep, 0)

        const counted = yield* usage(`appId=${appId}`)
        assert.deepStrictEqual(counted, {
          total: 4,
          outcomeUnknown: 2,
          byOperation: [{ operation: "customer.create", calls: 4, outcomeUnknown: 2 }]
        })

        // An instance that was frozen, not dead, writes its outcome after all: the call is no longer unknown.
        meter.complete(rows[0]!.id, new Date(now - rows[0]!.ago), 201, 3)
        yield* Effect.sleep("300 millis")
        const [late] = yield* sql<{ status: number; outcome_unknown: boolean }>`
          SELECT status, outcome_unknown FROM meter_event WHERE request_id = ${rows[0]!.id}`
        assert.deepStrictEqual({ ...late }, { status: 201, outcome_unknown: false })
        assert.strictEqual((yield* usage(`appId=${appId}`)).outcomeUnknown, 1)
      }))

    it.effect("retention removes what is older than METER_RETENTION and keeps its totals per day: usage is the same before and after", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const upkeep = yield* MeterUpkeep
        const apps = [`kept-${randomUUID().slice(0, 8)}`, `other-${randomUUID().slice(0, 8)}`] as const
        const now = new Date()
        const partitioned = yield* meterIsPartitioned
        assert.strictEqual(partitioned, backend === "postgres")
        // A year and a half of months, as a long-running service has them.
        if (partitioned) {
          for (let month = -18; month <= 0; month++) yield* ensurePartition(monthPartition(monthStart(now, month)), 1n)
        }
        // Calls every few days for 540 days, more than a batch of them past the retention, some failed, some unknown.
        yield* sql`
          INSERT INTO meter_event (request_id, app_id, secret_id, operation, method, route, occurred_at, status, outcome_unknown)
          SELECT gen_random_uuid()::text, (ARRAY[${apps[0]}, ${apps[1]}])[1 + i % 2], 's',
                 (ARRAY['customer.get', 'customer.create', 'ticket.quote'])[1 + i % 3], 'GET', '/v1/x',
                 ${now.toISOString()}::timestamptz - make_interval(secs => (i * 3889) % (540 * 86400)),
                 CASE WHEN i % 7 = 0 THEN NULL WHEN i % 5 = 0 THEN 422 ELSE 200 END,
                 i % 7 = 0
          FROM generate_series(1, ${RETENTION_BATCH * 7}) AS i`
        const day = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY).toISOString().slice(0, 10)
        const ranges = [
          "",
          `appId=${apps[0]}`,
          `appId=${apps[1]}&from=${day(520)}&to=${day(420)}`,
          `from=${day(460)}&to=${day(300)}`,
          `appId=${apps[0]}&from=${day(100)}`,
          `to=${day(401)}`
        ]
        // A secret last used 450 days ago, past the retention: its only calls are removed, its last use stays.
        const client = yield* TestClient
        const idle = yield* client.createSecret(apps[0])
        const lastUse = new Date(now.getTime() - 450 * DAY)
        yield* sql`
          INSERT INTO meter_event (request_id, app_id, secret_id, operation, method, route, occurred_at, status)
          SELECT gen_random_uuid()::text, ${apps[0]}, ${idle.id}, 'customer.get', 'GET', '/v1/customer/:id',
                 ${lastUse.toISOString()}::timestamptz - make_interval(days => i), 200
          FROM generate_series(0, 2) AS i`
        const usedAt = Effect.map(
          client.call("GET", `/api/v1/secret?appId=${apps[0]}`, { headers: admin }),
          (reply) => (reply.json() as ReadonlyArray<{ readonly id: string; readonly usedAt: string | null }>).find((s) => s.id === idle.id)?.usedAt
        )
        assert.strictEqual(yield* usedAt, lastUse.toISOString())
        const before = yield* Effect.forEach(ranges, usage)
        const oldRows = (before: Date) =>
          sql<{ n: number }>`
            SELECT count(*)::int AS n FROM meter_event WHERE occurred_at < ${before.toISOString()}::timestamptz
              AND app_id IN (${apps[0]}, ${apps[1]})`.pipe(Effect.map((rows) => rows[0]!.n))
        assert.isAbove(yield* oldRows(new Date(now.getTime() - 401 * DAY)), RETENTION_BATCH)

        const run = yield* upkeep.retain(now)
        assert.isTrue(run.ran)
        assert.strictEqual(run.cutoff.getTime() % DAY, 0, "the cutoff is the start of a UTC day")
        assert.isAbove(run.rowsRemoved, RETENTION_BATCH)
        if (partitioned) {
          // Every month wholly past the cutoff is gone; the cutoff's own month is kept whole.
          assert.isNotEmpty(run.partitionsDropped)
          const left = yield* monthPartitions
          assert.isTrue(left.every((partition) => partition.to > run.cutoff), left.map((p) => p.name).join(", "))
          assert.isTrue(left.some((partition) => partition.from <= run.cutoff))
          assert.isTrue(left.some((partition) => partition.from.getTime() === monthStart(now, 2).getTime()), "two months ahead made")
        } else {
          assert.strictEqual(yield* oldRows(run.cutoff), 0)
        }
        const [{ oldest } = { oldest: null }] = yield* sql<{ oldest: string | null }>`
          SELECT min(occurred_at)::text AS oldest FROM meter_event WHERE app_id IN (${apps[0]}, ${apps[1]})`
        assert.isAtLeast(Date.parse(oldest!), partitioned ? monthStart(run.cutoff).getTime() : run.cutoff.getTime())

        const after = yield* Effect.forEach(ranges, usage)
        assert.deepStrictEqual(after, before)
        const [{ idleRows } = { idleRows: -1 }] = yield* sql<{ idleRows: number }>`
          SELECT count(*)::int AS "idleRows" FROM meter_event WHERE secret_id = ${idle.id}`
        assert.strictEqual(idleRows, 0)
        assert.strictEqual(yield* usedAt, lastUse.toISOString(), "its last use outlives its meter rows")
        assert.isAbove(before[3]!.outcomeUnknown, 0)

        // Nothing more to do: the same totals, nothing removed.
        const again = yield* upkeep.retain(now)
        assert.strictEqual(again.rowsRemoved, 0)
        assert.deepStrictEqual(yield* Effect.forEach(ranges, usage), before)
      }))
  })
}
