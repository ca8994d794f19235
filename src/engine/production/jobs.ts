/**
 * A service job as the workflows read and write it: its record type, which
 * states are open, and the reads and writes every workflow shares.
 */
import { Effect } from "effect"
import { ServiceJob } from "../../domain/resources/production.ts"
import { EngineError } from "../EngineError.ts"
import type { OperationContext } from "../Operation.ts"
import { findRecord } from "../typedRecords.ts"
import { jobMoved } from "./jobEvents.ts"
import type { Job, JobState } from "./records.ts"
import { replaceRecord } from "./store.ts"

export type { Job, JobState, PpsRecord } from "./records.ts"

/** States in which a job still makes its parts: a part is in at most one job in these. */
export const OPEN_STATES: ReadonlyArray<JobState> = ["queued", "running", "paused"]

export const isOpen = (job: Job) => OPEN_STATES.includes(job.state)

/** The app's service job with this id, or the engine's 404. */
export const findJob = (context: OperationContext, id: string) =>
  Effect.flatMap(
    findRecord(ServiceJob, context.appId, id),
    (job) => job === undefined ? Effect.fail(EngineError.notFound("service job", id)) : Effect.succeed(job)
  )

/**
 * Writes `next`, the whole new version of the job `previous` (the 404 when
 * it went in the meantime). Every workflow's write of a job goes through
 * here, so a move of its state writes the move's event (jobEvents.ts) in
 * the same transaction; `mergedIntoId` is the job a merged one went into.
 */
export const saveJob = Effect.fnUntraced(function*(context: OperationContext, previous: Job, next: Job, mergedIntoId?: string) {
  const saved = yield* replaceRecord(ServiceJob, context.appId, previous.id, next)
  if (saved === undefined) return yield* EngineError.notFound("service job", previous.id)
  if (saved.state !== previous.state) yield* jobMoved(context, saved, previous.state, mergedIntoId)
  return saved
})

/** Milliseconds between two instants, never negative. */
const millis = (from: string, to: string) => Math.max(0, Date.parse(to) - Date.parse(from))

/**
 * The job with its open interval closed, its time added to `totalTime`:
 * seconds to the millisecond, summed in whole milliseconds (0.021, never
 * 0.020999999999999998).
 */
export const closeInterval = (job: Job, now: string): Job => {
  const open = job.timeline.at(-1)
  if (open === undefined || open.stoppedAt !== null) return job
  return {
    ...job,
    timeline: [...job.timeline.slice(0, -1), { startedAt: open.startedAt, stoppedAt: now }],
    totalTime: (Math.round(job.totalTime * 1000) + millis(open.startedAt, now)) / 1000
  }
}

/** A new job's engine-set fields: queued, with an empty timeline. */
export const queued = { state: "queued", timeline: [], totalTime: 0 } as const
