/**
 * Parts (ticket models): the model file a part is made from, its model
 * versions, post-processing services, machining strategies, parts from a
 * catalogue, similar parts and the fields of a model version.
 *
 * A part with a `modelEndpoint` has its model file downloaded (ModelFetcher)
 * and analysed when it is created or its model changes, in a worker thread
 * of the ModelAnalyser (never on the request loop): `geometry` is the
 * file's (docs/geometry.md), and so is its model version's. A file that
 * cannot be read is a 422 saying what is wrong, one over a budget of the
 * analysis (time, memory, triangles, unpacked size) a 422 naming the limit;
 * a download that fails is the model fetcher's error. A part from a
 * catalogue configuration is made from its catalogue model's file. Models
 * on placeholder hosts (`*.example`) have `geometry: null`, and so no
 * price. Every write prices the part again (docs/pricing.md); a part whose
 * model changes gets a new model version.
 */
import { Effect, Predicate, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { defineResource } from "../../domain/Resource.ts"
import { CatalogueModel } from "../../domain/resources/catalogue.ts"
import type { ModelEndpoint } from "../../domain/resources/modelFiles.ts"
import { MachiningStrategy, ModelVersion, Ticket, TicketModel } from "../../domain/resources/orders.ts"
import { PostProcessingService, ProductionParameterField } from "../../domain/resources/reference.ts"
import {
  asRecord,
  findRecord,
  getRecord,
  type InputOf,
  listRecords,
  type PrepareInput,
  recordHandlers,
  type RecordHooks,
  type RecordOf,
  type StoredFields
} from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import { ModelAnalyser } from "../geometry/ModelAnalyser.ts"
import { ModelFetcher } from "../geometry/ModelFetcher.ts"
import type { GroupHandlers, OperationContext, Step } from "../Operation.ts"
import { pricePart } from "../pricing/pricePart.ts"
import { GLOBAL_APP, RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { fileNameOf } from "./common.ts"

type Part = RecordOf<typeof TicketModel>
type PartFields = StoredFields<typeof TicketModel>
type CatalogueModelRecord = RecordOf<typeof CatalogueModel>

// ---------------------------------------------------------------------------
// Catalogue configurations

export interface FoundConfiguration {
  readonly model: CatalogueModelRecord
  readonly configuration: CatalogueModelRecord["configurations"][number]
}

/** The catalogue model (visible to the app) holding the configuration `configurationId`, and that configuration. */
export const findConfiguration = (appId: string, configurationId: string): Step<FoundConfiguration | undefined> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ data: StoredRecord }>`
      SELECT data FROM engine_record
      WHERE resource = 'catalogueModel' AND app_id IN (${appId}, ${GLOBAL_APP})
        AND data->'configurations' @> ${JSON.stringify([{ id: configurationId }])}::jsonb
      ORDER BY created_at LIMIT 1`
    const data = rows[0]?.data
    if (data === undefined) return undefined
    const model = asRecord(CatalogueModel, data)
    const configuration = model.configurations.find((candidate) => candidate.id === configurationId)
    return configuration === undefined ? undefined : { model, configuration }
  })

// ---------------------------------------------------------------------------
// Checks shared by part writes

/** Each `productionParameterIds` entry must name a parameter field of the technology and one of its values. */
const checkParameters = (context: OperationContext, technologyId: string, parameters: PartFields["productionParameterIds"]) =>
  Effect.gen(function*() {
    const entries = Object.entries(parameters ?? {})
    if (entries.length === 0) return
    const fields = yield* listRecords(ProductionParameterField, context.appId, { technologyId })
    for (const [name, valueId] of entries) {
      const field = fields.find((candidate) => candidate.name === name)
      if (field === undefined) {
        return yield* EngineError.unknownReference(`productionParameterIds.${name}`, `production parameter field of ${technologyId}`, name)
      }
      if (!field.values.some((value) => value.id === valueId)) {
        return yield* EngineError.unknownReference(`productionParameterIds.${name}`, `value of ${field.id}`, valueId)
      }
    }
  })

/** Each service must exist for the app and apply to the technology; `field` names the list in errors. */
export const checkServices = (
  context: OperationContext,
  technologyId: string,
  serviceIds: ReadonlyArray<string>,
  field: string
) =>
  Effect.gen(function*() {
    for (const [index, serviceId] of serviceIds.entries()) {
      const service = yield* findRecord(PostProcessingService, context.appId, serviceId)
      if (service === undefined) return yield* EngineError.unknownReference(`${field}.${index}`, "service", serviceId)
      if (!service.technologyIds.includes(technologyId)) {
        return yield* EngineError.invalid(`${field}.${index}: service ${serviceId} does not apply to technology ${technologyId}`)
      }
    }
  })

// ---------------------------------------------------------------------------
// The part's model

/** Where a part's model comes from: its own file, or a catalogue configuration. */
type ModelSource = Pick<InputOf<typeof TicketModel>, "modelEndpoint" | "catalogueModelConfigurationId">

/** Whether two versions of a part name the same model (url, file name or catalogue configuration). */
const sameModel = (a: ModelSource, b: ModelSource) =>
  (a.modelEndpoint?.url ?? null) === (b.modelEndpoint?.url ?? null)
  && (a.modelEndpoint?.fileName ?? null) === (b.modelEndpoint?.fileName ?? null)
  && (a.catalogueModelConfigurationId ?? null) === (b.catalogueModelConfigurationId ?? null)

/**
 * The geometry of the model file at the endpoint's url: null when its host
 * is a placeholder; the fetcher's error when the download fails; a 422
 * naming the file and what is wrong when it cannot be read
 * (`UnreadableModel`), or naming the limit when it exceeds a budget of the
 * analysis (`ModelTooComplex`, `ModelTooLarge`, `ModelAnalysisTimeout`,
 * `ModelAnalysisOutOfMemory`). The analysis counts against `appId`'s share
 * of the analysis threads.
 */
export const modelGeometry = (endpoint: typeof ModelEndpoint.Type, fileName: string | null, appId: string) =>
  Effect.gen(function*() {
    const fetcher = yield* ModelFetcher
    const bytes = yield* fetcher.fetch(endpoint.url)
    if (bytes === undefined) return null
    const analyser = yield* ModelAnalyser
    return yield* analyser.analyse(bytes, fileName, appId).pipe(
      Effect.mapError((error) => {
        const type = error.type ?? "UnreadableModel"
        const what = type === "UnreadableModel" ? "cannot be read" : "cannot be analysed"
        return EngineError.modelFile({ status: 422, type, message: `modelEndpoint: the model file ${fileName ?? endpoint.url} ${what}: ${error.reason}` })
      })
    )
  })

/** A part's model as stored with it. */
type PartModel = Pick<PartFields, "fileName" | "geometry">

/**
 * The file name and geometry of a part's model: its own file, downloaded and
 * analysed; or its catalogue model's, analysed when that was written (a
 * catalogue model stored before then, without `geometry`, is analysed now).
 */
const partModel = (context: OperationContext, part: ModelSource): Step<PartModel> =>
  Effect.gen(function*() {
    const endpoint = part.modelEndpoint
    if (endpoint !== undefined) {
      const fileName = fileNameOf(endpoint)
      return { fileName, geometry: yield* modelGeometry(endpoint, fileName, context.appId) }
    }
    const configurationId = part.catalogueModelConfigurationId ?? ""
    const found = yield* findConfiguration(context.appId, configurationId)
    if (found === undefined) {
      return yield* EngineError.unknownReference("catalogueModelConfigurationId", "catalogue model configuration", configurationId)
    }
    const { geometry, modelEndpoint } = found.model
    const fileName = fileNameOf(modelEndpoint)
    return { fileName, geometry: geometry !== undefined ? geometry : yield* modelGeometry(modelEndpoint, fileName, context.appId) }
  })

/**
 * Completes a part before it is stored: a new model's file name and
 * geometry (a replace with the same model keeps them), then the price
 * calculation, on every write: new parameters, quantity, material or
 * services give new production times and prices.
 */
const prepareTicketModel = (context: OperationContext, input: PrepareInput<typeof TicketModel>, previous: Part | undefined): Step<PartFields> =>
  Effect.gen(function*() {
    yield* checkParameters(context, input.technologyId, input.productionParameterIds)
    yield* checkServices(context, input.technologyId, input.serviceIds ?? [], "serviceIds")
    const model: PartModel = previous !== undefined && sameModel(previous, input)
      ? { fileName: previous.fileName, geometry: previous.geometry }
      : yield* partModel(context, input)
    return yield* pricePart(context, { ...input, ...model })
  })

// ---------------------------------------------------------------------------
// Part operations

/** Stores the part's model as its next model version (the first for a new part, with no lookup). */
const addVersion = (context: OperationContext, part: Part, first = false) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const existing = first ? [] : yield* listRecords(ModelVersion, context.appId, { ticketModelId: part.id })
    const version: StoredFields<typeof ModelVersion> = {
      ticketModelId: part.id,
      version: existing.reduce((max, record) => Math.max(max, record.version), 0) + 1,
      fileName: part.fileName,
      modelEndpoint: part.modelEndpoint ?? null,
      geometry: part.geometry
    }
    return yield* records.insert(ModelVersion.name, context.appId, version)
  })

/**
 * Machining strategies are stored as records of their own, one per part and
 * service (id `<ticketModelId>:<serviceId>`), with the fields the API answers.
 */
const MachiningStrategies = defineResource({
  name: "machiningStrategy",
  path: "/ticket-model/machining-strategy",
  title: "Machining strategy",
  fields: MachiningStrategy.fields,
  filters: ["ticketModelId"]
})

/** Removes the records of `resource` that belong to part `partId`. */
const removeOfPart = <R extends typeof ModelVersion | typeof MachiningStrategies>(resource: R, context: OperationContext, partId: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    for (const record of yield* listRecords(resource, context.appId, { ticketModelId: partId })) {
      yield* records.remove(resource.name, context.appId, record.id)
    }
  })

/**
 * A part's hooks: its model versions go with it, written in the part's own
 * transaction (the first with a new part, the next when its model changes),
 * and removed with it, as are its machining strategies.
 */
const ticketModelHooks: RecordHooks<typeof TicketModel> = {
  prepare: prepareTicketModel,
  written: (context, part, previous) =>
    previous !== undefined && sameModel(previous, part) ? Effect.void : Effect.asVoid(addVersion(context, part, previous === undefined)),
  removed: (context, part) =>
    Effect.gen(function*() {
      yield* removeOfPart(ModelVersion, context, part.id)
      yield* removeOfPart(MachiningStrategies, context, part.id)
    })
}

const parts = recordHandlers(TicketModel, ticketModelHooks)

type PartHandlers = GroupHandlers<"ticketModel">

/** `POST /ticket-model/from-catalogue`: all parts or none. */
const fromCatalogue: PartHandlers["fromCatalogue"] = (context, { payload: { parts: requested, ticketId } }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if ((yield* findRecord(Ticket, context.appId, ticketId)) === undefined) {
      return yield* EngineError.unknownReference("ticketId", "ticket", ticketId)
    }
    const found = yield* Effect.forEach(requested, ({ catalogueModelConfigurationId, quantity }, index) =>
      Effect.gen(function*() {
        const match = yield* findConfiguration(context.appId, catalogueModelConfigurationId)
        if (match === undefined) {
          return yield* EngineError.unknownReference(
            `parts.${index}.catalogueModelConfigurationId`,
            "catalogue model configuration",
            catalogueModelConfigurationId
          )
        }
        return { ...match, configurationId: catalogueModelConfigurationId, quantity }
      }))
    return yield* sql.withTransaction(Effect.forEach(found, ({ configuration, configurationId, model, quantity }) => {
      const payload: InputOf<typeof TicketModel> = {
        ticketId,
        name: configuration.name ?? model.name,
        catalogueModelConfigurationId: configurationId,
        technologyId: configuration.technologyId,
        materialId: configuration.materialId,
        quantity,
        ...(configuration.colourId === undefined ? {} : { colourId: configuration.colourId }),
        ...(configuration.productionParameterIds === undefined ? {} : { productionParameterIds: configuration.productionParameterIds })
      }
      return parts.create(context, { payload })
    }))
  })

// ---------------------------------------------------------------------------
// Machining strategies and post-processing

/** A stored strategy as the API answers it: without the record's id and timestamps. */
const strategyOf = ({ createdAt: _createdAt, id: _id, updatedAt: _updatedAt, ...strategy }: RecordOf<typeof MachiningStrategies>) => strategy

const strategyId = (ticketModelId: string, serviceId: string) => `${ticketModelId}:${serviceId}`

const getMachiningStrategy: PartHandlers["getMachiningStrategy"] = (context, { params: { serviceId, ticketModelId } }) =>
  Effect.map(findRecord(MachiningStrategies, context.appId, strategyId(ticketModelId, serviceId)), (found) => found === undefined ? null : strategyOf(found))

const setMachiningStrategy: PartHandlers["setMachiningStrategy"] = (context, { params: { serviceId, ticketModelId }, payload }) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    yield* getRecord(TicketModel, context.appId, ticketModelId)
    if ((yield* findRecord(PostProcessingService, context.appId, serviceId)) === undefined) {
      return yield* EngineError.unknownReference("serviceId", "service", serviceId)
    }
    const id = strategyId(ticketModelId, serviceId)
    const data: typeof MachiningStrategy.Type = { ...payload, ticketModelId, serviceId }
    const existing = yield* findRecord(MachiningStrategies, context.appId, id)
    const stored = existing === undefined
      ? yield* records.insert(MachiningStrategies.name, context.appId, data, { id })
      : yield* records.replace(MachiningStrategies.name, context.appId, id, data)
    return stored === undefined ? data : strategyOf(asRecord(MachiningStrategies, stored))
  })

const setPostProcessing: PartHandlers["setPostProcessing"] = (context, { params: { ticketModelId: id }, payload: { serviceIds } }) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const part = yield* getRecord(TicketModel, context.appId, id)
    yield* checkServices(context, part.technologyId, serviceIds, "serviceIds")
    const priced = yield* pricePart(context, { ...part, serviceIds })
    const replaced = yield* records.replace(TicketModel.name, context.appId, id, priced)
    if (replaced === undefined) return yield* EngineError.notFound(TicketModel.name, id)
    return asRecord(TicketModel, replaced)
  })

/** The part group's handlers, but for `similarity` (similarity.ts). */
export const partHandlers: Omit<PartHandlers, "similarity"> = {
  list: parts.list,
  create: parts.create,
  get: parts.get,
  replace: parts.replace,
  remove: parts.remove,
  fromCatalogue,
  getMachiningStrategy,
  setMachiningStrategy,
  setPostProcessing
}

// ---------------------------------------------------------------------------
// Model versions

/** What a field resolves to: a string, a finite number or a boolean; anything else (an object, a list) is null. */
const FieldValue = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean])
const isFieldValue = Schema.is(FieldValue)

/** The value at a dotted path of a record: the caller names any path, so the record is walked as the JSON it is stored as. */
const valueAt = (record: unknown, path: string): typeof FieldValue.Type | null => {
  let current = record
  for (const key of path.split(".")) {
    if (!Predicate.isObject(current) || !Object.hasOwn(current, key)) return null
    current = current[key]
  }
  return isFieldValue(current) ? current : null
}

export const fieldsResolve: GroupHandlers<"modelVersion">["fieldsResolve"] = (context, { params: { id }, payload: { fields } }) =>
  Effect.map(getRecord(ModelVersion, context.appId, id), (version) => ({
    modelVersionId: id,
    values: Object.fromEntries(fields.map((field) => [field, valueAt(version, field)]))
  }))
