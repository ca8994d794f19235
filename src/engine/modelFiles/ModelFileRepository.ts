/**
 * Uploaded model files in the database (migrations 0012, 0016): one row per
 * app, content and stated unit in `engine_model_file`, the bytes in `engine_model_file_chunk`
 * rows of 1 MiB, so no statement carries a whole file and an upload is
 * written as it arrives. The file's row is written last, once the whole body
 * arrived and its SHA-256 is known: until then the chunks belong to no file
 * (a failed upload deletes them; a process killed mid-upload leaves chunks
 * no file names, which the next upload sweeps after an hour).
 */
import { Data, Effect, Option, Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { createHash } from "node:crypto"
import { MODEL_UNITS, type ModelUnit } from "../../domain/ModelUnits.ts"
import { timeOrderedUuid } from "../../domain/TimeOrderedId.ts"
import type { AnalysedGeometry } from "../geometry/mesh.ts"

/** The bytes of one chunk row: large enough to keep the rows few, small enough to keep each statement small. */
const CHUNK_BYTES = 1024 * 1024

/** A stored file as the engine reads it. */
export interface StoredModelFile {
  readonly id: string
  readonly fileName: string
  readonly sha256: string
  readonly size: number
  readonly createdAt: string
  /** The unit the upload stated its coordinates are in; undefined when it stated none. */
  readonly unit: ModelUnit | undefined
  /** The geometry of the file read in `unit` (millimetres, or a 3MF's own, when undefined). */
  readonly geometry: AnalysedGeometry | null
}

interface FileRow {
  readonly id: string
  readonly fileName: string
  readonly sha256: string
  readonly size: number
  readonly createdAt: Date | string
  readonly unit: string
  readonly geometry: AnalysedGeometry | string | null
}

const unitOf = (stored: string): ModelUnit | undefined => MODEL_UNITS.find((unit) => unit === stored)

const asFile = (row: FileRow): StoredModelFile => ({
  id: row.id,
  fileName: row.fileName,
  sha256: row.sha256,
  size: Number(row.size),
  createdAt: new Date(row.createdAt).toISOString(),
  unit: unitOf(row.unit),
  geometry: typeof row.geometry === "string" ? JSON.parse(row.geometry) as AnalysedGeometry : row.geometry
})

/** The app's file `id`, if it has one (another app's reads as none). */
export const findModelFile = (appId: string, id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<FileRow>`
      SELECT id, file_name AS "fileName", sha256, size::int AS size, created_at AS "createdAt", unit, geometry
      FROM engine_model_file WHERE app_id = ${appId} AND id = ${id}`.pipe(
      Effect.map((rows) => rows[0] === undefined ? undefined : asFile(rows[0]))
    ))

const findBySha = (appId: string, sha256: string, unit: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<FileRow>`
      SELECT id, file_name AS "fileName", sha256, size::int AS size, created_at AS "createdAt", unit, geometry
      FROM engine_model_file WHERE app_id = ${appId} AND sha256 = ${sha256} AND unit = ${unit}`.pipe(
      Effect.map((rows) => rows[0] === undefined ? undefined : asFile(rows[0]))
    ))

const deleteChunks = (uploadId: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM engine_model_file_chunk WHERE upload_id = ${uploadId}`)

/** Chunks no file names, left by a process that stopped mid-upload: an hour is longer than any upload the limits allow to take. */
const sweepAbandonedChunks = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`
    DELETE FROM engine_model_file_chunk c
    WHERE c.created_at < now() - interval '1 hour'
      AND NOT EXISTS (SELECT 1 FROM engine_model_file f WHERE f.id = c.upload_id)`)

/** Why an upload's body did not arrive whole (the client went away, or the gateway cut it at its limit). */
export class UploadInterrupted extends Data.TaggedError("UploadInterrupted") {}

/** A body without a byte: no model file. */
export class EmptyUpload extends Data.TaggedError("EmptyUpload") {}

/**
 * Stores the body as the app's file `fileName` in `unit` (if the upload
 * stated one), unless the app has a file with the same bytes and unit: then
 * the chunks are dropped and that file answers (`created: false`). Memory
 * holds one chunk at a time. A body that fails (UploadInterrupted) leaves
 * nothing behind.
 */
export const storeModelFile = Effect.fnUntraced(function*(
  appId: string,
  fileName: string,
  unit: ModelUnit | undefined,
  body: Stream.Stream<Uint8Array, unknown>
) {
  const sql = yield* SqlClient.SqlClient
  yield* sweepAbandonedChunks
  const uploadId = timeOrderedUuid()
  const hash = createHash("sha256")
  let size = 0
  let seq = 0
  let pending: Array<Uint8Array> = []
  let pendingBytes = 0
  const flush = Effect.suspend(() => {
    if (pendingBytes === 0) return Effect.void
    const bytes = Buffer.concat(pending, pendingBytes)
    pending = []
    pendingBytes = 0
    return Effect.asVoid(sql`INSERT INTO engine_model_file_chunk (upload_id, seq, bytes) VALUES (${uploadId}, ${seq++}, ${bytes})`)
  })
  const stored = body.pipe(
    Stream.mapError(() => new UploadInterrupted()),
    Stream.runForEach((chunk) => {
      hash.update(chunk)
      size += chunk.length
      pending.push(chunk)
      pendingBytes += chunk.length
      return pendingBytes >= CHUNK_BYTES ? flush : Effect.void
    }),
    Effect.andThen(flush)
  )
  return yield* Effect.gen(function*() {
    yield* stored
    if (size === 0) return yield* new EmptyUpload()
    const sha256 = hash.digest("hex")
    const createdAt = new Date()
    const inserted = yield* sql<{ id: string }>`
      INSERT INTO engine_model_file (id, app_id, sha256, file_name, size, created_at, unit)
      VALUES (${uploadId}, ${appId}, ${sha256}, ${fileName}, ${size}, ${createdAt}, ${unit ?? ""})
      ON CONFLICT (app_id, sha256, unit) DO NOTHING
      RETURNING id`
    if (inserted.length === 1) {
      return { file: { id: uploadId, fileName, sha256, size, createdAt: createdAt.toISOString(), unit, geometry: null }, created: true }
    }
    yield* deleteChunks(uploadId)
    const existing = yield* findBySha(appId, sha256, unit ?? "")
    // The row that won the conflict is never deleted, so it is there.
    return { file: existing!, created: false }
  }).pipe(Effect.onError(() => Effect.ignore(deleteChunks(uploadId))))
})

/** The file's bytes, chunk by chunk, read as the stream is pulled (the file's row checked by the caller). */
export const modelFileContent = (id: string): Effect.Effect<Stream.Stream<Uint8Array, SqlError>, never, SqlClient.SqlClient> =>
  Effect.map(
    SqlClient.SqlClient,
    (sql) =>
      Stream.paginate(0, (seq: number) =>
        sql<{ bytes: Uint8Array }>`SELECT bytes FROM engine_model_file_chunk WHERE upload_id = ${id} AND seq = ${seq}`.pipe(
          Effect.map((rows) => {
            const row = rows[0]
            return row === undefined ? [[], Option.none()] as const : [[new Uint8Array(row.bytes)], Option.some(seq + 1)] as const
          })
        ))
  )

/** The file's bytes, whole (what the analyser reads). */
export const modelFileBytes = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ bytes: Uint8Array }>`SELECT bytes FROM engine_model_file_chunk WHERE upload_id = ${id} ORDER BY seq`.pipe(
      Effect.map((rows) => {
        const bytes = Buffer.concat(rows.map((row) => row.bytes))
        return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length)
      })
    ))

/** Keeps the file's analysed geometry (read in the file's own unit) with it, so every part made from the file reuses it. */
export const keepGeometry = (appId: string, id: string, geometry: AnalysedGeometry) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE engine_model_file SET geometry = ${JSON.stringify(geometry)}::jsonb WHERE app_id = ${appId} AND id = ${id}`
  )
