/**
 * The storage layers on each backend (PGlite and PostgreSQL): migrations,
 * SecretStore, Meter's group commit and its drain, and the isolation of
 * transactions on the embedded database.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { MeterSql } from "../../src/adapters/sql/MeterSql.ts"
import { migrations } from "../../src/adapters/storage/migrations.ts"
import { StorageLive } from "../../src/adapters/storage/Storage.ts"
import { ServicesLive } from "../../src/app/AppLayers.ts"
import { EngineOutboundLive } from "../../src/app/AppLayers.ts"
import type { ServiceUnavailable } from "../../src/domain/Errors.ts"
import type { Caller } from "../../src/domain/Secret.ts"
import type { MeterEvent } from "../../src/domain/Usage.ts"
import { InstrumentsNoOp } from "../../src/platform/telemetry/Instruments.ts"
import { Meter } from "../../src/services/Meter.ts"
import { AuthenticationFailed, SecretStore } from "../../src/services/SecretStore.ts"
import { backends, testConfig } from "../support/backends.ts"

const StorageSuite = (backend: (typeof backends)[number]) =>
  ServicesLive.pipe(
    Layer.provide(EngineOutboundLive),
    Layer.provideMerge(StorageLive("serve")),
    Layer.provideMerge(InstrumentsNoOp),
    Layer.provideMerge(testConfig(backend))
  )

const event = (caller: Caller, operation = "customer.get"): MeterEvent => ({
  requestId: randomUUID(),
  appId: caller.appId,
  secretId: caller.secretId,
  secretHash: caller.secretHash,
  grantsVersion: caller.grants.version,
  mode: caller.grants.mode,
  clientAddress: "127.0.0.1",
  operation,
  method: "GET",
  route: "/v1/customer/:id",
  occurredAt: new Date()
})

const failureCause = (error: AuthenticationFailed | ServiceUnavailable) => error instanceof AuthenticationFailed ? error.cause : "storage"

for (const backend of backends) {
  layer(StorageSuite(backend), { timeout: 60_000, excludeTestServices: true })(`Storage (${backend})`, (it) => {
    it.effect("applies each migration once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const applied = yield* sql<{ migration_id: number }>`SELECT migration_id FROM schema_migrations ORDER BY migration_id`
        assert.deepStrictEqual(
          applied.map((row) => row.migration_id),
          Object.keys(migrations).map((key) => Number(key.split("_")[0]))
        )
      }))

    it.effect("stores a secret only as a hash and checks it", () =>
      Effect.gen(function*() {
        const secrets = yield* SecretStore
        const sql = yield* SqlClient.SqlClient
        const created = yield* secrets.create({ appId: "store", ipAddresses: ["10.0.0.0/8", "2001:db8::1"] })
        assert.match(created.value, /^[0-9a-f]{24}\.[A-Za-z0-9_-]{43}$/)
        assert.isTrue(created.value.startsWith(`${created.id}.`))
        assert.deepStrictEqual(created.ipAddresses, ["10.0.0.0/8", "2001:db8::1/128"])
        const rows = yield* sql<Record<string, unknown>>`SELECT * FROM incoming_secret WHERE id = ${created.id}`
        const random = created.value.split(".")[1]!
        assert.notInclude(JSON.stringify(rows), random, "the random part is nowhere in storage")

        const caller = yield* secrets.authenticate(created.value, "10.9.8.7")
        assert.deepStrictEqual({ appId: caller.appId, secretId: caller.secretId }, { appId: "store", secretId: created.id })
        const cause = (presented: string, address: string) => secrets.authenticate(presented, address).pipe(Effect.flip, Effect.map(failureCause))
        assert.strictEqual(yield* cause(created.value, "11.0.0.1"), "ip-blocked")
        assert.strictEqual(yield* cause(`${created.id}.${"x".repeat(43)}`, "10.0.0.1"), "wrong-secret")
        assert.strictEqual(yield* cause(`${"a".repeat(24)}.${random}`, "10.0.0.1"), "unknown-secret")
        assert.strictEqual(yield* cause("garbage", "10.0.0.1"), "malformed")

        const regenerated = yield* secrets.regenerate(created.id)
        assert.strictEqual(yield* cause(created.value, "10.0.0.1"), "wrong-secret")
        assert.strictEqual((yield* secrets.authenticate(regenerated.value, "10.0.0.1")).secretId, created.id)
        yield* secrets.remove(created.id)
        assert.strictEqual(yield* cause(regenerated.value, "10.0.0.1"), "unknown-secret")
        assert.deepStrictEqual(yield* secrets.list("store"), [])
      }))

    it.effect("group-commits concurrent calls, moves usedAt forward and refuses a changed secret", () =>
      Effect.gen(function*() {
        const secrets = yield* SecretStore
        const meter = yield* Meter
        const sql = yield* SqlClient.SqlClient
        const created = yield* secrets.create({ appId: "group", ipAddresses: ["0.0.0.0/0"] })
        const caller = yield* secrets.authenticate(created.value, "127.0.0.1")
        const events = Array.from({ length: 60 }, () => event(caller))
        yield* Effect.forEach(events, (e) => Effect.flatten(meter.submit(e)), { concurrency: "unbounded" })

        const rows = yield* sql<{ request_id: string; tx: string }>`
          SELECT request_id, xmin::text AS tx FROM meter_event WHERE app_id = 'group'`
        assert.deepStrictEqual(rows.map((r) => r.request_id).sort(), events.map((e) => e.requestId).sort())
        const transactions = new Set(rows.map((r) => r.tx)).size
        assert.isBelow(transactions, events.length / 4, `60 calls took ${transactions} commits`)

        const [listed] = yield* secrets.list("group")
        const latest = Math.max(...events.map((e) => e.occurredAt.getTime()))
        assert.strictEqual(Date.parse(listed!.usedAt!), latest, "usedAt is the latest committed call")

        yield* secrets.regenerate(created.id)
        const stale = event(caller)
        const refused = yield* Effect.flip(Effect.flatten(meter.submit(stale)))
        assert.strictEqual(failureCause(refused), "revoked")
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM meter_event WHERE request_id = ${stale.requestId}`
        assert.strictEqual(count!.n, 0)
      }))

    it.effect("writes the outcome of each call, and drains it when the meter shuts down", () =>
      Effect.gen(function*() {
        const secrets = yield* SecretStore
        const sql = yield* SqlClient.SqlClient
        const created = yield* secrets.create({ appId: "drain", ipAddresses: ["0.0.0.0/0"] })
        const caller = yield* secrets.authenticate(created.value, "127.0.0.1")
        // A second Meter, shut down right after the call completes.
        const recorded = event(caller)
        yield* Effect.gen(function*() {
          const meter = yield* Meter
          yield* Effect.flatten(meter.submit(recorded))
          meter.complete(recorded.requestId, recorded.occurredAt, 201, 12.5)
        }).pipe(Effect.provide(Layer.fresh(MeterSql)))
        const [row] = yield* sql<{ status: number; duration_ms: number }>`
          SELECT status, duration_ms FROM meter_event WHERE request_id = ${recorded.requestId}`
        assert.deepStrictEqual({ ...row }, { status: 201, duration_ms: 12.5 })
      }))

    it.effect("writes outcomes whose durations mix whole and fractional milliseconds in one batch", () =>
      Effect.gen(function*() {
        const secrets = yield* SecretStore
        const sql = yield* SqlClient.SqlClient
        const created = yield* secrets.create({ appId: "mixed", ipAddresses: ["0.0.0.0/0"] })
        const caller = yield* secrets.authenticate(created.value, "127.0.0.1")
        const calls = [event(caller), event(caller), event(caller)]
        const durations = [3, 2.5, 0]
        yield* Effect.gen(function*() {
          const meter = yield* Meter
          yield* Effect.forEach(calls, (call) => Effect.flatten(meter.submit(call)), { concurrency: "unbounded" })
          // Completed in one turn: one batch, in which a whole number once made the driver refuse the rest.
          calls.forEach((call, index) => meter.complete(call.requestId, call.occurredAt, 200 + index, durations[index]!))
        }).pipe(Effect.provide(Layer.fresh(MeterSql)))
        const rows = yield* sql<{ request_id: string; status: number; duration_ms: number }>`
          SELECT request_id, status, duration_ms FROM meter_event WHERE app_id = 'mixed'`
        const byId = new Map(rows.map((row) => [row.request_id, { status: row.status, durationMs: row.duration_ms }]))
        assert.deepStrictEqual(calls.map((call) => byId.get(call.requestId)), [
          { status: 200, durationMs: 3 },
          { status: 201, durationMs: 2.5 },
          { status: 202, durationMs: 0 }
        ])
      }))

    it.effect("retries outcomes storage refuses less and less often, and writes them once it takes them again", () =>
      Effect.gen(function*() {
        const secrets = yield* SecretStore
        const sql = yield* SqlClient.SqlClient
        const created = yield* secrets.create({ appId: "refused-outcomes", ipAddresses: ["0.0.0.0/0"] })
        const caller = yield* secrets.authenticate(created.value, "127.0.0.1")
        const call = event(caller)
        const refusals: Array<number> = []
        const counting = Logger.make(({ message }) => {
          if (String(message).includes("meter outcomes not written yet")) refusals.push(performance.now())
        })
        const restore = sql`ALTER TABLE meter_event RENAME COLUMN duration_refused TO duration_ms`.unprepared
        yield* Effect.gen(function*() {
          const meter = yield* Meter
          yield* Effect.flatten(meter.submit(call))
          // The outcome's column gone: every write of it fails, as while storage refuses it.
          yield* sql`ALTER TABLE meter_event RENAME COLUMN duration_ms TO duration_refused`.unprepared
          const start = performance.now()
          meter.complete(call.requestId, call.occurredAt, 200, 4.25)
          yield* Effect.sleep("1600 millis")
          // Every 100 ms, 15 refusals; waiting twice as long after each (100, 200, 400, 800 ms), 4.
          assert.isAtLeast(refusals.length, 2)
          assert.isAtMost(refusals.length, 6, `refused at ${refusals.map((at) => (at - start).toFixed(0)).join(", ")} ms`)
          yield* restore
        }).pipe(
          Effect.provide(Layer.fresh(MeterSql).pipe(Layer.provide(Logger.layer([counting])))),
          Effect.onError(() => Effect.ignore(restore))
        )
        // Kept, and written when the meter shut down.
        const [row] = yield* sql<{ status: number; duration_ms: number }>`
          SELECT status, duration_ms FROM meter_event WHERE request_id = ${call.requestId}`
        assert.deepStrictEqual({ ...row }, { status: 200, duration_ms: 4.25 })
      }))

    it.effect("keeps transactions of different connections apart", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE IF NOT EXISTS isolation_probe (label text)`
        const rolledBack = sql.withTransaction(
          Effect.gen(function*() {
            yield* sql`INSERT INTO isolation_probe VALUES ('inside')`
            yield* Effect.sleep("50 millis")
            return yield* Effect.fail("roll back")
          })
        )
        yield* Effect.all([
          Effect.ignore(rolledBack),
          Effect.sleep("10 millis").pipe(Effect.andThen(sql`INSERT INTO isolation_probe VALUES ('outside')`))
        ], { concurrency: 2 })
        const rows = yield* sql<{ label: string }>`SELECT label FROM isolation_probe`
        assert.deepStrictEqual(rows.map((r) => r.label), ["outside"])
      }))
  })
}
