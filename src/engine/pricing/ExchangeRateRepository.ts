/**
 * The apps' own exchange rates (`engine_exchange_rate`, migration 0009): one
 * row per app and currency, with when the app set it (exchangeRates.ts reads
 * them over the reference rates).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** The app's own rates (those of `currencyIds` only, when given), each with its time in milliseconds. */
export const appRateRows = Effect.fnUntraced(function*(appId: string, currencyIds?: ReadonlyArray<string>) {
  const sql = yield* SqlClient.SqlClient
  const only = currencyIds === undefined ? sql`` : sql`AND currency_id = ANY(${currencyIds}::text[])`
  return yield* sql<{ currency_id: string; exchange_rate: number; updated_ms: number }>`
    SELECT currency_id, exchange_rate, (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms
    FROM engine_exchange_rate WHERE app_id = ${appId} ${only}`
})

/** Drops the app's own rate of the currency. */
export const removeAppRate = (appId: string, currencyId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`DELETE FROM engine_exchange_rate WHERE app_id = ${appId} AND currency_id = ${currencyId}`))

/** Sets the app's own rate of the currency, as of `updatedAt`. */
export const setAppRate = (appId: string, currencyId: string, exchangeRate: number, updatedAt: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`
      INSERT INTO engine_exchange_rate (app_id, currency_id, exchange_rate, updated_at)
      VALUES (${appId}, ${currencyId}, ${exchangeRate}, ${updatedAt}::timestamptz)
      ON CONFLICT (app_id, currency_id) DO UPDATE SET exchange_rate = EXCLUDED.exchange_rate, updated_at = EXCLUDED.updated_at`))
