/**
 * A model file's geometry as an Effect, in this thread (modelFile.ts does
 * the work). The engine analyses the files API callers give in worker
 * threads instead, with time, memory and size budgets (ModelAnalyser.ts);
 * this in-thread form is for trusted files: the seed, tests, benchmarks.
 */
import { Effect } from "effect"
import type { ModelUnit } from "../../domain/ModelUnits.ts"
import { type AnalysisLimits, DEFAULT_LIMITS } from "./limits.ts"
import type { AnalysedGeometry, ModelError } from "./mesh.ts"
import { analyseModelFile, asModelError } from "./modelFile.ts"

export { type ModelFormat, parseModel } from "./modelFile.ts"

/**
 * The geometry of a model file with its manufacturability measurements,
 * synchronously (throws ModelError), in this thread: what the analysis
 * threads answer, for trusted files (the seed, tests, benchmarks). `unit`
 * is the unit an STL or OBJ is in (millimetres unless stated).
 */
export const analyseModelSync = (
  bytes: Uint8Array,
  fileName: string | null | undefined,
  limits: AnalysisLimits = DEFAULT_LIMITS,
  unit?: ModelUnit
): AnalysedGeometry => analyseModelFile(bytes, fileName, limits, unit)

/** The geometry of a model file, or a ModelError saying what is wrong with it. */
export const analyseModel = (
  bytes: Uint8Array,
  fileName: string | null | undefined,
  limits: AnalysisLimits = DEFAULT_LIMITS,
  unit?: ModelUnit
): Effect.Effect<AnalysedGeometry, ModelError> =>
  Effect.try({
    try: () => analyseModelSync(bytes, fileName, limits, unit),
    catch: asModelError
  })
