/**
 * The budgets a model file's parsing is held to (docs/geometry.md, "Limits
 * of the analysis"): the triangles of the whole model, counted before
 * anything is allocated for them (through 3MF component instancing), and
 * the bytes a 3MF archive's parts may unpack to, counted on the bytes the
 * inflation actually produces. Exceeding one is a ModelError whose `type`
 * says which, and whose reason names the limit and its variable.
 *
 * The time and memory of an analysis are bounded by its worker
 * (ModelAnalyser.ts), not here.
 */
// Not ModelSettings.ts: this module runs in the analysis threads, which should not load the effect package.
import { DEFAULT_MAX_TRIANGLES, DEFAULT_MAX_UNPACKED_BYTES } from "../../domain/ModelLimits.ts"
import { ModelError } from "./mesh.ts"

export interface AnalysisLimits {
  /** Triangles of the model after triangulation and after placing every 3MF component (MODEL_MAX_TRIANGLES). */
  readonly maxTriangles: number
  /** What a 3MF archive's parts may unpack to, in all, as produced (MODEL_MAX_UNPACKED_BYTES). */
  readonly maxUnpackedBytes: number
}

/** The defaults of MODEL_MAX_TRIANGLES and MODEL_MAX_UNPACKED_BYTES. */
export const DEFAULT_LIMITS: AnalysisLimits = {
  maxTriangles: DEFAULT_MAX_TRIANGLES,
  maxUnpackedBytes: DEFAULT_MAX_UNPACKED_BYTES
}

/** Vertices a model may have: three a triangle (a mesh of T triangles has fewer in practice). */
export const maxVertices = (limits: AnalysisLimits) => 3 * limits.maxTriangles

export const tooManyTriangles = (limits: AnalysisLimits, detail?: string) =>
  new ModelError({
    type: "ModelTooComplex",
    reason: `it has more than ${limits.maxTriangles} triangles (MODEL_MAX_TRIANGLES)${detail === undefined ? "" : `: ${detail}`}`
  })

export const tooManyVertices = (limits: AnalysisLimits, detail?: string) =>
  new ModelError({
    type: "ModelTooComplex",
    reason: `it has more than ${maxVertices(limits)} vertices (3 × MODEL_MAX_TRIANGLES)${detail === undefined ? "" : `: ${detail}`}`
  })

export const unpacksTooLarge = (limits: AnalysisLimits, detail?: string) =>
  new ModelError({
    type: "ModelTooLarge",
    reason: `the 3MF archive unpacks to more than ${limits.maxUnpackedBytes} bytes (MODEL_MAX_UNPACKED_BYTES)${detail === undefined ? "" : `: ${detail}`}`
  })
