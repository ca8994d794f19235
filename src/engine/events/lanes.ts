/**
 * Lanes: at most `width` tasks of one key (a webhook endpoint) running at a
 * time, the others waiting in their order (sender.ts, PER_ENDPOINT_CONCURRENCY).
 *
 * Each lane has up to `width` workers, started when a task comes and none is
 * free, and each worker takes the lane's next task the moment its own ends,
 * in the same turn of the event loop. A semaphore's waiter is woken through
 * the scheduler instead, a turn later: under load that turn was a third of
 * each place's cycle (request, answer, wake), and an endpoint's four places
 * carried a third fewer deliveries a second. A lane with no work left has no
 * worker and is forgotten.
 *
 * A task may give up waiting after a bound (`runWithin`): it is then not run.
 */
import { Duration, Effect, type Exit, FiberSet, Option, type Scope } from "effect"

interface Job {
  readonly task: Effect.Effect<unknown>
  readonly resume: (answer: Effect.Effect<unknown>) => void
  state: "waiting" | "taken" | "gone"
  timer: ReturnType<typeof setTimeout> | undefined
}

interface Lane {
  readonly jobs: Array<Job>
  /** The index of the next job in `jobs`; the ones before it are taken or gone. */
  next: number
  workers: number
}

export interface Lanes {
  /** `task` once one of its key's places is free. */
  readonly run: <A>(key: string, task: Effect.Effect<A>) => Effect.Effect<A>
  /** `task` if one of its key's places is free within `wait`; none, and `task` not run, if not. */
  readonly runWithin: <A>(key: string, task: Effect.Effect<A>, wait: Duration.Duration) => Effect.Effect<Option.Option<A>>
}

/** Jobs taken that a lane's array keeps before it drops them. */
const COMPACT_AFTER = 1024

export const makeLanes = (width: number): Effect.Effect<Lanes, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fork = yield* FiberSet.makeRuntime<never, void, never>()
    const lanes = new Map<string, Lane>()

    const take = (lane: Lane): Job | undefined => {
      while (lane.next < lane.jobs.length) {
        const job = lane.jobs[lane.next++]!
        if (job.state !== "waiting") continue
        job.state = "taken"
        clearTimeout(job.timer)
        if (lane.next >= COMPACT_AFTER) {
          lane.jobs.splice(0, lane.next)
          lane.next = 0
        }
        return job
      }
      lane.jobs.length = 0
      lane.next = 0
      return undefined
    }

    const work = (key: string, lane: Lane): Effect.Effect<void> =>
      Effect.suspend(() => {
        const job = take(lane)
        if (job === undefined) {
          if (--lane.workers === 0) lanes.delete(key)
          return Effect.void
        }
        return Effect.flatMap(Effect.exit(job.task), (exit: Exit.Exit<unknown>) => {
          job.resume(exit)
          return work(key, lane)
        })
      })

    // Stopping, the workers are interrupted: the tasks still waiting are too, rather than left waiting forever.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const lane of lanes.values()) {
          for (const job of lane.jobs) {
            if (job.state !== "waiting") continue
            job.state = "gone"
            clearTimeout(job.timer)
            job.resume(Effect.interrupt)
          }
        }
        lanes.clear()
      })
    )

    const enqueue = <A, B>(key: string, task: Effect.Effect<A>, giveUp: { readonly after: Duration.Duration; readonly answer: B } | undefined) =>
      Effect.callback<A | B>((resume) => {
        let lane = lanes.get(key)
        if (lane === undefined) {
          lane = { jobs: [], next: 0, workers: 0 }
          lanes.set(key, lane)
        }
        const job: Job = { task, resume: resume as Job["resume"], state: "waiting", timer: undefined }
        if (giveUp !== undefined) {
          job.timer = setTimeout(() => {
            if (job.state !== "waiting") return
            job.state = "gone"
            resume(Effect.succeed(giveUp.answer))
          }, Duration.toMillis(giveUp.after))
        }
        lane.jobs.push(job)
        if (lane.workers < width) {
          lane.workers++
          fork(work(key, lane))
        }
        // Interrupted while waiting, it is not run; once taken, it runs to its end and its answer is dropped.
        return Effect.sync(() => {
          if (job.state !== "waiting") return
          job.state = "gone"
          clearTimeout(job.timer)
        })
      })

    return {
      run: <A>(key: string, task: Effect.Effect<A>) => enqueue<A, never>(key, task, undefined),
      runWithin: (key, task, wait) => enqueue(key, Effect.asSome(task), { after: wait, answer: Option.none() })
    }
  })
