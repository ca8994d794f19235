/**
 * The rows of `part_shape` (migration 0005), which triggers on
 * `engine_record` keep in step with every part write: what the shape index
 * (shapeIndex.ts) reads to stay up to date.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { ShapeGeometry } from "./shapeSignature.ts"

/** A row of `part_shape`: the triggers copy a part's stored geometry when it is an object, else NULL (migration 0005). */
export interface ShapeRow {
  readonly horizon: string
  readonly part_id: string | null
  readonly geometry: ShapeGeometry | null
}

/** The database the step runs on, as a key: the shape index keeps its indexes per database client. */
export const currentDatabase: Effect.Effect<object, never, SqlClient.SqlClient> = SqlClient.SqlClient

/**
 * The changes since the horizon (everything with a geometry on the first
 * read), and the new horizon: one statement, so both come from one snapshot.
 * The LEFT JOIN answers the horizon even when nothing changed.
 */
export const changesSince = (appId: string, horizon: string | undefined) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<ShapeRow>`
      WITH snapshot AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon)
      SELECT snapshot.horizon, shape.part_id, shape.geometry
      FROM snapshot LEFT JOIN part_shape shape ON ${
      sql.and([
        sql`shape.app_id = ${appId}`,
        horizon === undefined ? sql`shape.geometry IS NOT NULL` : sql`shape.changed_xid >= ${horizon}::xid8`
      ])
    }`)
