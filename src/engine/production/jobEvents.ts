/**
 * The events of service jobs and their production (PPS) records, each
 * written in the transaction of the change it announces (events/outbox.ts).
 * Every move of a job's state is written back by jobs.ts `saveJob`, which
 * writes the move's event here, whichever workflow makes it.
 */
import { Effect } from "effect"
import type { EventType } from "../../domain/events/types.ts"
import { recordEvent } from "../events/outbox.ts"
import type { OperationContext, Step } from "../Operation.ts"
import type { Job, JobState, PpsRecord } from "./records.ts"

/** The event of a move by the state it reaches. */
const MOVE_EVENTS = {
  running: "service_job.started",
  paused: "service_job.paused",
  done: "service_job.done"
} as const satisfies { readonly [S in JobState]?: EventType }

/** A job stored: `POST /service-job`, or sending a ticket to production. */
export const jobCreated = (context: OperationContext, job: Job): Step<void> => recordEvent(context.appId, "service_job.created", { object: job })

/**
 * The job moved from `previousState` to the state it is in now; a merged job
 * names the job it went into. No move reaches `queued`: a job starts there.
 */
export const jobMoved = (context: OperationContext, job: Job, previousState: JobState, mergedIntoId: string | undefined): Step<void> =>
  Effect.andThen(
    stateEvent(context, job, previousState, mergedIntoId),
    // A running job that moves on has stopped running, whichever state it reaches: its timeline's open interval closed.
    previousState === "running" && job.state !== "running"
      ? recordEvent(context.appId, "service_job.stopped", { object: job, previousState })
      : Effect.void
  )

const stateEvent = (context: OperationContext, job: Job, previousState: JobState, mergedIntoId: string | undefined): Step<unknown> => {
  switch (job.state) {
    case "running":
    case "paused":
    case "done":
      return recordEvent(context.appId, MOVE_EVENTS[job.state], { object: job, previousState })
    case "merged":
      return mergedIntoId === undefined
        ? Effect.die(new Error(`service job ${job.id} moved to merged without the job it went into`))
        : recordEvent(context.appId, "service_job.merged", { object: job, previousState, mergedIntoId })
    case "queued":
      return Effect.die(new Error(`service job ${job.id} moved back to queued from ${previousState}`))
  }
}

/** Parts moved into the job (a reassignment, or a merge into it as the target) from the jobs they left. */
export const jobReassigned = (
  context: OperationContext,
  job: Job,
  ticketModelIds: ReadonlyArray<string>,
  fromServiceJobIds: ReadonlyArray<string>
): Step<void> =>
  ticketModelIds.length === 0
    ? Effect.void
    : recordEvent(context.appId, "service_job.reassigned", { object: job, ticketModelIds, fromServiceJobIds })

/** A PPS record's progress written (`PUT /service-job/{id}/production/{ppsId}`). */
export const ppsUpdated = (context: OperationContext, pps: PpsRecord): Step<void> => recordEvent(context.appId, "pps.updated", { object: pps })
