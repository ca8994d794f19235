/**
 * Migration 0019: the unit an uploaded model file was uploaded in
 * (POST /v1/model-file?unit=, src/engine/modelFiles/ModelFileRepository.ts), '' when the
 * upload stated none. A file is one row per app, content and unit: the same
 * bytes uploaded in inches and in millimetres are two files, each read (and
 * its geometry kept) in its own unit.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const modelFileUnits = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE engine_model_file ADD COLUMN unit text NOT NULL DEFAULT ''`
  yield* sql`ALTER TABLE engine_model_file DROP CONSTRAINT engine_model_file_app_id_sha256_key`
  yield* sql`ALTER TABLE engine_model_file ADD CONSTRAINT engine_model_file_app_id_sha256_unit_key UNIQUE (app_id, sha256, unit)`
})
