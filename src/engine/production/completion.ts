/**
 * How production finishes: a running or paused service job is done once
 * every one of its production records is done (its open interval closed),
 * and a ticket in production is completed once each of its parts is in a
 * service job and every job holding them is done.
 */
import { Effect } from "effect"
import { Ticket, TicketModel } from "../../domain/resources/orders.ts"
import { Pps, ServiceJob } from "../../domain/resources/production.ts"
import type { OperationContext } from "../Operation.ts"
import { moveTicket } from "../orders/ticketState.ts"
import { findRecord, listRecords } from "../typedRecords.ts"
import { closeInterval, type Job, type PpsRecord, saveJob } from "./jobs.ts"
import { recordsOf } from "./pps.ts"
import { listAll, unique } from "./store.ts"

/** Completes the ticket when it is in production and all of its parts are made. */
const completeTicket = Effect.fnUntraced(function*(context: OperationContext, ticketId: string) {
  const ticket = yield* findRecord(Ticket, context.appId, ticketId)
  if (ticket === undefined || ticket.state !== "in_production") return
  const parts = yield* listRecords(TicketModel, context.appId, { ticketId })
  if (parts.length === 0) return
  const records = (yield* listRecords(Pps, context.appId, { ticketModelId: parts.map((part) => part.id) }))
    .filter((record) => record.serviceJobId !== null)
  // A part in no job is not made yet.
  if (!parts.every((part) => records.some((record) => record.ticketModelId === part.id))) return
  const jobs = yield* listAll(ServiceJob, context.appId, { ids: unique(records.map((record) => record.serviceJobId!)) })
  if (jobs.every((job) => job.state === "done")) yield* moveTicket(context, ticket, "completed")
})

/** The tickets whose parts the records make (and the job's own ticket), each checked for completion. */
const completeTickets = Effect.fnUntraced(function*(context: OperationContext, job: Job, records: ReadonlyArray<PpsRecord>) {
  const ticketIds = new Set<string>(job.ticketId === undefined ? [] : [job.ticketId])
  for (const record of records) {
    const part = yield* findRecord(TicketModel, context.appId, record.ticketModelId)
    if (part !== undefined) ticketIds.add(part.ticketId)
  }
  for (const ticketId of ticketIds) yield* completeTicket(context, ticketId)
})

/** The job, done when it is running or paused and all of its records are done; else as it is. */
export const settleJob = Effect.fnUntraced(function*(context: OperationContext, job: Job) {
  if (job.state !== "running" && job.state !== "paused") return job
  const records = yield* recordsOf(context, job.id)
  if (records.length === 0 || records.some((record) => record.state !== "done")) return job
  const done = yield* saveJob(context, job, { ...closeInterval(job, new Date().toISOString()), state: "done" })
  yield* completeTickets(context, done, records)
  return done
})
