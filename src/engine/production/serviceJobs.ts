/**
 * Service jobs and PPS records: a job gathers parts of one technology; each
 * part in a job has one PPS record (planned quantity, produced, scrapped).
 * A job's state: queued → running ⇄ paused, → merged (into another job);
 * `done` is kept for jobs closed by an operator (PUT of the record keeps the
 * state, so only the engine moves it).
 */
import { Effect } from "effect"
import { toDateFilters } from "../../domain/Resource.ts"
import { Ticket, TicketModel, type TicketState } from "../../domain/resources/orders.ts"
import { MachineGroup, Pps, ServiceJob, type ServiceJobProduction } from "../../domain/resources/production.ts"
import {
  findRecord,
  getRecord,
  listRecords,
  type PrepareInput,
  recordHandlers,
  type RecordHooks,
  type RecordOf,
  type StoredFields,
  transactional
} from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext, Step } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { insertRecord, listAll, replaceRecord, unique } from "./store.ts"

type Job = RecordOf<typeof ServiceJob>
type PpsRecord = RecordOf<typeof Pps>
type ServiceJobHandlers = GroupHandlers<"serviceJob">

/**
 * A job's fields before it is stored: its parts must exist for the app. A new
 * job is queued with an empty timeline; a replace keeps the state, timeline
 * and time the engine set on the stored job.
 */
const prepareJob = (context: OperationContext, input: PrepareInput<typeof ServiceJob>, previous: Job | undefined): Step<StoredFields<typeof ServiceJob>> =>
  Effect.gen(function*() {
    for (const partId of input.ticketModelIds) {
      if ((yield* findRecord(TicketModel, context.appId, partId)) === undefined) {
        return yield* EngineError.unknownReference("ticketModelIds", "ticketModel", partId)
      }
    }
    return previous === undefined
      ? { ...input, state: "queued", timeline: [], totalTime: 0 }
      : { ...input, state: previous.state, timeline: previous.timeline, totalTime: previous.totalTime }
  })

const serviceJobHooks: RecordHooks<typeof ServiceJob> = {
  prepare: prepareJob,
  // In the job's own transaction: its PPS records follow its parts, and go with it.
  written: (context, job) => syncPps(context, job),
  removed: (context, job) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      for (const pps of yield* listRecords(Pps, context.appId, { serviceJobId: job.id })) {
        yield* records.remove(Pps.name, context.appId, pps.id)
      }
    })
}

/** The PPS record of a part in a job: planned, for the part's quantity. */
const newPps = (context: OperationContext, serviceJobId: string, partId: string) =>
  Effect.gen(function*() {
    const part = yield* findRecord(TicketModel, context.appId, partId)
    return yield* insertRecord(Pps, context.appId, {
      serviceJobId,
      ticketModelId: partId,
      quantity: part?.quantity ?? 1,
      state: "planned",
      producedQuantity: 0,
      scrappedQuantity: 0
    })
  })

/** Makes the job's PPS records match its parts: one per part, none for parts that left. */
const syncPps = (context: OperationContext, job: Job) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const existing = yield* listRecords(Pps, context.appId, { serviceJobId: job.id })
    for (const pps of existing) {
      if (!job.ticketModelIds.includes(pps.ticketModelId)) yield* records.remove(Pps.name, context.appId, pps.id)
    }
    const covered = new Set(existing.map((pps) => pps.ticketModelId))
    for (const partId of job.ticketModelIds) {
      if (!covered.has(partId)) yield* newPps(context, job.id, partId)
    }
  })

const findJob = (context: OperationContext, id: string) =>
  Effect.flatMap(
    findRecord(ServiceJob, context.appId, id),
    (job) => job === undefined ? Effect.fail(EngineError.notFound("service job", id)) : Effect.succeed(job)
  )

const save = (context: OperationContext, job: Job) =>
  Effect.flatMap(
    replaceRecord(ServiceJob, context.appId, job.id, job),
    (saved) => saved === undefined ? Effect.fail(EngineError.notFound("service job", job.id)) : Effect.succeed(saved)
  )

const seconds = (from: string, to: string) => Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000)

/** The job with its open interval closed, its seconds added to `totalTime`. */
const closeInterval = (job: Job, now: string): Job => {
  const open = job.timeline.at(-1)
  if (open === undefined || open.stoppedAt !== null) return job
  return {
    ...job,
    timeline: [...job.timeline.slice(0, -1), { startedAt: open.startedAt, stoppedAt: now }],
    totalTime: job.totalTime + seconds(open.startedAt, now)
  }
}

const startTimeline: ServiceJobHandlers["startTimeline"] = (context, { params: { id } }) =>
  Effect.gen(function*() {
    const job = yield* findJob(context, id)
    if (job.state === "running" || job.state === "done" || job.state === "merged") {
      return yield* EngineError.conflict(`service job ${id} is ${job.state}: its timeline cannot start`)
    }
    const now = new Date().toISOString()
    return yield* save(context, { ...job, state: "running", timeline: [...job.timeline, { startedAt: now, stoppedAt: null }] })
  })

const stopTimeline: ServiceJobHandlers["stopTimeline"] = (context, { params: { id } }) =>
  Effect.gen(function*() {
    const job = yield* findJob(context, id)
    if (job.state !== "running") {
      return yield* EngineError.conflict(`service job ${id} is ${job.state}: only a running timeline can stop`)
    }
    return yield* save(context, { ...closeInterval(job, new Date().toISOString()), state: "paused" })
  })

/** Refuses a job that is merged or done: it cannot give or take parts. */
const open = (job: Job) =>
  job.state === "merged" || job.state === "done" ? Effect.fail(EngineError.conflict(`service job ${job.id} is ${job.state}`)) : Effect.void

const sameTechnology = (target: Job, other: Job) =>
  target.technologyId === other.technologyId
    ? Effect.void
    : Effect.fail(EngineError.invalid(
      `service job ${other.id} is ${other.technologyId}, service job ${target.id} is ${target.technologyId}: jobs of different technologies cannot share parts`
    ))

/** Moves the PPS records of `parts` (all of them when undefined) from one job to another. */
const movePps = (context: OperationContext, fromId: string, toId: string, parts?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    for (const pps of yield* listRecords(Pps, context.appId, { serviceJobId: fromId })) {
      if (parts === undefined || parts.includes(pps.ticketModelId)) {
        yield* replaceRecord(Pps, context.appId, pps.id, { ...pps, serviceJobId: toId })
      }
    }
  })

const merge: ServiceJobHandlers["merge"] = (context, { payload: { targetServiceJobId, sourceServiceJobIds } }) =>
  Effect.gen(function*() {
    const target = yield* findJob(context, targetServiceJobId)
    const sourceIds = unique(sourceServiceJobIds)
    if (sourceIds.includes(targetServiceJobId)) {
      return yield* EngineError.invalid(`service job ${targetServiceJobId} cannot be merged into itself`)
    }
    const sources: Array<Job> = []
    for (const id of sourceIds) sources.push(yield* findJob(context, id))
    yield* open(target)
    for (const source of sources) {
      yield* open(source)
      yield* sameTechnology(target, source)
    }
    const now = new Date().toISOString()
    let parts = target.ticketModelIds
    for (const source of sources) {
      parts = unique([...parts, ...source.ticketModelIds])
      yield* movePps(context, source.id, target.id)
      // A running source stops first: its time stays its own.
      yield* save(context, { ...closeInterval(source, now), state: "merged", ticketModelIds: [] })
    }
    return yield* save(context, { ...target, ticketModelIds: parts })
  })

const reassign: ServiceJobHandlers["reassignTicketModels"] = (context, { payload }) =>
  Effect.gen(function*() {
    const from = yield* findJob(context, payload.fromServiceJobId)
    const to = yield* findJob(context, payload.toServiceJobId)
    if (from.id === to.id) return yield* EngineError.invalid(`service job ${from.id} is both source and target`)
    yield* open(from)
    yield* open(to)
    yield* sameTechnology(to, from)
    const moving = unique(payload.ticketModelIds)
    for (const partId of moving) {
      if (!from.ticketModelIds.includes(partId)) {
        return yield* EngineError.invalid(`ticket model ${partId} is not in service job ${from.id}`)
      }
    }
    yield* movePps(context, from.id, to.id, moving)
    const savedFrom = yield* save(context, { ...from, ticketModelIds: from.ticketModelIds.filter((id) => !moving.includes(id)) })
    const savedTo = yield* save(context, { ...to, ticketModelIds: unique([...to.ticketModelIds, ...moving]) })
    return [savedFrom, savedTo]
  })

const total = (pps: ReadonlyArray<PpsRecord>, field: "quantity" | "producedQuantity" | "scrappedQuantity") =>
  pps.reduce((sum, record) => sum + record[field], 0)

const productionOf = (job: Job, pps: ReadonlyArray<PpsRecord>): typeof ServiceJobProduction.Type => ({
  serviceJobId: job.id,
  state: job.state,
  quantity: total(pps, "quantity"),
  producedQuantity: total(pps, "producedQuantity"),
  scrappedQuantity: total(pps, "scrappedQuantity"),
  pps
})

const production: ServiceJobHandlers["production"] = (context, { params: { id } }) =>
  Effect.gen(function*() {
    const job = yield* findRecord(ServiceJob, context.appId, id)
    // The spec's empty 200 for a job the app does not have.
    if (job === undefined) return null
    return productionOf(job, yield* listRecords(Pps, context.appId, { serviceJobId: id }))
  })

const updateProduction: ServiceJobHandlers["updateProduction"] = (context, { params: { id, ppsId }, payload: progress }) =>
  Effect.gen(function*() {
    yield* findJob(context, id)
    const pps = yield* findRecord(Pps, context.appId, ppsId)
    if (pps === undefined || pps.serviceJobId !== id) {
      return yield* EngineError.notFound("pps", `${ppsId} of service job ${id}`)
    }
    const done = progress.producedQuantity + progress.scrappedQuantity
    if (done > pps.quantity) {
      return yield* EngineError.invalid(`producedQuantity + scrappedQuantity (${done}) exceeds the quantity ${pps.quantity} of pps ${ppsId}`)
    }
    const saved = yield* replaceRecord(Pps, context.appId, ppsId, {
      ...pps,
      state: progress.state,
      producedQuantity: progress.producedQuantity,
      scrappedQuantity: progress.scrappedQuantity
    })
    return saved ?? (yield* EngineError.notFound("pps", ppsId))
  })

const listProductions: GroupHandlers<"serviceJobProduction">["list"] = (context, { query }) =>
  Effect.gen(function*() {
    const jobs = yield* listAll(ServiceJob, context.appId, {
      ids: query.serviceJobIds,
      equals: query.state === undefined ? {} : { state: query.state },
      dates: toDateFilters(query)
    })
    if (jobs.length === 0) return []
    const pps = yield* listRecords(Pps, context.appId, { serviceJobId: jobs.map((job) => job.id) })
    return jobs.map((job) => productionOf(job, pps.filter((record) => record.serviceJobId === job.id)))
  })

const SENDABLE: ReadonlyArray<typeof TicketState.Type> = ["draft", "quoted", "accepted"]

/** The ticket's parts by technology, in the order they were read. */
const byTechnology = (parts: ReadonlyArray<RecordOf<typeof TicketModel>>) => {
  const groups = new Map<string, Array<RecordOf<typeof TicketModel>>>()
  for (const part of parts) groups.set(part.technologyId, [...(groups.get(part.technologyId) ?? []), part])
  return groups
}

/**
 * PUT /ticket/{id}/send-to-production: one service job per technology (in
 * the app's first machine group of that technology, if any), a PPS record
 * per part; the ticket moves to `in_production`.
 */
const sendToProductionOnce: GroupHandlers<"ticket">["sendToProduction"] = (context, { params: { id } }) =>
  Effect.gen(function*() {
    const ticket = yield* getRecord(Ticket, context.appId, id)
    const label = ticket.number
    if (!SENDABLE.includes(ticket.state)) {
      return yield* EngineError.conflict(
        `ticket ${label} is ${ticket.state}: only a draft, quoted or accepted ticket can be sent to production`
      )
    }
    const parts = yield* listRecords(TicketModel, context.appId, { ticketId: id })
    if (parts.length === 0) return yield* EngineError.invalid(`ticket ${label} has no parts to produce`)
    const jobs: Array<Job> = []
    for (const [technologyId, group] of byTechnology(parts)) {
      const [machineGroup] = yield* listAll(MachineGroup, context.appId, { equals: { technologyId: [technologyId] }, limit: 1 })
      const prepared = yield* prepareJob(context, {
        name: `${label} ${technologyId}`,
        technologyId,
        machineGroupId: machineGroup === undefined ? null : machineGroup.id,
        ticketId: id,
        ticketModelIds: group.map((part) => part.id),
        ...(ticket.dueDate === undefined ? {} : { dueDate: ticket.dueDate })
      }, undefined)
      const job = yield* insertRecord(ServiceJob, context.appId, prepared)
      for (const part of group) yield* newPps(context, job.id, part.id)
      jobs.push(job)
    }
    yield* replaceRecord(Ticket, context.appId, id, { ...ticket, state: "in_production" })
    return jobs
  })

const jobRecords = recordHandlers(ServiceJob, serviceJobHooks)

export const serviceJobHandlers: ServiceJobHandlers = {
  list: jobRecords.list,
  get: jobRecords.get,
  create: jobRecords.create,
  replace: jobRecords.replace,
  remove: jobRecords.remove,
  startTimeline,
  stopTimeline,
  // Each writes several jobs and their PPS records: all of it, or none.
  merge: transactional(merge),
  reassignTicketModels: transactional(reassign),
  production,
  updateProduction
}

export const serviceJobProductionHandlers: GroupHandlers<"serviceJobProduction"> = { list: listProductions }

/** The ticket, its jobs and their PPS records are written together, or not at all. */
export const sendToProduction = transactional(sendToProductionOnce)
