/**
 * The model a part is made from: its own file, downloaded (ModelFetcher)
 * and analysed in a worker thread of the ModelAnalyser (never on the request
 * loop), or the file of the catalogue model holding its configuration,
 * analysed when that was written. A file that cannot be read is a 422 saying
 * what is wrong, one over a budget of the analysis (time, memory, triangles,
 * unpacked size) a 422 naming the limit; a download that fails is the model
 * fetcher's error. Models on placeholder hosts (`*.example`) have
 * `geometry: null`, and so no price.
 */
import { Effect } from "effect"
import { CatalogueModel } from "../../domain/resources/catalogue.ts"
import type { ModelEndpoint } from "../../domain/resources/modelFiles.ts"
import type { TicketModel } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import { ModelAnalyser } from "../geometry/ModelAnalyser.ts"
import { ModelFetcher } from "../geometry/ModelFetcher.ts"
import { modelRefusal } from "../geometry/modelRefusal.ts"
import { ownModelFileGeometry, ownModelFileId } from "../modelFiles/ownFiles.ts"
import type { OperationContext } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { asRecord, type InputOf, type RecordOf, type StoredFields } from "../typedRecords.ts"
import { fileNameOf } from "./common.ts"

type CatalogueModelRecord = RecordOf<typeof CatalogueModel>

export interface FoundConfiguration {
  readonly model: CatalogueModelRecord
  readonly configuration: CatalogueModelRecord["configurations"][number]
}

/** The catalogue model (visible to the app) holding the configuration `configurationId`, and that configuration. */
export const findConfiguration = Effect.fnUntraced(function*(appId: string, configurationId: string) {
  const data = yield* (yield* RecordRepository).findByConfiguration(appId, configurationId)
  if (data === undefined) return undefined
  const model = asRecord(CatalogueModel, data)
  const configuration = model.configurations.find((candidate) => candidate.id === configurationId)
  return configuration === undefined ? undefined : { model, configuration }
})

/** Where a part's model comes from: its own file, or a catalogue configuration. */
export type ModelSource = Pick<InputOf<typeof TicketModel>, "modelEndpoint" | "catalogueModelConfigurationId">

/** Whether two versions of a part name the same model (url, file name and unit, or catalogue configuration). */
export const sameModel = (a: ModelSource, b: ModelSource) =>
  (a.modelEndpoint?.url ?? null) === (b.modelEndpoint?.url ?? null)
  && (a.modelEndpoint?.fileName ?? null) === (b.modelEndpoint?.fileName ?? null)
  && (a.modelEndpoint?.unit ?? null) === (b.modelEndpoint?.unit ?? null)
  && (a.catalogueModelConfigurationId ?? null) === (b.catalogueModelConfigurationId ?? null)

/**
 * The geometry of the model file at the endpoint's url, read in the
 * endpoint's `unit` (a 3MF in its own): null when its host is a
 * placeholder; the fetcher's error when the download fails; a 422 naming
 * the file and what is wrong when it cannot be read (`UnreadableModel`,
 * `UnsupportedModelExtension`), naming `modelEndpoint.unit` when that
 * contradicts the file's own (`ModelUnitConflict`), or naming the limit
 * when it exceeds a budget of the analysis (`ModelTooComplex`,
 * `ModelTooLarge`, `ModelAnalysisTimeout`, `ModelAnalysisOutOfMemory`). The
 * analysis counts against `appId`'s share of the analysis threads.
 */
export const modelGeometry = Effect.fnUntraced(function*(endpoint: typeof ModelEndpoint.Type, fileName: string | null, appId: string) {
  const uploaded = ownModelFileId(endpoint.url)
  if (uploaded !== undefined) return yield* ownModelFileGeometry(uploaded, appId, endpoint.unit)
  const fetcher = yield* ModelFetcher
  const bytes = yield* fetcher.fetch(endpoint.url)
  if (bytes === undefined) return null
  const analyser = yield* ModelAnalyser
  return yield* analyser.analyse(bytes, fileName, appId, endpoint.unit).pipe(
    Effect.mapError((error) => modelRefusal(error, fileName ?? endpoint.url))
  )
})

/** A part's model as stored with it. */
export type PartModel = Pick<StoredFields<typeof TicketModel>, "fileName" | "geometry">

/**
 * The file name and geometry of a part's model: its own file, downloaded and
 * analysed; or its catalogue configuration's model (`found`), analysed when
 * that was written (a catalogue model stored before then, without
 * `geometry`, is analysed now).
 */
export const partModel = Effect.fnUntraced(function*(context: OperationContext, part: ModelSource, found: FoundConfiguration | undefined) {
  const endpoint = part.modelEndpoint
  if (endpoint !== undefined) {
    const fileName = fileNameOf(endpoint)
    return { fileName, geometry: yield* modelGeometry(endpoint, fileName, context.appId) }
  }
  if (found === undefined) {
    return yield* EngineError.unknownReference("catalogueModelConfigurationId", "catalogue model configuration", part.catalogueModelConfigurationId ?? "")
  }
  const { geometry, modelEndpoint } = found.model
  const fileName = fileNameOf(modelEndpoint)
  return { fileName, geometry: geometry !== undefined ? geometry : yield* modelGeometry(modelEndpoint, fileName, context.appId) }
})
