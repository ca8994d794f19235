/**
 * Service jobs and PPS records: a job gathers parts of one technology; each
 * part in a job has one PPS record (planned quantity, produced, scrapped).
 * A job's state: queued → running ⇄ paused, → merged (into another job);
 * `done` is kept for jobs closed by an operator (PUT of the record keeps the
 * state, so only the engine moves it).
 */
import { Effect } from "effect"
import { toDateFilters } from "../../domain/Resource.ts"
import { ServiceJob } from "../../domain/resources/production.ts"
import { crudOperations, type RecordHooks, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { Operation, OperationContext } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { listAll, param, strings, unique } from "./store.ts"

export const SERVICE_JOB = "serviceJob"

interface Interval {
  readonly startedAt: string
  readonly stoppedAt: string | null
}

const timelineOf = (job: StoredRecord): ReadonlyArray<Interval> => Array.isArray(job.timeline) ? (job.timeline as ReadonlyArray<Interval>) : []

const stateOf = (job: StoredRecord) => String(job.state ?? "queued")

export const serviceJobHooks: RecordHooks = {
  prepare: (context, input, previous) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      for (const partId of strings(input.ticketModelIds)) {
        if ((yield* records.find("ticketModel", context.appId, partId)) === undefined) {
          return yield* EngineError.unknownReference("ticketModelIds", "ticketModel", partId)
        }
      }
      return previous === undefined
        ? { ...input, state: "queued", timeline: [], totalTime: 0 }
        : input
    }),
  // In the job's own transaction: its PPS records follow its parts, and go with it.
  written: (context, job) => syncPps(context, job),
  removed: (context, job) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      for (const pps of yield* listAll("pps", context.appId, { serviceJobId: [String(job.id)] })) {
        yield* records.remove("pps", context.appId, String(pps.id))
      }
    })
}

/** The PPS record of a part in a job: planned, for the part's quantity. */
const newPps = (context: OperationContext, serviceJobId: string, partId: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const part = yield* records.find("ticketModel", context.appId, partId)
    const quantity = typeof part?.quantity === "number" ? part.quantity : 1
    return yield* records.insert("pps", context.appId, {
      serviceJobId,
      ticketModelId: partId,
      quantity,
      state: "planned",
      producedQuantity: 0,
      scrappedQuantity: 0
    })
  })

/** Makes the job's PPS records match its parts: one per part, none for parts that left. */
const syncPps = (context: OperationContext, job: StoredRecord) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const jobId = String(job.id)
    const parts = strings(job.ticketModelIds)
    const existing = yield* listAll("pps", context.appId, { serviceJobId: [jobId] })
    for (const pps of existing) {
      if (!parts.includes(String(pps.ticketModelId))) yield* records.remove("pps", context.appId, String(pps.id))
    }
    const covered = new Set(existing.map((pps) => String(pps.ticketModelId)))
    for (const partId of parts) {
      if (!covered.has(partId)) yield* newPps(context, jobId, partId)
    }
  })

const generic = crudOperations(ServiceJob, serviceJobHooks)

const findJob = (context: OperationContext, id: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const job = yield* records.find(SERVICE_JOB, context.appId, id)
    return job === undefined ? yield* EngineError.notFound("service job", id) : job
  })

const save = (context: OperationContext, job: StoredRecord) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const saved = yield* records.replace(SERVICE_JOB, context.appId, String(job.id), job)
    return saved ?? (yield* EngineError.notFound("service job", String(job.id)))
  })

const seconds = (from: string, to: string) => Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000)

/** The job with its open interval closed, its seconds added to `totalTime`. */
const closeInterval = (job: StoredRecord, now: string): StoredRecord => {
  const timeline = timelineOf(job)
  const open = timeline.at(-1)
  if (open === undefined || open.stoppedAt !== null) return job
  return {
    ...job,
    timeline: [...timeline.slice(0, -1), { startedAt: open.startedAt, stoppedAt: now }],
    totalTime: Number(job.totalTime ?? 0) + seconds(open.startedAt, now)
  }
}

const startTimeline: Operation = (context, request) =>
  Effect.gen(function*() {
    const id = param(request, "id")
    const job = yield* findJob(context, id)
    const state = stateOf(job)
    if (state === "running" || state === "done" || state === "merged") {
      return yield* EngineError.conflict(`service job ${id} is ${state}: its timeline cannot start`)
    }
    const now = new Date().toISOString()
    return yield* save(context, { ...job, state: "running", timeline: [...timelineOf(job), { startedAt: now, stoppedAt: null }] })
  })

const stopTimeline: Operation = (context, request) =>
  Effect.gen(function*() {
    const id = param(request, "id")
    const job = yield* findJob(context, id)
    const state = stateOf(job)
    if (state !== "running") {
      return yield* EngineError.conflict(`service job ${id} is ${state}: only a running timeline can stop`)
    }
    return yield* save(context, { ...closeInterval(job, new Date().toISOString()), state: "paused" })
  })

/** Refuses a job that is merged or done: it cannot give or take parts. */
const open = (job: StoredRecord) =>
  Effect.gen(function*() {
    const state = stateOf(job)
    if (state === "merged" || state === "done") {
      return yield* EngineError.conflict(`service job ${String(job.id)} is ${state}`)
    }
  })

const sameTechnology = (target: StoredRecord, other: StoredRecord) =>
  target.technologyId === other.technologyId
    ? Effect.void
    : Effect.fail(EngineError.invalid(
      `service job ${String(other.id)} is ${String(other.technologyId)}, service job ${String(target.id)} is ${
        String(target.technologyId)
      }: jobs of different technologies cannot share parts`
    ))

/** Moves the PPS records of `parts` (all of them when undefined) from one job to another. */
const movePps = (context: OperationContext, fromId: string, toId: string, parts?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    for (const pps of yield* listAll("pps", context.appId, { serviceJobId: [fromId] })) {
      if (parts === undefined || parts.includes(String(pps.ticketModelId))) {
        yield* records.replace("pps", context.appId, String(pps.id), { ...pps, serviceJobId: toId })
      }
    }
  })

interface MergePayload {
  readonly targetServiceJobId: string
  readonly sourceServiceJobIds: ReadonlyArray<string>
}

const merge: Operation = (context, request) =>
  Effect.gen(function*() {
    const payload = request.payload as MergePayload
    const target = yield* findJob(context, payload.targetServiceJobId)
    const sourceIds = unique(payload.sourceServiceJobIds)
    if (sourceIds.includes(payload.targetServiceJobId)) {
      return yield* EngineError.invalid(`service job ${payload.targetServiceJobId} cannot be merged into itself`)
    }
    const sources: Array<StoredRecord> = []
    for (const id of sourceIds) sources.push(yield* findJob(context, id))
    yield* open(target)
    for (const source of sources) {
      yield* open(source)
      yield* sameTechnology(target, source)
    }
    const now = new Date().toISOString()
    let parts = strings(target.ticketModelIds)
    for (const source of sources) {
      parts = unique([...parts, ...strings(source.ticketModelIds)])
      yield* movePps(context, String(source.id), String(target.id))
      // A running source stops first: its time stays its own.
      yield* save(context, { ...closeInterval(source, now), state: "merged", ticketModelIds: [] })
    }
    return yield* save(context, { ...target, ticketModelIds: parts })
  })

interface ReassignPayload {
  readonly fromServiceJobId: string
  readonly toServiceJobId: string
  readonly ticketModelIds: ReadonlyArray<string>
}

const reassign: Operation = (context, request) =>
  Effect.gen(function*() {
    const payload = request.payload as ReassignPayload
    const from = yield* findJob(context, payload.fromServiceJobId)
    const to = yield* findJob(context, payload.toServiceJobId)
    if (from.id === to.id) return yield* EngineError.invalid(`service job ${String(from.id)} is both source and target`)
    yield* open(from)
    yield* open(to)
    yield* sameTechnology(to, from)
    const moving = unique(payload.ticketModelIds)
    const held = strings(from.ticketModelIds)
    for (const partId of moving) {
      if (!held.includes(partId)) {
        return yield* EngineError.invalid(`ticket model ${partId} is not in service job ${String(from.id)}`)
      }
    }
    yield* movePps(context, String(from.id), String(to.id), moving)
    const savedFrom = yield* save(context, { ...from, ticketModelIds: held.filter((id) => !moving.includes(id)) })
    const savedTo = yield* save(context, { ...to, ticketModelIds: unique([...strings(to.ticketModelIds), ...moving]) })
    return [savedFrom, savedTo]
  })

const total = (records: ReadonlyArray<StoredRecord>, field: string) =>
  records.reduce((sum, record) => sum + (typeof record[field] === "number" ? (record[field] as number) : 0), 0)

const productionOf = (job: StoredRecord, pps: ReadonlyArray<StoredRecord>) => ({
  serviceJobId: String(job.id),
  state: stateOf(job),
  quantity: total(pps, "quantity"),
  producedQuantity: total(pps, "producedQuantity"),
  scrappedQuantity: total(pps, "scrappedQuantity"),
  pps
})

const production: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const id = param(request, "id")
    const job = yield* records.find(SERVICE_JOB, context.appId, id)
    if (job === undefined) return null
    return productionOf(job, yield* listAll("pps", context.appId, { serviceJobId: [id] }))
  })

interface Progress {
  readonly state: string
  readonly producedQuantity: number
  readonly scrappedQuantity: number
}

const updateProduction: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const id = param(request, "id")
    const ppsId = param(request, "ppsId")
    yield* findJob(context, id)
    const pps = yield* records.find("pps", context.appId, ppsId)
    if (pps === undefined || pps.serviceJobId !== id) {
      return yield* EngineError.notFound("pps", `${ppsId} of service job ${id}`)
    }
    const progress = request.payload as Progress
    const quantity = Number(pps.quantity)
    if (progress.producedQuantity + progress.scrappedQuantity > quantity) {
      return yield* EngineError.invalid(
        `producedQuantity + scrappedQuantity (${progress.producedQuantity + progress.scrappedQuantity}) exceeds the quantity ${quantity} of pps ${ppsId}`
      )
    }
    const saved = yield* records.replace("pps", context.appId, ppsId, {
      ...pps,
      state: progress.state,
      producedQuantity: progress.producedQuantity,
      scrappedQuantity: progress.scrappedQuantity
    })
    return saved ?? (yield* EngineError.notFound("pps", ppsId))
  })

const listProductions: Operation = (context, request) =>
  Effect.gen(function*() {
    const query = request.query ?? {}
    const ids = query.serviceJobIds === undefined ? {} : { ids: strings(query.serviceJobIds) }
    const states = query.state === undefined ? {} : { state: strings(query.state) }
    const jobs = yield* listAll(SERVICE_JOB, context.appId, states, { ...ids, dates: toDateFilters(query) })
    if (jobs.length === 0) return []
    const pps = yield* listAll("pps", context.appId, { serviceJobId: jobs.map((job) => String(job.id)) })
    return jobs.map((job) => productionOf(job, pps.filter((record) => record.serviceJobId === job.id)))
  })

const SENDABLE = ["draft", "quoted", "accepted"]

/**
 * PUT /ticket/{id}/send-to-production: one service job per technology (in
 * the app's first machine group of that technology, if any), a PPS record
 * per part; the ticket moves to `in_production`.
 */
const sendToProduction: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const id = param(request, "id")
    const ticket = yield* records.find("ticket", context.appId, id)
    if (ticket === undefined) return yield* EngineError.notFound("ticket", id)
    const label = String(ticket.number ?? id)
    const state = String(ticket.state ?? "draft")
    if (!SENDABLE.includes(state)) {
      return yield* EngineError.conflict(`ticket ${label} is ${state}: only a draft, quoted or accepted ticket can be sent to production`)
    }
    const parts = yield* listAll("ticketModel", context.appId, { ticketId: [id] })
    if (parts.length === 0) return yield* EngineError.invalid(`ticket ${label} has no parts to produce`)
    const byTechnology = new Map<string, Array<StoredRecord>>()
    for (const part of parts) {
      const technologyId = String(part.technologyId)
      byTechnology.set(technologyId, [...(byTechnology.get(technologyId) ?? []), part])
    }
    const jobs: Array<StoredRecord> = []
    for (const [technologyId, group] of byTechnology) {
      const machineGroups = yield* listAll("machineGroup", context.appId, { technologyId: [technologyId] }, { limit: 1 })
      const prepared = yield* serviceJobHooks.prepare!(context, {
        name: `${label} ${technologyId}`,
        technologyId,
        machineGroupId: machineGroups[0] === undefined ? null : String(machineGroups[0].id),
        ticketId: id,
        ticketModelIds: group.map((part) => String(part.id)),
        ...(typeof ticket.dueDate === "string" ? { dueDate: ticket.dueDate } : {})
      }, undefined)
      const job = yield* records.insert(SERVICE_JOB, context.appId, prepared)
      for (const part of group) yield* newPps(context, String(job.id), String(part.id))
      jobs.push(job)
    }
    yield* records.replace("ticket", context.appId, id, { ...ticket, state: "in_production" })
    return jobs
  })

export const serviceJobWorkflows = {
  "serviceJob.create": generic["serviceJob.create"]!,
  "serviceJob.replace": generic["serviceJob.replace"]!,
  "serviceJob.remove": generic["serviceJob.remove"]!,
  "serviceJob.startTimeline": startTimeline,
  "serviceJob.stopTimeline": stopTimeline,
  "serviceJob.merge": transactional(merge),
  "serviceJob.reassignTicketModels": transactional(reassign),
  "serviceJob.production": production,
  "serviceJob.updateProduction": updateProduction,
  "serviceJobProduction.list": listProductions,
  "ticket.sendToProduction": transactional(sendToProduction)
} as const
