/**
 * Quote expiry by time. A sent quote whose `validUntil` has passed reads as
 * expired from that instant on (quoteState.ts `asRead`), though nothing runs
 * at that instant; this sweep then stores the state it reads as, `expired`,
 * and writes its `ticket_quote.expired` event, so that integrators hear of
 * it. The relay runs it periodically (src/engine/events/relay.ts). Reads
 * answer the same before and after: a quote read as expired stays expired.
 */
import { Effect } from "effect"
import { TicketQuote } from "../../domain/resources/orders.ts"
import type { Step } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { inTransaction } from "../transaction.ts"
import { asRecord } from "../typedRecords.ts"
import { writeQuote } from "./quoteState.ts"

/** Quotes per transaction: the rows (and tickets) a batch locks are held only that long. */
export const EXPIRY_BATCH = 100

/**
 * One transaction: up to EXPIRY_BATCH sent quotes of any app whose validity
 * ended by `now`, each stored `expired` with its event. A quote is locked
 * with its ticket, the lock every move of a ticket's quotes takes first
 * (ticketState.ts), so an acceptance under way is never overwritten: the
 * quotes and tickets another transaction holds are skipped (`SKIP LOCKED`),
 * left to the next sweep, and the rows taken are read as they are once
 * locked. Answers how many it moved.
 */
const expireBatch = (now: Date): Step<number> =>
  inTransaction(Effect.gen(function*() {
    const rows = yield* (yield* RecordRepository).lockExpiredQuotes(now, EXPIRY_BATCH)
    for (const row of rows) {
      const quote = asRecord(TicketQuote, row.data)
      yield* writeQuote(row.app_id, quote, { ...quote, state: "expired" })
    }
    return rows.length
  }))

/**
 * Moves every app's sent quotes whose validity has passed to `expired`, in
 * batches of EXPIRY_BATCH, each its own transaction; answers how many it
 * moved. The instant is the sweep's start, so the sweep ends however many
 * quotes expire while it runs (the next sweep takes them).
 */
export const expireQuotes: Step<number> = Effect.gen(function*() {
  const now = new Date()
  let moved = 0
  for (;;) {
    const batch = yield* expireBatch(now)
    moved += batch
    if (batch < EXPIRY_BATCH) return moved
  }
})
