/**
 * The event catalogue: every state change the engine announces, by type, with
 * the schema of its `data`. An event's `data.object` is the record as a read
 * of it answers right after the change; `previousState` is the state it left
 * (for the events that move a state). GET /v1/event answers them, and a
 * webhook delivery's body is one of them (docs/webhooks.md).
 */
import { Schema } from "effect"
import { Ticket, TicketModel, TicketQuote, TicketState } from "../resources/orders.ts"
import { Pps, Reel, ServiceJob, ServiceJobState } from "../resources/production.ts"
import { WebhookEndpoint } from "../resources/webhooks.ts"
import type { EventType } from "./types.ts"

const QuoteState = TicketQuote.record.fields.state

const change = <Record extends Schema.Top, State extends Schema.Top>(object: Record, previousState: State) =>
  Schema.Struct({
    object: object.annotate({ description: "The record as read right after the change" }),
    previousState: Schema.optional(previousState.annotate({ description: "The state the record left" }))
  })

const recordOnly = <Record extends Schema.Top>(object: Record) =>
  Schema.Struct({ object: object.annotate({ description: "The record as read right after the change" }) })

const ticketChange = change(Ticket.record, TicketState)
const quoteChange = change(TicketQuote.record, QuoteState)
const jobChange = change(ServiceJob.record, ServiceJobState)

/** What a part's failed analysis says: the error an analysis answers with. */
const AnalysisFailure = Schema.Struct({
  object: TicketModel.record.annotate({ description: "The part as read right after the analysis" }),
  error: Schema.Struct({ code: Schema.String, message: Schema.String }).annotate({
    description: "Why the model could not be analysed (the code and message a part's creation answers with when it fails)"
  })
})

export const EVENT_DATA = {
  "ticket.quoted": ticketChange,
  "ticket.accepted": ticketChange,
  "ticket.in_production": ticketChange,
  "ticket.completed": ticketChange,
  "ticket.cancelled": ticketChange,
  "ticket_quote.sent": quoteChange,
  "ticket_quote.accepted": quoteChange,
  "ticket_quote.rejected": quoteChange,
  "ticket_quote.superseded": quoteChange,
  "ticket_quote.expired": quoteChange,
  "ticket_model.created": recordOnly(TicketModel.record),
  "ticket_model.analysed": recordOnly(TicketModel.record),
  "ticket_model.analysis_failed": AnalysisFailure,
  "ticket_model.priced": recordOnly(TicketModel.record),
  "service_job.created": recordOnly(ServiceJob.record),
  "service_job.started": jobChange,
  "service_job.paused": jobChange,
  "service_job.stopped": jobChange,
  "service_job.done": jobChange,
  "service_job.merged": Schema.Struct({
    ...jobChange.fields,
    mergedIntoId: Schema.String.annotate({ description: "The job this one was folded into" })
  }),
  "service_job.reassigned": Schema.Struct({
    ...recordOnly(ServiceJob.record).fields,
    ticketModelIds: Schema.Array(Schema.String).annotate({ description: "The parts moved into this job" }),
    fromServiceJobIds: Schema.Array(Schema.String).annotate({ description: "The jobs the parts left" })
  }),
  "pps.updated": recordOnly(Pps.record),
  "reel.low": Schema.Struct({
    ...recordOnly(Reel.record).fields,
    threshold: Schema.Finite.annotate({ description: "The reel group's `lowWeightThreshold` (grams) the reel's weight fell under" })
  }),
  "endpoint.disabled": Schema.Struct({
    object: WebhookEndpoint.record.annotate({ description: "The endpoint as read right after it was disabled" }),
    reason: Schema.String.annotate({ description: "Why: the delivery that failed its last attempt" })
  }),
  "endpoint.test": Schema.Struct({
    endpointId: Schema.String.annotate({ description: "The endpoint the test was sent to (only to it)" })
  })
} as const satisfies { readonly [T in EventType]: Schema.Top }

export type EventData<T extends EventType> = (typeof EVENT_DATA)[T]["Type"]
