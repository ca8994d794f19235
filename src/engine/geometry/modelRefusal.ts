/**
 * A model file's refusal as the API answers it: a 422 whose `type` is the
 * ModelError's (`UnreadableModel` when it has none) and whose message says
 * which field and file, and what is wrong. A unit that contradicts the
 * file's own names `modelEndpoint.unit`; any other names the file.
 */
import { EngineError } from "../EngineError.ts"
import type { ModelError } from "./mesh.ts"

export const modelRefusal = (error: ModelError, file: string): EngineError => {
  const type = error.type ?? "UnreadableModel"
  if (type === "ModelUnitConflict") return EngineError.modelFile({ status: 422, type, message: `modelEndpoint.unit: the model file ${file}: ${error.reason}` })
  const what = type === "UnreadableModel" || type === "UnsupportedModelExtension" ? "cannot be read" : "cannot be analysed"
  return EngineError.modelFile({ status: 422, type, message: `modelEndpoint: the model file ${file} ${what}: ${error.reason}` })
}
