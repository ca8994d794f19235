/**
 * The production (PPS) records of the parts in service jobs. A part has one
 * record outside done jobs: it moves with the part (a merge, a reassignment,
 * a replace that takes the part out of one job and into another) and keeps
 * its progress while the part is in no job (`serviceJobId: null`), so taking
 * a part out of a job and putting it back loses nothing. A done job keeps
 * its records; a part made again later gets a new one.
 */
import { Effect } from "effect"
import { TicketModel } from "../../domain/resources/orders.ts"
import { Pps } from "../../domain/resources/production.ts"
import type { OperationContext } from "../Operation.ts"
import { findRecord, listRecords } from "../typedRecords.ts"
import type { Job, PpsRecord } from "./jobs.ts"
import { insertRecord, replaceRecord } from "./store.ts"

/** The records of the job's parts, as they are stored now. */
export const recordsOf = (context: OperationContext, jobId: string) => listRecords(Pps, context.appId, { serviceJobId: jobId })

const moveRecord = (context: OperationContext, record: PpsRecord, serviceJobId: string | null) =>
  replaceRecord(Pps, context.appId, record.id, { ...record, serviceJobId })

/** Gives the part its record in the job: the one it has there, else the one it kept in no job, else a new planned one. */
const attach = Effect.fnUntraced(function*(context: OperationContext, jobId: string, partId: string) {
  const records = yield* listRecords(Pps, context.appId, { ticketModelId: partId })
  if (records.some((record) => record.serviceJobId === jobId)) return
  const kept = records.find((record) => record.serviceJobId === null)
  if (kept !== undefined) {
    yield* moveRecord(context, kept, jobId)
    return
  }
  const part = yield* findRecord(TicketModel, context.appId, partId)
  yield* insertRecord(Pps, context.appId, {
    serviceJobId: jobId,
    ticketModelId: partId,
    quantity: part?.quantity ?? 1,
    state: "planned",
    producedQuantity: 0,
    scrappedQuantity: 0
  })
})

/** Makes the job's records match its parts: one per part; a part that left keeps its record, in no job. */
export const syncPps = Effect.fnUntraced(function*(context: OperationContext, job: Job) {
  for (const record of yield* recordsOf(context, job.id)) {
    if (!job.ticketModelIds.includes(record.ticketModelId)) yield* moveRecord(context, record, null)
  }
  for (const partId of job.ticketModelIds) yield* attach(context, job.id, partId)
})

/** The job's records leave it (it is deleted): each stays with its part, in no job. */
export const releasePps = Effect.fnUntraced(function*(context: OperationContext, jobId: string) {
  for (const record of yield* recordsOf(context, jobId)) yield* moveRecord(context, record, null)
})

/** Moves the records of `parts` (all of them when undefined) from one job to another. */
export const movePps = Effect.fnUntraced(function*(context: OperationContext, fromId: string, toId: string, parts?: ReadonlyArray<string>) {
  for (const record of yield* recordsOf(context, fromId)) {
    if (parts === undefined || parts.includes(record.ticketModelId)) yield* moveRecord(context, record, toId)
  }
})
