/**
 * A model file of the service's own as a part's or catalogue model's model
 * (`modelEndpoint.url` = an uploaded file's `url`): read from the database
 * for the caller's app, never over the network, and analysed once per file:
 * the geometry is kept with the file, so every part made from it reuses it.
 * The URL is recognised by its path, `/v1/model-file/{id}/content`, whatever
 * its host (the service's public host is the caller's to know); an id the
 * app does not have, another app's included, is refused as unknown.
 *
 * The unit: the endpoint's, else the one the file was uploaded in; the two
 * may not differ (a 422 naming `modelEndpoint.unit`). The kept geometry is
 * the file read in its upload's unit; a part that states another (of an
 * upload that stated none) has the file analysed in it, not kept, unless
 * the kept geometry already is in that unit.
 */
import { Effect } from "effect"
import type { ModelUnit } from "../../domain/ModelUnits.ts"
import { ownModelFileId } from "../../domain/resources/modelFileUpload.ts"
import { EngineError } from "../EngineError.ts"
import { ModelAnalyser } from "../geometry/ModelAnalyser.ts"
import { MODEL_FETCHER_SOURCE } from "../geometry/modelDownload.ts"
import { modelRefusal } from "../geometry/modelRefusal.ts"
import { findModelFile, keepGeometry, modelFileBytes } from "./ModelFileRepository.ts"

export { ownModelFileId }

/** The geometry of the app's uploaded file `id` in `stated` (or its upload's unit): kept from its first analysis, else analysed now. */
export const ownModelFileGeometry = Effect.fnUntraced(function*(id: string, appId: string, stated: ModelUnit | undefined) {
  const file = yield* findModelFile(appId, id)
  if (file === undefined) {
    return yield* EngineError.modelFile({
      status: 422,
      type: "UnknownModelFile",
      message: `modelEndpoint.url: no model file ${id} (uploaded files are read for the app that uploaded them)`,
      source: MODEL_FETCHER_SOURCE
    })
  }
  if (stated !== undefined && file.unit !== undefined && stated !== file.unit) {
    return yield* EngineError.modelFile({
      status: 422,
      type: "ModelUnitConflict",
      message: `modelEndpoint.unit: "${stated}" contradicts the unit the model file ${file.fileName} was uploaded in, "${file.unit}": ` +
        `state "${file.unit}" or leave the unit out`
    })
  }
  const unit = stated ?? file.unit
  const kept = file.geometry
  if (kept !== null && (unit === file.unit || kept.unit === unit)) return kept
  const bytes = yield* modelFileBytes(file.id)
  const analyser = yield* ModelAnalyser
  const geometry = yield* analyser.analyse(bytes, file.fileName, appId, unit).pipe(
    Effect.mapError((error) => modelRefusal(error, file.fileName))
  )
  if (unit === file.unit) yield* keepGeometry(appId, file.id, geometry)
  return geometry
})
