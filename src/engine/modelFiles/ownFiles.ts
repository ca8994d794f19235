/**
 * A model file of the service's own as a part's or catalogue model's model
 * (`modelEndpoint.url` = an uploaded file's `url`): read from the database
 * for the caller's app, never over the network, and analysed once per file:
 * the geometry is kept with the file, so every part made from it reuses it.
 * The URL is recognised by its path, `/v1/model-file/{id}/content`, whatever
 * its host (the service's public host is the caller's to know); an id the
 * app does not have, another app's included, is refused as unknown.
 */
import { Effect } from "effect"
import { ownModelFileId } from "../../domain/resources/modelFileUpload.ts"
import { EngineError } from "../EngineError.ts"
import { ModelAnalyser } from "../geometry/ModelAnalyser.ts"
import { MODEL_FETCHER_SOURCE } from "../geometry/modelDownload.ts"
import { findModelFile, keepGeometry, modelFileBytes } from "./store.ts"

export { ownModelFileId }

/** The geometry of the app's uploaded file `id`: kept from its first analysis, else analysed now and kept. */
export const ownModelFileGeometry = Effect.fnUntraced(function*(id: string, appId: string) {
  const file = yield* findModelFile(appId, id)
  if (file === undefined) {
    return yield* EngineError.modelFile({
      status: 422,
      type: "UnknownModelFile",
      message: `modelEndpoint.url: no model file ${id} (uploaded files are read for the app that uploaded them)`,
      source: MODEL_FETCHER_SOURCE
    })
  }
  if (file.geometry !== null) return file.geometry
  const bytes = yield* modelFileBytes(file.id)
  const analyser = yield* ModelAnalyser
  const geometry = yield* analyser.analyse(bytes, file.fileName, appId).pipe(
    Effect.mapError((error) => {
      const type = error.type ?? "UnreadableModel"
      const what = type === "UnreadableModel" ? "cannot be read" : "cannot be analysed"
      return EngineError.modelFile({ status: 422, type, message: `modelEndpoint: the model file ${file.fileName} ${what}: ${error.reason}` })
    })
  )
  yield* keepGeometry(appId, file.id, geometry)
  return geometry
})
