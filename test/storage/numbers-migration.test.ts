/**
 * Migration 0008 on data stored before it, on each backend: records keep the
 * numbers the shared sequence gave them and each app's counter continues
 * after its own highest; of records sharing an external reference, the
 * oldest keeps it; afterwards both are unique per app and resource.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { migrations } from "../../src/adapters/storage/migrations.ts"
import { StorageLive } from "../../src/adapters/storage/Storage.ts"
import { RecordRepository } from "../../src/engine/RecordRepository.ts"
import { InstrumentsNoOp } from "../../src/platform/telemetry/Instruments.ts"
import { backends, testConfig } from "../support/backends.ts"

const Suite = (backend: (typeof backends)[number]) =>
  RecordRepository.layer.pipe(Layer.provideMerge(StorageLive("serve")), Layer.provide(InstrumentsNoOp), Layer.provideMerge(testConfig(backend)))

for (const backend of backends) {
  layer(Suite(backend), { timeout: 60_000, excludeTestServices: true })(`Migration 0008: numbers per app, unique external references (${backend})`, (it) => {
    it.effect("continues each app's numbers after its highest, keeps the oldest of duplicate references, then holds both unique", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const records = yield* RecordRepository
        // The store as 0007 left it.
        yield* sql`DROP INDEX engine_record_external_reference_unique`
        yield* sql`DROP INDEX engine_record_number_unique`
        yield* sql`DROP TABLE engine_counter`
        const row = (resource: string, id: string, appId: string, data: Record<string, unknown>, createdAt: string) =>
          sql`
            INSERT INTO engine_record (resource, id, app_id, data, created_at, updated_at)
            VALUES (${resource}, ${id}, ${appId}, ${JSON.stringify({ ...data, id, createdAt, updatedAt: createdAt })}::jsonb,
              ${createdAt}::timestamptz, ${createdAt}::timestamptz)`
        yield* row("ticket", "t-a1", "app-a", { name: "A1", number: "T-000012" }, "2026-01-01T00:00:00Z")
        yield* row("ticket", "t-b1", "app-b", { name: "B1", number: "T-000014" }, "2026-01-02T00:00:00Z")
        yield* row("ticket", "t-a2", "app-a", { name: "A2", number: "T-000015" }, "2026-01-03T00:00:00Z")
        yield* row("project", "p-a1", "app-a", { name: "PA", number: "P-000013" }, "2026-01-01T00:00:00Z")
        yield* row("customer", "c-a1", "app-a", { name: "First", externalReference: "CRM-1" }, "2026-01-01T00:00:00Z")
        yield* row("customer", "c-a2", "app-a", { name: "Second", externalReference: "CRM-1" }, "2026-01-02T00:00:00Z")
        yield* row("customer", "c-b1", "app-b", { name: "Theirs", externalReference: "CRM-1" }, "2026-01-03T00:00:00Z")
        yield* row("project", "p-a2", "app-a", { name: "Same value, other resource", externalReference: "CRM-1" }, "2026-01-04T00:00:00Z")

        yield* migrations["0008_numbers_per_app_and_unique_external_references"]

        const counters = yield* sql<{ app_id: string; prefix: string; value: string }>`
          SELECT app_id, prefix, value::text AS value FROM engine_counter ORDER BY app_id, prefix`
        assert.deepStrictEqual(counters.map((c) => [c.app_id, c.prefix, c.value]), [["app-a", "P", "13"], ["app-a", "T", "15"], ["app-b", "T", "14"]])
        const customer = (appId: string, id: string) => Effect.map(records.find("customer", appId, id), (found) => found!)
        assert.strictEqual((yield* customer("app-a", "c-a1")).externalReference, "CRM-1")
        const second = yield* customer("app-a", "c-a2")
        assert.isUndefined(second.externalReference)
        assert.strictEqual(second.duplicateExternalReference, "CRM-1")
        assert.strictEqual((yield* customer("app-b", "c-b1")).externalReference, "CRM-1")
        assert.strictEqual((yield* records.find("project", "app-a", "p-a2"))!.externalReference, "CRM-1")
        assert.strictEqual((yield* records.lookup("customer", "app-a", "CRM-1"))!.id, "c-a1")

        // Numbers continue per app; a new app starts at 1; existing records kept theirs.
        const next = (appId: string, prefix: string, resource: string) =>
          Effect.map(records.insert(resource, appId, { name: "new" }, { numberPrefix: prefix }), (r) => r.number)
        assert.strictEqual(yield* next("app-a", "T", "ticket"), "T-000016")
        assert.strictEqual(yield* next("app-b", "T", "ticket"), "T-000015")
        assert.strictEqual(yield* next("app-a", "P", "project"), "P-000014")
        assert.strictEqual(yield* next("app-c", "T", "ticket"), "T-000001")
        assert.strictEqual((yield* records.find("ticket", "app-a", "t-a1"))!.number, "T-000012")

        // Unique from now on, whatever writes.
        const duplicate = yield* Effect.exit(records.insert("customer", "app-a", { name: "Third", externalReference: "CRM-1" }))
        assert.isTrue(Exit.isFailure(duplicate))
        const sameNumber = yield* Effect.exit(row("ticket", "t-a9", "app-a", { name: "A9", number: "T-000016" }, "2026-02-01T00:00:00Z"))
        assert.isTrue(Exit.isFailure(sameNumber))
        yield* row("ticket", "t-c9", "app-c", { name: "C9", number: "T-000016" }, "2026-02-01T00:00:00Z")
      }))
  })
}
