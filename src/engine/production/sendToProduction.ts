/**
 * `PUT /ticket/{id}/send-to-production`: an accepted ticket's parts become
 * service jobs, one per technology (in the app's first machine group of that
 * technology, if any), each part with its production record; the ticket
 * moves to `in_production`.
 */
import { Effect } from "effect"
import { TicketModel } from "../../domain/resources/orders.ts"
import { MachineGroup, ServiceJob } from "../../domain/resources/production.ts"
import { transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers } from "../Operation.ts"
import { getLockedTicket, moveTicket } from "../orders/ticketState.ts"
import { listRecords, type RecordOf } from "../typedRecords.ts"
import { jobCreated } from "./jobEvents.ts"
import { checkJob } from "./jobRules.ts"
import { type Job, queued } from "./jobs.ts"
import { syncPps } from "./pps.ts"
import { insertRecord, listAll } from "./store.ts"

type Part = RecordOf<typeof TicketModel>

/** The ticket's parts by technology, in the order they were read. */
const byTechnology = (parts: ReadonlyArray<Part>) => {
  const groups = new Map<string, Array<Part>>()
  for (const part of parts) groups.set(part.technologyId, [...(groups.get(part.technologyId) ?? []), part])
  return groups
}

const sendToProductionOnce: GroupHandlers<"ticket">["sendToProduction"] = Effect.fnUntraced(function*(context, { params: { id } }) {
  // Locked first, as every move of a ticket is: a concurrent cancel cannot be overwritten with in_production.
  const ticket = yield* getLockedTicket(context, id)
  const label = ticket.number
  if (ticket.state !== "accepted") {
    return yield* EngineError.conflict(`ticket ${label} is ${ticket.state}: only an accepted ticket can be sent to production`)
  }
  const parts = yield* listRecords(TicketModel, context.appId, { ticketId: id })
  if (parts.length === 0) return yield* EngineError.invalid(`ticket ${label} has no parts to produce`)
  const jobs: Array<Job> = []
  for (const [technologyId, group] of byTechnology(parts)) {
    const [machineGroup] = yield* listAll(MachineGroup, context.appId, { equals: { technologyId: [technologyId] }, limit: 1 })
    const plan = {
      name: `${label} ${technologyId}`,
      technologyId,
      machineGroupId: machineGroup === undefined ? null : machineGroup.id,
      ticketId: id,
      ticketModelIds: group.map((part) => part.id),
      ...(ticket.dueDate === undefined ? {} : { dueDate: ticket.dueDate })
    }
    // A part already in an open job (made by hand) is refused, naming that job.
    const ticketModelIds = yield* checkJob(context, plan, undefined)
    const job = yield* insertRecord(ServiceJob, context.appId, { ...plan, ticketModelIds, ...queued })
    yield* jobCreated(context, job)
    yield* syncPps(context, job)
    jobs.push(job)
  }
  yield* moveTicket(context, ticket, "in_production")
  return jobs
})

/** The ticket, its jobs and their PPS records are written together, or not at all. */
export const sendToProduction = transactional(sendToProductionOnce)
