/** The types of event the engine writes (src/domain/events/catalogue.ts gives each its data). */
import { Schema } from "effect"

export const EVENT_TYPES = [
  "ticket.quoted",
  "ticket.accepted",
  "ticket.in_production",
  "ticket.completed",
  "ticket.cancelled",
  "ticket_quote.sent",
  "ticket_quote.accepted",
  "ticket_quote.rejected",
  "ticket_quote.superseded",
  "ticket_quote.expired",
  "ticket_model.created",
  "ticket_model.analysed",
  "ticket_model.analysis_failed",
  "ticket_model.priced",
  "service_job.created",
  "service_job.started",
  "service_job.paused",
  "service_job.stopped",
  "service_job.done",
  "service_job.merged",
  "service_job.reassigned",
  "pps.updated",
  "reel.low",
  "endpoint.disabled",
  "endpoint.test"
] as const

export type EventType = (typeof EVENT_TYPES)[number]

export const EventTypeSchema = Schema.Literals(EVENT_TYPES).annotate({
  identifier: "EventType",
  description: "An event's type: `<resource>.<change>`"
})
