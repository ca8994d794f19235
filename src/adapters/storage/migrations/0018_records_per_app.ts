/**
 * Migration 0018: a record's id is its app's, not the whole service's.
 *
 * - `engine_record` is keyed by (resource, id, app_id) instead of
 *   (resource, id): two apps may each hold a record with the same id, so an
 *   id an integrator chooses (`PUT /material-series/{id}`, which creates the
 *   series when the id is new) never collides with, nor reveals, another
 *   app's. Every statement already names the app; reference data is the
 *   records of app `*`. The key's columns keep `resource` and `id` first, so
 *   a record read (`resource = … AND id = … AND app_id IN (…)`) is still one
 *   index probe.
 * - Reel group ids are counted per app (`engine_counter`, prefix
 *   `reel-group`): an app's first reel group is 1 whatever other apps have
 *   done, so no tenant reads another's volume from its ids. Existing groups
 *   keep their ids (integrators hold them), and each app's counter starts
 *   after its highest. The shared `engine_number` sequence they came from is
 *   no longer used; it stays so that an instance of the previous version,
 *   during a rolling deploy, can still create a group.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const recordsPerApp = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE engine_record DROP CONSTRAINT engine_record_pkey`
  yield* sql`ALTER TABLE engine_record ADD PRIMARY KEY (resource, id, app_id)`
  yield* sql`
    INSERT INTO engine_counter (app_id, prefix, value)
    SELECT app_id, 'reel-group', max(id::bigint)
    FROM engine_record
    WHERE resource = 'reelGroup' AND id ~ '^[0-9]{1,15}$'
    GROUP BY app_id
    ON CONFLICT (app_id, prefix) DO UPDATE SET value = greatest(engine_counter.value, EXCLUDED.value)`
})
