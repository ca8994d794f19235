/**
 * Table statistics where nothing else keeps them: the embedded database,
 * which runs no autovacuum, and a PostgreSQL whose autovacuum is off.
 *
 * A prepared statement settles on a generic plan after five runs and keeps
 * it until its tables' statistics change. Without ANALYZE they never do, and
 * a plan chosen while a table was small (reading every record of a resource
 * to find one by id, or every secret to meter a batch of calls) stays as the
 * table grows. Every ANALYZE_INTERVAL the server analyzes the tables changed
 * by more than autovacuum's own threshold since their last ANALYZE (50 rows
 * and a tenth of the table); the new statistics make PostgreSQL plan the
 * statements on them again (docs/operations.md, "Statistics and vacuum").
 */
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/** How often the changed tables are looked for. */
export const ANALYZE_INTERVAL = Duration.minutes(1)

/** Analyzes the tables of the service's schema changed past autovacuum's analyze threshold; their names. */
export const analyzeChangedTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const changed = yield* sql<{ name: string }>`
    SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND n_mod_since_analyze > 50 + 0.1 * greatest(n_live_tup, 0)
    ORDER BY relname`.unprepared
  for (const { name } of changed) yield* sql.unsafe(`ANALYZE ${name}`).unprepared
  return changed.map(({ name }) => name)
})

/** Whether the server keeps the statistics itself: always on the embedded database, on PostgreSQL when autovacuum is off. */
export const analyzesItself = (embedded: boolean) =>
  embedded ? Effect.succeed(true) : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [setting] = yield* sql<{ autovacuum: string }>`SELECT current_setting('autovacuum') AS autovacuum`.unprepared
    return setting?.autovacuum === "off"
  })

/** The loop, for as long as the server runs, where it is needed; a failed round is logged and the next one tried. */
export const TableStatisticsLive = (embedded: boolean) =>
  Layer.effectDiscard(Effect.gen(function*() {
    if (!(yield* analyzesItself(embedded))) return
    if (!embedded) yield* Effect.logInfo("PostgreSQL's autovacuum is off: the server analyzes the tables it changes once a minute")
    yield* Effect.forkScoped(Effect.forever(
      Effect.sleep(ANALYZE_INTERVAL).pipe(
        // Upkeep that usually finds nothing to do: no span (an idle instance exports none).
        Effect.andThen(Effect.withTracerEnabled(analyzeChangedTables, false)),
        Effect.catch((error) => Effect.logWarning("analyzing the changed tables failed; next round in a minute", { error: String(error) }))
      )
    ))
  }))
