/**
 * Migration 0005: `part_shape`, the source of the similarity index
 * (src/engine/orders/shapeIndex.ts). One row per part (ticket model) with
 * its geometry, kept in step with `engine_record` by triggers, so every
 * write counts whichever code path or engine instance makes it:
 *
 * - a part inserted, or its geometry changed: the row gets the geometry
 *   (NULL when the part has none yet);
 * - a part deleted: the row stays as a tombstone, geometry NULL, so an
 *   index built before the delete learns of it.
 *
 * `changed_xid` is the writing transaction's id (`pg_current_xact_id()`):
 * an index that read with a snapshot whose oldest running transaction was X
 * finds everything it has not seen among the rows with `changed_xid >= X`
 * (indexed per app). Updates that keep the geometry (a new quantity, other
 * services) do not touch the row. Tombstones are small and kept.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const partShapes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE part_shape (
      part_id text PRIMARY KEY,
      app_id text NOT NULL,
      geometry jsonb,
      changed_xid xid8 NOT NULL
    )`
  yield* sql`CREATE INDEX part_shape_app_changed ON part_shape (app_id, changed_xid)`
  yield* sql.unsafe(`
    CREATE FUNCTION part_shape_track() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        INSERT INTO part_shape (part_id, app_id, geometry, changed_xid)
        VALUES (OLD.id, OLD.app_id, NULL, pg_current_xact_id())
        ON CONFLICT (part_id) DO UPDATE SET geometry = NULL, changed_xid = EXCLUDED.changed_xid;
        RETURN OLD;
      END IF;
      INSERT INTO part_shape (part_id, app_id, geometry, changed_xid)
      VALUES (
        NEW.id,
        NEW.app_id,
        CASE WHEN jsonb_typeof(NEW.data->'geometry') = 'object' THEN NEW.data->'geometry' END,
        pg_current_xact_id()
      )
      ON CONFLICT (part_id) DO UPDATE
        SET app_id = EXCLUDED.app_id, geometry = EXCLUDED.geometry, changed_xid = EXCLUDED.changed_xid;
      RETURN NEW;
    END
    $$`)
  yield* sql`
    CREATE TRIGGER part_shape_insert AFTER INSERT ON engine_record
    FOR EACH ROW WHEN (NEW.resource = 'ticketModel') EXECUTE FUNCTION part_shape_track()`
  yield* sql`
    CREATE TRIGGER part_shape_update AFTER UPDATE ON engine_record
    FOR EACH ROW WHEN (NEW.resource = 'ticketModel' AND OLD.data->'geometry' IS DISTINCT FROM NEW.data->'geometry')
    EXECUTE FUNCTION part_shape_track()`
  yield* sql`
    CREATE TRIGGER part_shape_delete AFTER DELETE ON engine_record
    FOR EACH ROW WHEN (OLD.resource = 'ticketModel') EXECUTE FUNCTION part_shape_track()`
  // The parts that exist already.
  yield* sql`
    INSERT INTO part_shape (part_id, app_id, geometry, changed_xid)
    SELECT id, app_id, CASE WHEN jsonb_typeof(data->'geometry') = 'object' THEN data->'geometry' END, pg_current_xact_id()
    FROM engine_record WHERE resource = 'ticketModel'`
})
