/**
 * Work that must not run on the event loop that answers requests, run in a
 * piscina pool that exists only while it has work, each task within a time
 * budget. The model analyser (geometry/ModelAnalyser.ts) and the gateway's
 * quote PDFs (adapters/pdf/PdfRenderer.ts) run on one each.
 *
 * - The pool is made for the first task and destroyed `idleTimeout` after
 *   the last one settles, so a service that has no such work holds none of
 *   its threads' memory. The whole pool comes and goes, not each thread
 *   (piscina's `minThreads: 0`): piscina replaces a thread it terminates (a
 *   budget, an interruption) only up to `minThreads`, and a task queued
 *   behind it would then wait for the next one to arrive.
 * - A task's budget runs from when its thread starts it, which the worker
 *   says by posting to the task's `started` port (waiting for a thread does
 *   not count); past it the task is aborted, which terminates its thread.
 * - An interrupted caller (its request gone) drops the task from the queue,
 *   or terminates the thread running it.
 * - `perAppLimit` keeps one app's burst from filling the pool's queue ahead
 *   of the other apps' tasks.
 */
import { Duration, Effect, Predicate, Semaphore } from "effect"
import { MessageChannel, type MessagePort } from "node:worker_threads"
import type { Piscina } from "piscina"

/** What every task carries: the port its worker posts to (anything) when it starts, then closes. */
export interface BudgetedTask {
  readonly started: MessagePort
}

export interface OnDemandPool<Task extends BudgetedTask, Result> {
  /** The pool for one more task; `release` once it is settled, exactly once. */
  readonly acquire: () => Piscina<Task, Result>
  readonly release: () => void
  /** The ids of the pool's threads (diagnostics and tests: a terminated thread's id is gone). */
  readonly threadIds: () => ReadonlyArray<number>
  /** Ends the threads now. */
  readonly close: () => Promise<void>
}

/** A pool made by `make` for the first task and destroyed `idleTimeout` after the last one settles. */
export const onDemandPool = <Task extends BudgetedTask, Result>(
  make: () => Piscina<Task, Result>,
  idleTimeout: Duration.Duration
): OnDemandPool<Task, Result> => {
  let pool: Piscina<Task, Result> | undefined
  let inFlight = 0
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  return {
    acquire: () => {
      clearTimeout(idleTimer)
      inFlight++
      pool ??= make()
      return pool
    },
    release: () => {
      if (--inFlight > 0) return
      // Unref'd: a timer waiting to end idle threads does not keep the process alive.
      idleTimer = setTimeout(() => {
        const idle = pool
        pool = undefined
        void idle?.destroy()
      }, Duration.toMillis(idleTimeout)).unref()
    },
    threadIds: () => pool?.threads.map((thread) => thread.threadId) ?? [],
    close: async () => {
      clearTimeout(idleTimer)
      const open = pool
      pool = undefined
      await open?.destroy()
    }
  }
}

/** How a task ended: its result, its budget spent (its thread terminated), or its thread's failure (piscina's error). */
export type BudgetedOutcome<Result> =
  | { readonly _tag: "Done"; readonly result: Result }
  | { readonly _tag: "OverBudget" }
  | { readonly _tag: "Failed"; readonly error: unknown }

/** Whether a failed task's thread ran out of its heap (`resourceLimits`): Node's error for it. */
export const isOutOfMemory = (error: unknown) => Predicate.hasProperty(error, "code") && error.code === "ERR_WORKER_OUT_OF_MEMORY"

/** setTimeout takes at most 2³¹ − 1 ms (24.8 days); more would fire at once. */
const timerMillis = (duration: Duration.Duration) => Math.min(Duration.toMillis(duration), 2 ** 31 - 1)

/**
 * `task` on a thread of `pools` within `budget` of running time; `transfer`
 * is moved to the worker, not copied (the caller must not use it after).
 */
export const runWithinBudget = <Task extends BudgetedTask, Result>(
  pools: OnDemandPool<Task, Result>,
  task: Omit<Task, "started">,
  budget: Duration.Duration,
  transfer: ReadonlyArray<ArrayBuffer> = []
): Effect.Effect<BudgetedOutcome<Result>> =>
  Effect.callback<BudgetedOutcome<Result>>((resume, signal) => {
    const controller = new AbortController()
    const { port1, port2 } = new MessageChannel()
    let timer: ReturnType<typeof setTimeout> | undefined
    let expired = false
    let settled = false
    const pool = pools.acquire()
    const settle = () => {
      if (!settled) pools.release()
      settled = true
      clearTimeout(timer)
      port1.close()
    }
    port1.once("message", () => {
      // The answer may overtake the "started" message (another port): then there is nothing to time.
      if (settled) return
      timer = setTimeout(() => {
        expired = true
        controller.abort(new Error("over its time budget"))
      }, timerMillis(budget))
    })
    pool.run({ ...task, started: port2 } as Task, { transferList: [port2, ...transfer], signal: controller.signal }).then(
      (result) => {
        settle()
        resume(Effect.succeed({ _tag: "Done", result }))
      },
      (error: unknown) => {
        settle()
        if (signal.aborted) return
        resume(Effect.succeed(expired ? { _tag: "OverBudget" } : { _tag: "Failed", error }))
      }
    )
    return Effect.sync(() => {
      settle()
      controller.abort(new Error("interrupted"))
    })
  })

/**
 * At most `perApp` tasks of one app at once (running, or queued for a
 * thread); the app's further tasks wait, in order, for one of its own to
 * settle. So a burst of one app holds at most `perApp` places ahead of
 * another app's task, and apps take turns on a busy pool. The semaphore of
 * an app is dropped once it has no task.
 */
export const perAppLimit = (perApp: number) => {
  const apps = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()
  return <A, E, R>(appId: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let slot = apps.get(appId)
      if (slot === undefined) {
        slot = { semaphore: Semaphore.makeUnsafe(perApp), users: 0 }
        apps.set(appId, slot)
      }
      const entry = slot
      entry.users++
      return entry.semaphore.withPermits(1)(effect).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (--entry.users === 0) apps.delete(appId)
        }))
      )
    })
}
