/**
 * A ticket's state as its parts, items and quotes see it: the row lock that
 * orders the moves of one ticket, the moves (each with its event, written in
 * the move's transaction), and the rule that its parts and items change only
 * while it is `draft` or `quoted` (a change while quoted supersedes its open
 * quotes and returns it to `draft`).
 */
import { Effect } from "effect"
import type { EventType } from "../../domain/events/types.ts"
import { Ticket, type TicketState } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import { recordEvent } from "../events/outbox.ts"
import type { OperationContext, Step } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { asRecord, findRecord, type RecordOf } from "../typedRecords.ts"
import { replaceLocked } from "../writes.ts"
import { closeOpenQuotes } from "./quoteState.ts"

export type TicketRecord = RecordOf<typeof Ticket>
type State = typeof TicketState.Type

/** How messages name a ticket: its number (T-000042). */
export const ticketLabel = (ticket: TicketRecord) => `ticket ${ticket.number}`

/**
 * The app's ticket, its row locked until the transaction ends. Every move
 * of a ticket (a quote, its acceptance, a cancel, a change of its parts or
 * items) takes this lock first, so two moves of one ticket run one after the
 * other and the second sees the state the first left. Runs in a transaction.
 */
export const lockTicket = Effect.fnUntraced(function*(context: OperationContext, id: string) {
  const data = yield* (yield* RecordRepository).lockForRemoval(Ticket.name, context.appId, id)
  return data === undefined ? undefined : asRecord(Ticket, data)
})

/** The locked ticket, or the engine's 404 naming it. */
export const getLockedTicket = (context: OperationContext, id: string): Step<TicketRecord> =>
  Effect.flatMap(lockTicket(context, id), (ticket) => ticket === undefined ? Effect.fail(EngineError.notFound("ticket", id)) : Effect.succeed(ticket))

/**
 * The event of each move a ticket announces, by the state it reaches. Its
 * return to `draft` (a change of its parts or items while quoted) has none:
 * the `ticket_quote.superseded` of its open quotes says it.
 */
const MOVE_EVENTS = {
  quoted: "ticket.quoted",
  accepted: "ticket.accepted",
  in_production: "ticket.in_production",
  completed: "ticket.completed",
  cancelled: "ticket.cancelled"
} as const satisfies { readonly [S in Exclude<State, "draft">]: EventType }

/**
 * Moves a ticket to `state` (whole-record replace of the stored ticket) and
 * writes the move's event: every move of a ticket goes through here, in the
 * transaction of the operation that makes it.
 */
export const moveTicket = Effect.fnUntraced(function*(context: OperationContext, ticket: TicketRecord, state: State) {
  const stored = yield* replaceLocked(Ticket.name, context.appId, ticket.id, { ...ticket, state })
  if (stored === undefined) return yield* EngineError.notFound("ticket", ticket.id)
  const moved = asRecord(Ticket, stored)
  if (state !== "draft" && state !== ticket.state) {
    yield* recordEvent(context.appId, MOVE_EVENTS[state], { object: moved, previousState: ticket.state })
  }
  return moved
})

/** States in which a ticket's parts and items can be created, replaced or deleted. */
const OPEN_FOR_CHANGES: ReadonlyArray<State> = ["draft", "quoted"]

const closedForChanges = (ticket: TicketRecord) =>
  EngineError.conflict(`${ticketLabel(ticket)} is ${ticket.state}: its parts and items can change only while it is draft or quoted`)

/**
 * Refuses early (before a model download or a price calculation) a write of
 * a part or item whose tickets are not draft or quoted. A ticket the app
 * does not have is the reference check's to refuse.
 */
export const checkOpenForChanges = Effect.fnUntraced(function*(context: OperationContext, ticketIds: ReadonlyArray<string>) {
  for (const id of new Set(ticketIds)) {
    const ticket = yield* findRecord(Ticket, context.appId, id)
    if (ticket !== undefined && !OPEN_FOR_CHANGES.includes(ticket.state)) return yield* closedForChanges(ticket)
  }
})

/**
 * In the transaction of a write of a part or item: its tickets locked (in
 * id order, so two writes never wait on each other crosswise) and refused
 * unless draft or quoted. A quoted ticket's open quotes no longer price what
 * it holds: they are superseded, and the ticket returns to draft.
 */
export const ticketsChanged = Effect.fnUntraced(function*(context: OperationContext, ticketIds: ReadonlyArray<string>) {
  for (const id of [...new Set(ticketIds)].sort()) {
    const ticket = yield* lockTicket(context, id)
    if (ticket === undefined) continue
    if (!OPEN_FOR_CHANGES.includes(ticket.state)) return yield* closedForChanges(ticket)
    if (ticket.state === "quoted") {
      yield* closeOpenQuotes(context, id, "superseded")
      yield* moveTicket(context, ticket, "draft")
    }
  }
})
