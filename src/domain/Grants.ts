/**
 * What an Incoming Secret allows once it has authenticated: its scopes, its
 * spend limit and its mode. Authentication (spec §5) does not look at them:
 * a call outside them is a 403 after the one 401 has been ruled out.
 *
 * - A scope names a kind of operation (`read`, `write`, `quote`, `order`,
 *   `webhooks`); each operation of the API needs exactly one
 *   (src/contract/Scopes.ts). A secret created without scopes has them all.
 * - `maxAcceptTotal` bounds the total of a quote the secret may accept, in
 *   the base currency (EUR).
 * - The mode picks the data space the secret works on: `live`, or `test`, a
 *   space of its own per app (records, numbers, events, webhooks, model
 *   files, usage) that live secrets never see.
 */
import { Schema } from "effect"

export const SCOPES = ["read", "write", "quote", "order", "webhooks"] as const

export const Scope = Schema.Literals(SCOPES).annotate({
  description: "`read`: every read, lookup, similarity search and price break; `write`: creating and changing records; " +
    "`quote`: creating and sending quotes; `order`: accepting a quote, sending to production, service-job timelines, merges and " +
    "reassignments; `webhooks`: webhook endpoints, deliveries and their secrets"
})
export type Scope = typeof Scope.Type

export const MODES = ["live", "test"] as const

export const Mode = Schema.Literals(MODES).annotate({
  description: "`live` (the default) works on the app's records; `test` on the app's test data, a data space of its own"
})
export type Mode = typeof Mode.Type

/** The largest limit a secret may carry: beyond any quote the engine can price. */
const MAX_LIMIT = 1e12

/** Whether `amount` is a whole number of cents (the base currency's minor unit). */
const wholeCents = (amount: number) => {
  const cents = amount * 100
  return Math.abs(cents - Math.round(cents)) <= 1e-6
}

export const MaxAcceptTotal = Schema.Number.check(
  Schema.makeFilter((amount: number) =>
    Number.isFinite(amount) && amount >= 0 && amount <= MAX_LIMIT && wholeCents(amount)
      ? true
      : `an amount in EUR from 0 to ${MAX_LIMIT}, to the cent`
  )
).annotate({
  description: "The largest quote total (in EUR, the base currency; a quote in another currency converted at its own rate) " +
    "the secret may accept; null or absent: no limit",
  examples: [5000]
})

/** A secret's grants, as the request path checks them. */
export interface Grants {
  /** Changes with every change of the grants: the meter's flush confirms the version a call was decided with. */
  readonly version: number
  readonly scopes: ReadonlySet<Scope>
  readonly mode: Mode
  readonly maxAcceptTotal: number | null
}

/** Scopes in their canonical order, without repeats (what is stored and shown). */
export const canonicalScopes = (scopes: Iterable<Scope>): ReadonlyArray<Scope> => {
  const given = new Set(scopes)
  return SCOPES.filter((scope) => given.has(scope))
}

// ---------------------------------------------------------------------------
// Data spaces

/**
 * Appended to an app id to name its test data space. `~` is no character of
 * an app id (src/domain/Secret.ts), so no app's live space is another's test
 * space, and every record, number sequence, event, webhook endpoint and model
 * file, all keyed by app, falls in one space or the other.
 */
const TEST_SPACE_MARKER = "~test"

/** The key records of `appId` in `mode` are stored under: the engine's app id. */
export const dataSpaceOf = (appId: string, mode: Mode): string => mode === "test" ? `${appId}${TEST_SPACE_MARKER}` : appId

/** The mode of a data space key. */
export const modeOfDataSpace = (dataSpace: string): Mode => dataSpace.endsWith(TEST_SPACE_MARKER) ? "test" : "live"

/** The app of a data space key. */
export const appOfDataSpace = (dataSpace: string): string => dataSpace.endsWith(TEST_SPACE_MARKER) ? dataSpace.slice(0, -TEST_SPACE_MARKER.length) : dataSpace

/** The header every answer of a test-mode call carries (`X-Mode: test`). */
export const MODE_HEADER = "x-mode"

// ---------------------------------------------------------------------------
// Refusals, worded once for the gateway and the engine

export const insufficientScopeMessage = (operation: string, scope: Scope) => `This secret may not call ${operation}: it needs the scope "${scope}"`

/** An amount in EUR as the messages write it. */
const euros = (amount: number) => `${amount.toFixed(2)} EUR`

export const spendLimitMessage = (
  quote: string,
  limit: number,
  totalInBase: number,
  total: { readonly amount: number; readonly currencyId: string; readonly exchangeRate: number }
) =>
  `Accepting ${quote} commits ${euros(totalInBase)}` +
  (total.currencyId === "EUR" ? "" : ` (${total.amount} ${total.currencyId} at ${total.exchangeRate} per EUR)`) +
  `, more than this secret's limit of ${euros(limit)} (maxAcceptTotal): the quote stays sent`

/** What emptying an app's test data removed (DELETE /api/v1/app/{appId}/test-data, `cli test-data empty`). */
export const TestDataEmptied = Schema.Struct({
  appId: Schema.String,
  mode: Schema.Literal("test"),
  records: Schema.Int.annotate({ description: "Records of every resource, numbers and exchange rates with them" }),
  events: Schema.Int,
  webhookDeliveries: Schema.Int,
  modelFiles: Schema.Int
}).annotate({ identifier: "TestDataEmptied", title: "Test data emptied" })
export type TestDataEmptied = typeof TestDataEmptied.Type
