/**
 * What a service job satisfies whenever it is written (create, replace, and
 * the jobs sending a ticket to production makes): its parts exist, are of
 * its technology and in no other open job; its machine group and machine are
 * of its technology; a done or merged job keeps its parts and technology.
 */
import { Effect } from "effect"
import { TicketModel } from "../../domain/resources/orders.ts"
import { Machine, MachineGroup, Pps, ServiceJob } from "../../domain/resources/production.ts"
import { EngineError } from "../EngineError.ts"
import type { OperationContext } from "../Operation.ts"
import { findRecord, listRecords } from "../typedRecords.ts"
import { isOpen, type Job } from "./jobs.ts"
import { unique } from "./store.ts"

/** The fields of a job the rules look at. */
export interface JobPlan {
  readonly technologyId: string
  readonly machineGroupId?: string | null | undefined
  readonly machineId?: string | null | undefined
  readonly ticketModelIds: ReadonlyArray<string>
}

/** The open job other than `self` that holds the part, if any: found through the part's production records. */
const openJobHolding = Effect.fnUntraced(function*(context: OperationContext, partId: string, self: string | undefined) {
  for (const record of yield* listRecords(Pps, context.appId, { ticketModelId: partId })) {
    if (record.serviceJobId === null || record.serviceJobId === self) continue
    const job = yield* findRecord(ServiceJob, context.appId, record.serviceJobId)
    if (job !== undefined && isOpen(job)) return job
  }
  return undefined
})

/** Refuses a machine group or machine of another technology than the job's. */
const checkEquipment = Effect.fnUntraced(function*(context: OperationContext, plan: JobPlan) {
  if (typeof plan.machineGroupId === "string") {
    const group = yield* findRecord(MachineGroup, context.appId, plan.machineGroupId)
    if (group !== undefined && group.technologyId !== plan.technologyId) {
      return yield* EngineError.invalid(
        `machineGroupId: machine group ${group.id} is ${group.technologyId}, the service job is ${plan.technologyId}`
      )
    }
  }
  if (typeof plan.machineId === "string") {
    const machine = yield* findRecord(Machine, context.appId, plan.machineId)
    if (machine !== undefined && machine.technologyId !== plan.technologyId) {
      return yield* EngineError.invalid(`machineId: machine ${machine.id} is ${machine.technologyId}, the service job is ${plan.technologyId}`)
    }
  }
})

/** A done or merged job is closed: it may be renamed or rescheduled, but its parts and technology stay. */
const checkClosed = (plan: JobPlan, previous: Job) => {
  const sameParts = plan.ticketModelIds.length === previous.ticketModelIds.length
    && plan.ticketModelIds.every((id) => previous.ticketModelIds.includes(id))
  return sameParts && plan.technologyId === previous.technologyId
    ? Effect.void
    : Effect.fail(EngineError.conflict(`service job ${previous.id} is ${previous.state}: its parts and technology can no longer change`))
}

/**
 * Checks the job about to be written (`previous` is the stored one on a
 * replace) and answers its parts, each once.
 */
export const checkJob = Effect.fnUntraced(function*(context: OperationContext, plan: JobPlan, previous: Job | undefined) {
  const parts = unique(plan.ticketModelIds)
  if (previous !== undefined && !isOpen(previous)) yield* checkClosed({ ...plan, ticketModelIds: parts }, previous)
  yield* checkEquipment(context, plan)
  for (const partId of parts) {
    const part = yield* findRecord(TicketModel, context.appId, partId)
    if (part === undefined) return yield* EngineError.unknownReference("ticketModelIds", "ticketModel", partId)
    if (part.technologyId !== plan.technologyId) {
      return yield* EngineError.invalid(`ticketModelIds: part ${partId} is ${part.technologyId}, the service job is ${plan.technologyId}`)
    }
    if (previous?.ticketModelIds.includes(partId)) continue
    const other = yield* openJobHolding(context, partId, previous?.id)
    if (other !== undefined) {
      return yield* EngineError.conflict(
        `service job ${other.id} is ${other.state} and holds part ${partId}: a part is in at most one open service job`
      )
    }
  }
  return parts
})
