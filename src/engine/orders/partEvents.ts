/**
 * The events of a write of a part (ticket model), in the write's
 * transaction: `ticket_model.created` for a new part; `ticket_model.analysed`
 * when the part takes a model new to it whose geometry is known (the
 * analysis of its own file, or of its catalogue model's); and
 * `ticket_model.priced` when the calculation gives it a price or production
 * times other than those it had. A model that cannot be analysed refuses the
 * write (422), so no part is ever stored with a failed analysis and
 * `ticket_model.analysis_failed` is never written (docs/events.md).
 */
import { Effect } from "effect"
import { isDeepStrictEqual } from "node:util"
import type { TicketModel } from "../../domain/resources/orders.ts"
import { recordEvent } from "../events/outbox.ts"
import type { OperationContext } from "../Operation.ts"
import type { RecordOf } from "../typedRecords.ts"
import { sameModel } from "./partModel.ts"

type Part = RecordOf<typeof TicketModel>

/** What the price calculation sets on a part. */
const priceOf = (part: Part) => ({ productionTimes: part.productionTimes, unitPrice: part.unitPrice, totalPrice: part.totalPrice })

/** Whether the write gave the part a price other than the one it had; a part left without one is not priced. */
const repriced = (part: Part, previous: Part | undefined) =>
  part.unitPrice !== null && (previous === undefined || !isDeepStrictEqual(priceOf(part), priceOf(previous)))

/** The events of the part's write: `part` as stored, `previous` the version it replaced (undefined for a new part). */
export const recordPartEvents = Effect.fnUntraced(function*(context: OperationContext, part: Part, previous: Part | undefined) {
  const object = { object: part }
  if (previous === undefined) yield* recordEvent(context.appId, "ticket_model.created", object)
  const newModel = previous === undefined || !sameModel(previous, part)
  if (newModel && part.geometry !== null) yield* recordEvent(context.appId, "ticket_model.analysed", object)
  if (repriced(part, previous)) yield* recordEvent(context.appId, "ticket_model.priced", object)
})
