/**
 * `PUT /service-job/{id}/production/{ppsId}`: a production record's progress.
 * It is recorded while its job is running or paused; the good pieces are at
 * most the planned quantity, a record is `done` only with all of them made,
 * and `done` is final. The last record done makes the job done, and perhaps
 * its ticket completed (completion.ts).
 */
import { Effect } from "effect"
import { Pps } from "../../domain/resources/production.ts"
import { transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers } from "../Operation.ts"
import { findRecord } from "../typedRecords.ts"
import { settleJob } from "./completion.ts"
import { ppsUpdated } from "./jobEvents.ts"
import { findJob, isOpen } from "./jobs.ts"
import { replaceRecord } from "./store.ts"

type UpdateProduction = GroupHandlers<"serviceJob">["updateProduction"]

const updateProductionOnce: UpdateProduction = Effect.fnUntraced(function*(context, { params: { id, ppsId }, payload: progress }) {
  const job = yield* findJob(context, id)
  const pps = yield* findRecord(Pps, context.appId, ppsId)
  if (pps === undefined || pps.serviceJobId !== id) {
    return yield* EngineError.notFound("pps", `${ppsId} of service job ${id}`)
  }
  if (job.state === "queued") {
    return yield* EngineError.conflict(`service job ${id} is queued: start its timeline before recording production`)
  }
  if (!isOpen(job)) return yield* EngineError.conflict(`service job ${id} is ${job.state}: its production is closed`)
  if (pps.state === "done") return yield* EngineError.conflict(`pps ${ppsId} is done: a done record is final`)
  const { producedQuantity, scrappedQuantity, state } = progress
  if (producedQuantity > pps.quantity) {
    return yield* EngineError.invalid(`producedQuantity: ${producedQuantity} exceeds the planned quantity ${pps.quantity} of pps ${ppsId}`)
  }
  if (state === "done" && producedQuantity !== pps.quantity) {
    return yield* EngineError.invalid(
      `producedQuantity: pps ${ppsId} is done only with its planned quantity ${pps.quantity} made, not ${producedQuantity}`
    )
  }
  const saved = yield* replaceRecord(Pps, context.appId, ppsId, { ...pps, state, producedQuantity, scrappedQuantity })
  if (saved === undefined) return yield* EngineError.notFound("pps", ppsId)
  yield* ppsUpdated(context, saved)
  yield* settleJob(context, job)
  return saved
})

/** The record, its job and the job's ticket are written together, or not at all. */
export const updateProduction = transactional(updateProductionOnce)
