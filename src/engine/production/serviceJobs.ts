/**
 * Service jobs: a job gathers parts of one technology, each with its
 * production (PPS) record (pps.ts). A job moves
 *   queued --start--> running --stop--> paused --start--> running ...
 *   running|paused --(every record done)--> done
 *   queued|running|paused --merge (as a source)--> merged
 * Only the engine moves it: a PUT of the record keeps the state. The rules a
 * written job keeps are in jobRules.ts; how it becomes done, in completion.ts.
 */
import { Effect } from "effect"
import { DEFAULT_PAGE_SIZE, toDateFilters } from "../../domain/Resource.ts"
import { Pps, ServiceJob, type ServiceJobProduction } from "../../domain/resources/production.ts"
import { recordHandlers, type RecordHooks, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext, Step } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { asRecord, findRecord, type PrepareInput, type StoredFields } from "../typedRecords.ts"
import { settleJob } from "./completion.ts"
import { jobCreated, jobReassigned } from "./jobEvents.ts"
import { checkJob } from "./jobRules.ts"
import { closeInterval, findJob, isOpen, type Job, type PpsRecord, queued, saveJob } from "./jobs.ts"
import { movePps, recordsOf, releasePps, syncPps } from "./pps.ts"
import { updateProduction } from "./progress.ts"
import { listAll, pageStored, unique } from "./store.ts"

type ServiceJobHandlers = GroupHandlers<"serviceJob">

/**
 * A job's fields before it is stored, once the rules hold. A new job is
 * queued with an empty timeline; a replace keeps the state, timeline and
 * time the engine set on the stored job.
 */
const prepareJob = (context: OperationContext, input: PrepareInput<typeof ServiceJob>, previous: Job | undefined): Step<StoredFields<typeof ServiceJob>> =>
  Effect.map(checkJob(context, input, previous), (ticketModelIds) =>
    previous === undefined
      ? { ...input, ticketModelIds, ...queued }
      : { ...input, ticketModelIds, state: previous.state, timeline: previous.timeline, totalTime: previous.totalTime })

const serviceJobHooks: RecordHooks<typeof ServiceJob> = {
  prepare: prepareJob,
  // In the job's own transaction: a new job's event, and its PPS records following its parts.
  written: Effect.fnUntraced(function*(context, job, previous) {
    if (previous === undefined) yield* jobCreated(context, job)
    yield* syncPps(context, job)
  })
}

const jobRecords = recordHandlers(ServiceJob, serviceJobHooks)

/** PUT /service-job/{id}: the record replace; a part taken out may leave only done records, and so finish the job. */
const replaceJob: ServiceJobHandlers["replace"] = (context, input) => Effect.flatMap(jobRecords.replace(context, input), (job) => settleJob(context, job))

/**
 * DELETE /service-job/{id}: only a queued job; its parts keep their records, in no job. The job's row is locked
 * first, so that the state checked and the records released are the ones a workflow running meanwhile left.
 */
const removeJob: ServiceJobHandlers["remove"] = Effect.fnUntraced(function*(context, input) {
  const records = yield* RecordRepository
  const locked = yield* records.lockForRemoval(ServiceJob.name, context.appId, input.params.id)
  if (locked === undefined) return yield* EngineError.notFound("service job", input.params.id)
  const job = asRecord(ServiceJob, locked)
  if (job.state !== "queued") {
    return yield* EngineError.conflict(`service job ${job.id} is ${job.state}: only a queued service job can be deleted`)
  }
  yield* releasePps(context, job.id)
  return yield* jobRecords.remove(context, input)
})

const startTimeline: ServiceJobHandlers["startTimeline"] = Effect.fnUntraced(function*(context, { params: { id } }) {
  const job = yield* findJob(context, id)
  if (job.state === "running" || !isOpen(job)) {
    return yield* EngineError.conflict(`service job ${id} is ${job.state}: its timeline cannot start`)
  }
  const now = new Date().toISOString()
  const started = yield* saveJob(context, job, { ...job, state: "running", timeline: [...job.timeline, { startedAt: now, stoppedAt: null }] })
  // Records all done already (brought along by their parts): the job is done at once.
  return yield* settleJob(context, started)
})

const stopTimeline: ServiceJobHandlers["stopTimeline"] = Effect.fnUntraced(function*(context, { params: { id } }) {
  const job = yield* findJob(context, id)
  if (job.state !== "running") {
    return yield* EngineError.conflict(`service job ${id} is ${job.state}: only a running timeline can stop`)
  }
  return yield* saveJob(context, job, { ...closeInterval(job, new Date().toISOString()), state: "paused" })
})

/** Refuses a job that is merged or done: it cannot give or take parts. */
const open = (job: Job) => isOpen(job) ? Effect.void : Effect.fail(EngineError.conflict(`service job ${job.id} is ${job.state}`))

const sameTechnology = (target: Job, other: Job) =>
  target.technologyId === other.technologyId
    ? Effect.void
    : Effect.fail(EngineError.invalid(
      `service job ${other.id} is ${other.technologyId}, service job ${target.id} is ${target.technologyId}: jobs of different technologies cannot share parts`
    ))

const merge: ServiceJobHandlers["merge"] = Effect.fnUntraced(function*(context, { payload: { targetServiceJobId, sourceServiceJobIds } }) {
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
  const parts = unique([...target.ticketModelIds, ...sources.flatMap((source) => source.ticketModelIds)])
  for (const source of sources) {
    // A running source stops first: its time stays its own. Its row goes before its PPS records' (writes.ts).
    yield* saveJob(context, source, { ...closeInterval(source, now), state: "merged", ticketModelIds: [] }, target.id)
    yield* movePps(context, source.id, target.id)
  }
  const merged = yield* saveJob(context, target, { ...target, ticketModelIds: parts })
  const moved = parts.filter((id) => !target.ticketModelIds.includes(id))
  yield* jobReassigned(context, merged, moved, sources.filter((source) => source.ticketModelIds.length > 0).map((source) => source.id))
  return yield* settleJob(context, merged)
})

const reassign: ServiceJobHandlers["reassignTicketModels"] = Effect.fnUntraced(function*(context, { payload }) {
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
  // The jobs' rows before their PPS records' (writes.ts).
  const savedFrom = yield* saveJob(context, from, { ...from, ticketModelIds: from.ticketModelIds.filter((id) => !moving.includes(id)) })
  const savedTo = yield* saveJob(context, to, { ...to, ticketModelIds: unique([...to.ticketModelIds, ...moving]) })
  yield* movePps(context, from.id, to.id, moving)
  yield* jobReassigned(context, savedTo, moving, [from.id])
  return [yield* settleJob(context, savedFrom), yield* settleJob(context, savedTo)]
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

const production: ServiceJobHandlers["production"] = Effect.fnUntraced(function*(context, { params: { id } }) {
  const job = yield* findRecord(ServiceJob, context.appId, id)
  // The spec's empty 200 for a job the app does not have.
  if (job === undefined) return null
  return productionOf(job, yield* recordsOf(context, id))
})

type ProductionQuery = Parameters<GroupHandlers<"serviceJobProduction">["list"]>[1]["query"]

/** The jobs a productions list asks for: `ids`, and `serviceJobIds` (its older name); both given, those in both. */
const jobIdsOf = ({ ids, serviceJobIds }: ProductionQuery) =>
  ids === undefined ? serviceJobIds : serviceJobIds === undefined ? ids : ids.filter((id) => serviceJobIds.includes(id))

const listProductions: GroupHandlers<"serviceJobProduction">["list"] = Effect.fnUntraced(function*(context, { query }) {
  const { records, total } = yield* pageStored(ServiceJob.name, context.appId, {
    ids: jobIdsOf(query),
    equals: query.state === undefined ? {} : { state: query.state },
    dates: toDateFilters(query),
    limit: query.limit ?? DEFAULT_PAGE_SIZE,
    offset: query.offset ?? 0
  })
  if (records.length === 0) return { items: [], total }
  const jobs = records.map((record) => asRecord(ServiceJob, record))
  const pps = yield* listAll(Pps, context.appId, { equals: { serviceJobId: jobs.map((job) => job.id) } })
  return { items: jobs.map((job) => productionOf(job, pps.filter((record) => record.serviceJobId === job.id))), total }
})

export const serviceJobHandlers: ServiceJobHandlers = {
  list: jobRecords.list,
  get: jobRecords.get,
  create: jobRecords.create,
  // Each writes the job and its PPS records, and maybe finishes the job: all of it, or none.
  replace: transactional(replaceJob),
  remove: transactional(removeJob),
  startTimeline: transactional(startTimeline),
  // One write, with what the job references locked until it commits (writes.ts).
  stopTimeline: transactional(stopTimeline),
  // Each writes several jobs and their PPS records: all of it, or none.
  merge: transactional(merge),
  reassignTicketModels: transactional(reassign),
  production,
  updateProduction
}

export const serviceJobProductionHandlers: GroupHandlers<"serviceJobProduction"> = { list: listProductions }
