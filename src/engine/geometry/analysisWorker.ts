/**
 * The analysis worker: what each thread of the model analyser's pool runs
 * (ModelAnalyser.ts; piscina calls the default export with each task). It
 * says when it starts, so the time budget runs from then and not while the
 * task waited for a thread; then parses and measures the file within the
 * triangle and unpacked-size budgets, with its manufacturability
 * measurements (dfm/measure.ts), and answers the geometry or what is
 * wrong, as plain data (a ModelError does not cross threads).
 *
 * Loaded by Node itself (type stripping), under `npm start`, the engine's
 * own process and vitest alike: `.ts` imports, erasable syntax only, and
 * nothing of Effect but effect/Data, so a new thread is ready quickly.
 */
import type { MessagePort } from "node:worker_threads"
import type { ModelUnit } from "../../domain/ModelUnits.ts"
import type { AnalysisLimits } from "./limits.ts"
import type { AnalysedGeometry, ModelErrorType } from "./mesh.ts"
import { analyseModelFile, asModelError } from "./modelFile.ts"

export interface AnalysisTask {
  readonly bytes: Uint8Array
  readonly fileName: string | null
  readonly limits: AnalysisLimits
  /** The unit the caller states the file is in, if it states one. */
  readonly unit: ModelUnit | undefined
  /** Told (any message) when the task starts running; then closed. */
  readonly started: MessagePort
}

export type AnalysisOutcome =
  | { readonly ok: true; readonly geometry: AnalysedGeometry }
  | { readonly ok: false; readonly type: ModelErrorType; readonly reason: string }

export default function analyseTask(task: AnalysisTask): AnalysisOutcome {
  task.started.postMessage(true)
  task.started.close()
  try {
    return { ok: true, geometry: analyseModelFile(task.bytes, task.fileName, task.limits, task.unit) }
  } catch (thrown) {
    const error = asModelError(thrown)
    return { ok: false, type: error.type ?? "UnreadableModel", reason: error.reason }
  }
}
