/**
 * What a replacement of a quote (`PUT /ticket-quote/{id}`, MCP
 * `update_ticket_quote`) may say of the fields it does not set. The engine's
 * fields (`number`, `exchangeRate`, `total`, and a line's `total`,
 * `manufacturability` and `options`) may be left out or carried back as
 * read; a value sent must be the quote's as stored or as the replacement
 * makes it (a line's total after its unit price is overridden), else a 422
 * naming each, never a silent overwrite. `validUntil` can be set only to the
 * future, never before the quote was made.
 */
import { Effect } from "effect"
import type { TicketQuote } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import type { InputOf } from "../typedRecords.ts"
import type { Quote } from "./quoteState.ts"
import { quoteLabel } from "./quoteState.ts"

type Line = Quote["lines"][number]
type Option = NonNullable<Line["options"]>[number]

/** A replacement as the engine receives it: the writable fields, and the engine's ones it carried back. */
export type Replacement = InputOf<typeof TicketQuote> & {
  readonly number?: string | undefined
  readonly exchangeRate?: number | undefined
  readonly total?: number | undefined
}
type SentLine = Replacement["lines"][number]

/** Amounts compared at four decimals, the finest minor unit a currency has, so 13.5 and 13.50000000001 are one amount. */
const sameAmount = (a: number, b: number) => Math.round(a * 10_000) === Math.round(b * 10_000)

const sameOptions = (a: ReadonlyArray<Option>, b: ReadonlyArray<Option>) =>
  a.length === b.length && a.every((option, index) => {
    const other = b[index]!
    return option.quantity === other.quantity && sameAmount(option.unitPrice, other.unitPrice) && sameAmount(option.total, other.total) &&
      option.leadTimeDays === other.leadTimeDays
  })

const shown = (value: unknown) => value === undefined ? "none" : typeof value === "string" || typeof value === "number" ? String(value) : JSON.stringify(value)

/** `field: sent <value>, the engine's <value>` (and the value as read when the replacement changes it). */
const disagreement = (field: string, sent: unknown, engine: unknown, asRead: unknown) =>
  `${field}: sent ${shown(sent)}, the engine's ${shown(engine)}${shown(asRead) === shown(engine) ? "" : ` (${shown(asRead)} as read)`}`

/** The stored line pricing the same part or item as a sent one. */
const storedLine = (quote: Quote, line: SentLine) =>
  quote.lines.find((stored) =>
    line.ticketModelId !== undefined ? stored.ticketModelId === line.ticketModelId : line.itemId !== undefined && stored.itemId === line.itemId
  )

/**
 * The engine's fields of `sent` that are neither the quote's as stored nor
 * as the replacement makes it (`made`: its lines in the order sent, and its
 * total), each as a message naming the field and the values.
 */
const disagreements = (quote: Quote, sent: Replacement, made: Pick<Quote, "lines" | "total">): ReadonlyArray<string> => {
  const found: Array<string> = []
  if (sent.number !== undefined && sent.number !== quote.number) found.push(disagreement("number", sent.number, quote.number, quote.number))
  if (sent.exchangeRate !== undefined && sent.exchangeRate !== quote.exchangeRate) {
    found.push(disagreement("exchangeRate", sent.exchangeRate, quote.exchangeRate, quote.exchangeRate))
  }
  if (sent.total !== undefined && !sameAmount(sent.total, quote.total) && !sameAmount(sent.total, made.total)) {
    found.push(disagreement("total", sent.total, made.total, quote.total))
  }
  for (const [index, line] of sent.lines.entries()) {
    const stored = storedLine(quote, line)
    const result = made.lines[index]
    if (stored === undefined || result === undefined) continue
    const at = `lines.${index}.`
    if (line.total !== undefined && !sameAmount(line.total, stored.total) && !sameAmount(line.total, result.total)) {
      found.push(disagreement(`${at}total`, line.total, result.total, stored.total))
    }
    if (line.manufacturability !== undefined && line.manufacturability !== stored.manufacturability) {
      found.push(disagreement(`${at}manufacturability`, line.manufacturability, stored.manufacturability, stored.manufacturability))
    }
    if (
      line.options !== undefined &&
      !sameOptions(line.options, stored.options ?? []) && !sameOptions(line.options, result.options ?? [])
    ) {
      found.push(disagreement(`${at}options`, line.options, result.options, stored.options))
    }
  }
  return found
}

/** Refuses a replacement whose engine's fields disagree (disagreements): one 422 naming each. */
export const checkDisagreements = (quote: Quote, sent: Replacement, made: Pick<Quote, "lines" | "total">) => {
  const found = disagreements(quote, sent, made)
  return found.length === 0 ? Effect.void : Effect.fail(
    EngineError.invalid(`${found.join("; ")}: the engine sets these; send them as read, or leave them out`)
  )
}

/**
 * A new `validUntil` for the quote: never before it was made, and only in
 * the future (`now`); the one it has may be sent back as it is (422 naming
 * `validUntil` otherwise).
 */
export const checkValidUntil = (quote: Quote, validUntil: string, now: number) => {
  const until = Date.parse(validUntil)
  if (until < Date.parse(quote.createdAt)) {
    return Effect.fail(EngineError.invalid(`validUntil: ${validUntil} is before ${quoteLabel(quote)} was made (${quote.createdAt})`))
  }
  if (until !== Date.parse(quote.validUntil) && until <= now) {
    return Effect.fail(
      EngineError.invalid(`validUntil: ${validUntil} has passed (it is ${new Date(now).toISOString()}): a quote's validity can be set only to the future`)
    )
  }
  return Effect.void
}
