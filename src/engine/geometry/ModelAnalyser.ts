/**
 * The model analyser: parses and measures the model files API callers give,
 * never on the event loop that answers requests (docs/geometry.md, "Limits
 * of the analysis"). Each file is analysed in a thread of a bounded pool
 * (piscina), within budgets:
 *
 * - time, MODEL_ANALYSIS_TIMEOUT (20 s), from when the task starts running
 *   in its thread (the worker says so; waiting for a thread does not
 *   count): past it the thread is terminated (piscina aborts the task, which
 *   terminates its thread, and starts another) and the part is refused;
 * - memory, MODEL_ANALYSIS_MAX_MEMORY_MB (512) of JavaScript heap per
 *   thread (`resourceLimits`): a thread that runs out is ended by Node, and
 *   the part refused, the process unharmed (the largest files the download
 *   limit lets through analyse within 128; the mesh's typed arrays are
 *   outside the heap, bounded by the triangle budget instead);
 * - triangles, MODEL_MAX_TRIANGLES (5,000,000), counted before the mesh is
 *   allocated (through 3MF component instancing), and the bytes a 3MF's
 *   parts unpack to, MODEL_MAX_UNPACKED_BYTES (512 MiB), counted as they are
 *   produced (limits.ts, zip.ts, threeMf.ts);
 * - threads: MODEL_ANALYSIS_WORKERS (2); one app runs at most half of them
 *   (rounded up) at once, its further files waiting for its own turn, so
 *   one app cannot hold every thread while the others wait. A thread costs
 *   13–20 MiB, so the pool holds only the threads its files use: the first
 *   starts with the first file, another only when a file would otherwise
 *   wait for a busy thread (on the default two, another app's file), and a
 *   thread beyond the first ends after IDLE_POOL_TIMEOUT without a file.
 *   The whole pool ends IDLE_POOL_TIMEOUT after the last file
 *   (BudgetedPool.ts), so an idle service holds none of their memory. A
 *   file that needs a new thread waits for it to start (docs/geometry.md);
 *   its time budget runs from when it starts in it.
 *
 * Exceeding a budget is a ModelError whose `type` names it
 * (ModelAnalysisTimeout, ModelAnalysisOutOfMemory, ModelTooComplex,
 * ModelTooLarge); a file that cannot be read is one without a type
 * (unreadable). The threads run at a lower scheduling priority (nice +10
 * where the platform allows), so a busy pool yields the CPU to the request
 * loop. Each analysis is timed, by outcome, in `model.analysis.duration`
 * (ModelMetrics.ts).
 *
 * The pool belongs to a scope: `modelAnalyserLayer(options)` and
 * `ModelServicesLive` (src/app/ModelServices.ts, MODEL_* as AppConfig
 * read them) end its threads with the layer.
 */
import { Context, Duration, Effect, Layer, Scope } from "effect"
import { Piscina } from "piscina"
import { DEFAULT_MODEL_ANALYSIS, type ModelAnalysisSettings } from "../../domain/ModelSettings.ts"
import type { ModelUnit } from "../../domain/ModelUnits.ts"
import { isOutOfMemory, onDemandPool, perAppLimit, runWithinBudget } from "../BudgetedPool.ts"
import type { AnalysisOutcome, AnalysisTask } from "./analysisWorker.ts"
import type { AnalysisLimits } from "./limits.ts"
import { type AnalysedGeometry, ModelError } from "./mesh.ts"
import { measuredAnalysis } from "./ModelMetrics.ts"

/** The analyser's options (MODEL_ANALYSIS_*, MODEL_MAX_*, src/domain/ModelSettings.ts). */
export type ModelAnalyserOptions = ModelAnalysisSettings

export interface ModelAnalyserShape {
  /**
   * The geometry of a model file, analysed in a worker thread for `appId`;
   * a ModelError when it cannot be read or exceeds a budget. The bytes are
   * moved to the worker when they fill their buffer (not copied): the
   * caller must not use them afterwards. `unit` is the unit the caller
   * states (STL and OBJ are read in it; a 3MF's own must agree).
   */
  readonly analyse: (bytes: Uint8Array, fileName: string | null, appId: string, unit?: ModelUnit) => Effect.Effect<AnalysedGeometry, ModelError>
  /** The ids of the pool's threads (diagnostics and tests: a terminated thread's id is gone). */
  readonly threadIds: () => ReadonlyArray<number>
}

export const defaultAnalyserOptions: ModelAnalyserOptions = DEFAULT_MODEL_ANALYSIS

/** Analyses one app may run at once. */
export const perAppOf = (options: ModelAnalyserOptions) => Math.max(1, options.perApp ?? Math.ceil(options.workers / 2))

const WORKER = new URL("./analysisWorker.ts", import.meta.url)

/**
 * The threads end when no file has been analysed for this long. Long enough
 * that a burst of parts keeps them; short enough that a service whose callers
 * send no models gives their memory back soon after the last one.
 */
export const IDLE_POOL_TIMEOUT = Duration.seconds(30)

/** The bytes as a view that may be moved to the worker: their own buffer if they fill it, else a copy. */
const movable = (bytes: Uint8Array): Uint8Array =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer ? bytes : bytes.slice()

interface Analyser extends ModelAnalyserShape {
  readonly close: () => Promise<void>
}

/**
 * The young generation of an analysis thread. A mesh lives in typed arrays
 * outside the heap, so a parse makes few objects that outlive a scavenge:
 * a small young generation costs it nothing measurable (`npm run
 * bench:geometry`: 797 ms through the pool, 799 ms in the calling thread),
 * and each thread holds about 13 MiB rather than 23 (bench/README.md).
 */
const ANALYSIS_YOUNG_GENERATION_MB = 4

/**
 * A piscina pool of up to `workers` threads: one started with it, the
 * others when a task finds every thread busy, each of those ended after
 * `idleTimeout` without a task. A terminated thread is replaced while it
 * was the last; otherwise the next task that finds every thread busy, or
 * a thread that comes free with tasks queued, starts another.
 */
const makePool = (options: ModelAnalyserOptions, idleTimeout: Duration.Duration) => {
  const pool = new Piscina<AnalysisTask, AnalysisOutcome>({
    filename: WORKER.href,
    minThreads: 1,
    maxThreads: options.workers,
    idleTimeout: Duration.toMillis(idleTimeout),
    resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb, maxYoungGenerationSizeMb: ANALYSIS_YOUNG_GENERATION_MB, stackSizeMb: 4 },
    // Below the request loop's priority (Linux sets it per thread; ignored where unsupported).
    niceIncrement: 10
  })
  // An error of a thread with no task (there should be none): reported, never an unhandled 'error' event.
  pool.on("error", (error) => console.error("model analyser: a worker thread failed", error))
  return pool
}

/** A pool and what runs files on it, with fixed options; `close` ends its threads. */
const makeAnalyser = (options: ModelAnalyserOptions, idleTimeout: Duration.Duration): Analyser => {
  const pools = onDemandPool(() => makePool(options, idleTimeout), idleTimeout)
  const limits: AnalysisLimits = { maxTriangles: options.maxTriangles, maxUnpackedBytes: options.maxUnpackedBytes }
  const perApp = perAppOf(options)
  const timedOut = new ModelError({
    type: "ModelAnalysisTimeout",
    reason: `its analysis took longer than ${Duration.format(options.timeout)} (MODEL_ANALYSIS_TIMEOUT)`
  })
  const outOfMemory = new ModelError({
    type: "ModelAnalysisOutOfMemory",
    reason: `its analysis needed more than ${options.maxMemoryMb} MB of memory (MODEL_ANALYSIS_MAX_MEMORY_MB)`
  })

  /** One file on the pool, within the time budget (BudgetedPool.ts); the bytes are moved to its thread. */
  const run = (bytes: Uint8Array, fileName: string | null, unit: ModelUnit | undefined) => {
    const data = movable(bytes)
    return Effect.flatMap(
      runWithinBudget(pools, { bytes: data, fileName, limits, unit }, options.timeout, [data.buffer as ArrayBuffer]),
      (outcome): Effect.Effect<AnalysedGeometry, ModelError> => {
        switch (outcome._tag) {
          case "Done":
            return outcome.result.ok
              ? Effect.succeed(outcome.result.geometry)
              : Effect.fail(new ModelError({ type: outcome.result.type, reason: outcome.result.reason }))
          case "OverBudget":
            return Effect.fail(timedOut)
          case "Failed":
            return isOutOfMemory(outcome.error) ? Effect.fail(outOfMemory) : Effect.die(outcome.error)
        }
      }
    )
  }

  const forApp = perAppLimit(perApp)

  return {
    analyse: (bytes, fileName, appId, unit) =>
      measuredAnalysis(forApp(appId, run(bytes, fileName, unit))).pipe(
        Effect.tapError((error) => Effect.annotateCurrentSpan({ "error.type": error.type ?? "UnreadableModel" })),
        Effect.withSpan("geometry analyse", { attributes: { "model.bytes": bytes.length, "app.id": appId } }, { captureStackTrace: false })
      ),
    threadIds: pools.threadIds,
    close: pools.close
  }
}

/** An analyser with fixed options, its pool closed with the scope; its threads end after `idleTimeout` without a file. */
export const makeModelAnalyser = (
  options: ModelAnalyserOptions,
  idleTimeout: Duration.Duration = IDLE_POOL_TIMEOUT
): Effect.Effect<ModelAnalyserShape, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => makeAnalyser(options, idleTimeout)),
    (analyser) => Effect.promise(() => analyser.close())
  )

/**
 * The model analyser the engine uses: operations read it from their context,
 * where Engine.run puts the one its layer was built with.
 */
export class ModelAnalyser extends Context.Service<ModelAnalyser, ModelAnalyserShape>()("mfg/engine/ModelAnalyser") {}

/** An analyser with fixed options (tests, hosts that configure it in code); its threads end with the layer. */
export const modelAnalyserLayer = (options: Partial<ModelAnalyserOptions> = {}) =>
  Layer.effect(ModelAnalyser, makeModelAnalyser({ ...defaultAnalyserOptions, ...options }))
