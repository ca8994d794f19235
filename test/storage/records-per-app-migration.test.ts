/**
 * Migration 0018 on data stored before it, on each backend: records are
 * keyed per app (two apps may hold the same id), reel groups keep the ids
 * the shared sequence gave them, and each app's count continues after its
 * own highest; an app without groups starts at 1.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { migrations } from "../../src/adapters/storage/migrations.ts"
import { StorageLive } from "../../src/adapters/storage/Storage.ts"
import { nextReelGroupId } from "../../src/engine/production/reels.ts"
import { RecordRepository } from "../../src/engine/RecordRepository.ts"
import { InstrumentsNoOp } from "../../src/platform/telemetry/Instruments.ts"
import { backends, testConfig } from "../support/backends.ts"

const Suite = (backend: (typeof backends)[number]) =>
  RecordRepository.layer.pipe(Layer.provideMerge(StorageLive("serve")), Layer.provide(InstrumentsNoOp), Layer.provideMerge(testConfig(backend)))

for (const backend of backends) {
  layer(Suite(backend), { timeout: 60_000, excludeTestServices: true })(`Migration 0018: records and reel group ids per app (${backend})`, (it) => {
    it.effect("keeps existing reel group ids, continues each app's count after its highest, and lets two apps hold one id", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const records = yield* RecordRepository
        // The store as 0017 left it: one key for every app, reel group ids from the shared sequence.
        yield* sql`ALTER TABLE engine_record DROP CONSTRAINT engine_record_pkey`
        yield* sql`ALTER TABLE engine_record ADD PRIMARY KEY (resource, id)`
        yield* sql`DELETE FROM engine_counter WHERE prefix = 'reel-group'`
        for (const [id, appId] of [["7", "app-a"], ["9", "app-b"], ["12", "app-a"]] as const) {
          yield* records.insert("reelGroup", appId, { inventoryProductName: `Group ${id}` }, { id })
        }
        yield* records.insert("materialSeries", "app-a", { name: "Filaments", technologyId: "fdm" }, { id: "filaments" })
        const before = yield* Effect.exit(records.insert("materialSeries", "app-b", { name: "Theirs", technologyId: "fdm" }, { id: "filaments" }))
        assert.isTrue(Exit.isFailure(before), "one key for every app")

        yield* migrations["0018_records_per_app"]

        assert.strictEqual(yield* nextReelGroupId("app-a"), "13")
        assert.strictEqual(yield* nextReelGroupId("app-b"), "10")
        assert.strictEqual(yield* nextReelGroupId("app-c"), "1")
        assert.strictEqual(yield* nextReelGroupId("app-c"), "2")
        assert.strictEqual((yield* records.find("reelGroup", "app-a", "7"))?.inventoryProductName, "Group 7")
        assert.isUndefined(yield* records.find("reelGroup", "app-b", "7"))

        yield* records.insert("materialSeries", "app-b", { name: "Theirs", technologyId: "fdm" }, { id: "filaments" })
        assert.strictEqual((yield* records.find("materialSeries", "app-a", "filaments"))?.name, "Filaments")
        assert.strictEqual((yield* records.find("materialSeries", "app-b", "filaments"))?.name, "Theirs")
        const twice = yield* Effect.exit(records.insert("materialSeries", "app-b", { name: "Again", technologyId: "fdm" }, { id: "filaments" }))
        assert.isTrue(Exit.isFailure(twice), "still one record per id within an app")
      }))
  })
}
