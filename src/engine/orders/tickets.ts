/**
 * Tickets. A ticket moves
 *   draft → quoted (a quote is sent) → accepted (its quote is accepted)
 *         → in_production (sent to production) → completed,
 * and to cancelled from draft, quoted or accepted (`PUT /ticket/{id}/cancel`,
 * which withdraws its open quotes). A PUT of the ticket keeps its state: only
 * the workflows move it. See docs/workflows-orders.md.
 */
import { Effect } from "effect"
import { Ticket } from "../../domain/resources/orders.ts"
import { recordHandlers, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import { type PrepareInput } from "../typedRecords.ts"
import { quote } from "./quotes.ts"
import { closeOpenQuotes } from "./quoteState.ts"
import { getLockedTicket, lockTicket, moveTicket, ticketLabel, type TicketRecord } from "./ticketState.ts"

const prepareTicket = (_context: OperationContext, input: PrepareInput<typeof Ticket>, previous: TicketRecord | undefined) =>
  Effect.succeed({ ...input, state: previous?.state ?? "draft" })

const tickets = recordHandlers(Ticket, { prepare: prepareTicket })

/** States a ticket can be cancelled from: nothing of it is in production yet. */
const CANCELLABLE: ReadonlyArray<TicketRecord["state"]> = ["draft", "quoted", "accepted"]

/** `PUT /ticket/{id}/cancel`: the ticket cancelled and its open quotes withdrawn, together. */
const cancel: GroupHandlers<"ticket">["cancel"] = Effect.fnUntraced(function*(context, { params: { id } }) {
  const ticket = yield* getLockedTicket(context, id)
  if (!CANCELLABLE.includes(ticket.state)) {
    return yield* EngineError.conflict(`${ticketLabel(ticket)} is ${ticket.state}: only a draft, quoted or accepted ticket can be cancelled`)
  }
  yield* closeOpenQuotes(context, id, "withdrawn")
  return yield* moveTicket(context, ticket, "cancelled")
})

/**
 * `PUT /ticket/{id}` with the ticket locked, so that the state it keeps is
 * the one the last move left, not one a concurrent move has replaced.
 */
const replace: GroupHandlers<"ticket">["replace"] = (context, input) => Effect.andThen(lockTicket(context, input.params.id), tickets.replace(context, input))

/** The ticket group's handlers, but for `sendToProduction` (production's). */
export const ticketHandlers: Omit<GroupHandlers<"ticket">, "sendToProduction"> = {
  lookup: tickets.lookup,
  create: tickets.create,
  replace: transactional(replace),
  quote,
  cancel: transactional(cancel)
}
