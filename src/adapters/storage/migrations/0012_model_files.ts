/**
 * Migration 0012: uploaded model files (POST /v1/model-file,
 * src/engine/modelFiles/ModelFileRepository.ts). A file is one row per app and content
 * (its SHA-256, unique per app), with the geometry of its first analysis;
 * its bytes are rows of 1 MiB chunks keyed by the file's id, written before
 * the file's row, so a body that never arrives whole has no file. `bytea`
 * behaves the same on PostgreSQL and PGlite.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const modelFiles = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE engine_model_file (
      id text PRIMARY KEY,
      app_id text NOT NULL,
      sha256 text NOT NULL,
      file_name text NOT NULL,
      size bigint NOT NULL CHECK (size > 0),
      geometry jsonb,
      created_at timestamptz NOT NULL,
      UNIQUE (app_id, sha256)
    )`
  yield* sql`
    CREATE TABLE engine_model_file_chunk (
      upload_id text NOT NULL,
      seq integer NOT NULL,
      bytes bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (upload_id, seq)
    )`
  yield* sql`CREATE INDEX engine_model_file_chunk_created ON engine_model_file_chunk (created_at)`
})
