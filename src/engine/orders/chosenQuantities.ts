/**
 * The quantities an acceptance chose, taken by their parts: each part whose
 * quote line was accepted at another of its options' quantities is written
 * at that quantity and priced again (its `unitPrice`, `totalPrice` and
 * `productionTimes` at it, from the app's records as they are now), in the
 * acceptance's transaction, its ticket locked already.
 *
 * This write is the acceptance's own, not a change of the ticket's parts:
 * it does not supersede the quote being accepted or return the ticket to
 * draft (ticketState.ts's `ticketsChanged` is not run). Its events follow a
 * part write's rules (partEvents.ts): `ticket_model.priced` when the price
 * changes.
 */
import { Effect } from "effect"
import { TicketModel } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import type { OperationContext } from "../Operation.ts"
import { pricePart } from "../pricing/pricePart.ts"
import { asRecord, getRecord } from "../typedRecords.ts"
import { replaceLocked } from "../writes.ts"
import { recordPartEvents } from "./partEvents.ts"
import type { Quote } from "./quoteState.ts"

type QuoteLine = Quote["lines"][number]

/** The part set to `quantity` and priced at it. */
const setQuantity = Effect.fnUntraced(function*(context: OperationContext, id: string, quantity: number) {
  const part = yield* getRecord(TicketModel, context.appId, id)
  const priced = yield* pricePart(context, { ...part, quantity })
  const replaced = yield* replaceLocked(TicketModel.name, context.appId, id, priced)
  if (replaced === undefined) return yield* EngineError.notFound(TicketModel.name, id)
  yield* recordPartEvents(context, asRecord(TicketModel, replaced), part)
})

/** Each part of `accepted`'s lines at a quantity other than its line in `made` (the quote as it was sent) takes it. */
export const takeChosenQuantities = Effect.fnUntraced(function*(context: OperationContext, made: ReadonlyArray<QuoteLine>, accepted: ReadonlyArray<QuoteLine>) {
  const quantityOf = new Map(made.flatMap((line) => line.ticketModelId === undefined ? [] : [[line.ticketModelId, line.quantity] as const]))
  for (const line of accepted) {
    if (line.ticketModelId === undefined || quantityOf.get(line.ticketModelId) === line.quantity) continue
    yield* setQuantity(context, line.ticketModelId, line.quantity)
  }
})
