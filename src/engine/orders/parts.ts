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
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TicketModel } from "../../domain/resources/orders.ts"
import { crudOperations, type RecordHooks } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import { ModelAnalyser } from "../geometry/ModelAnalyser.ts"
import { ModelFetcher } from "../geometry/ModelFetcher.ts"
import type { Operation, OperationContext, Operations } from "../Operation.ts"
import { pricePart } from "../pricing/pricePart.ts"
import { GLOBAL_APP, RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { arrayOf, fileNameOf, listAll, numeric, objectOf, param, payloadOf, text } from "./common.ts"

// ---------------------------------------------------------------------------
// Catalogue configurations

export interface FoundConfiguration {
  readonly model: StoredRecord
  readonly configuration: StoredRecord
}

/** The catalogue model (visible to the app) holding the configuration `configurationId`, and that configuration. */
export const findConfiguration = (appId: string, configurationId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ data: StoredRecord }>`
      SELECT data FROM engine_record
      WHERE resource = 'catalogueModel' AND app_id IN (${appId}, ${GLOBAL_APP})
        AND data->'configurations' @> ${JSON.stringify([{ id: configurationId }])}::jsonb
      ORDER BY created_at LIMIT 1`
    const model = rows[0]?.data
    if (model === undefined) return undefined
    const configuration = arrayOf(model.configurations)
      .map(objectOf)
      .find((candidate) => candidate !== undefined && candidate.id === configurationId)
    return configuration === undefined ? undefined : ({ model, configuration } satisfies FoundConfiguration)
  })

// ---------------------------------------------------------------------------
// Checks shared by part writes

/** Each `productionParameterIds` entry must name a parameter field of the technology and one of its values. */
const checkParameters = (context: OperationContext, technologyId: string, parameters: StoredRecord | undefined) =>
  Effect.gen(function*() {
    const entries = Object.entries(parameters ?? {})
    if (entries.length === 0) return
    const fields = yield* listAll("productionParameterField", context.appId, { technologyId })
    for (const [name, valueId] of entries) {
      const field = fields.find((candidate) => candidate.name === name)
      if (field === undefined) {
        return yield* EngineError.unknownReference(`productionParameterIds.${name}`, `production parameter field of ${technologyId}`, name)
      }
      const values = arrayOf(field.values).map(objectOf)
      if (!values.some((value) => value?.id === valueId)) {
        return yield* EngineError.unknownReference(`productionParameterIds.${name}`, `value of ${String(field.id)}`, String(valueId))
      }
    }
  })

/** Each service must exist for the app and apply to the technology; `field` names the list in errors. */
export const checkServices = (
  context: OperationContext,
  technologyId: string,
  serviceIds: ReadonlyArray<unknown>,
  field: string
) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    for (const [index, serviceId] of serviceIds.entries()) {
      const service = yield* records.find("service", context.appId, String(serviceId))
      if (service === undefined) return yield* EngineError.unknownReference(`${field}.${index}`, "service", String(serviceId))
      if (!arrayOf(service.technologyIds).includes(technologyId)) {
        return yield* EngineError.invalid(`${field}.${index}: service ${String(serviceId)} does not apply to technology ${technologyId}`)
      }
    }
  })

// ---------------------------------------------------------------------------
// The part's model

/** Whether two versions of a part name the same model (url, file name or catalogue configuration). */
const sameModel = (a: StoredRecord, b: StoredRecord) => {
  const endpointA = objectOf(a.modelEndpoint)
  const endpointB = objectOf(b.modelEndpoint)
  return (endpointA?.url ?? null) === (endpointB?.url ?? null)
    && (endpointA?.fileName ?? null) === (endpointB?.fileName ?? null)
    && (a.catalogueModelConfigurationId ?? null) === (b.catalogueModelConfigurationId ?? null)
}

/**
 * The geometry of the model file at the endpoint's url: null when there is
 * no url or its host is a placeholder; the fetcher's error when the download
 * fails; a 422 naming the file and what is wrong when it cannot be read
 * (`UnreadableModel`), or naming the limit when it exceeds a budget of the
 * analysis (`ModelTooComplex`, `ModelTooLarge`, `ModelAnalysisTimeout`,
 * `ModelAnalysisOutOfMemory`). The analysis counts against `appId`'s share
 * of the analysis threads.
 */
export const modelGeometry = (endpoint: StoredRecord | undefined, fileName: string | null, appId: string) =>
  Effect.gen(function*() {
    const url = endpoint === undefined ? undefined : text(endpoint, "url")
    if (url === undefined) return null
    const fetcher = yield* ModelFetcher
    const bytes = yield* fetcher.fetch(url)
    if (bytes === undefined) return null
    const analyser = yield* ModelAnalyser
    return yield* analyser.analyse(bytes, fileName, appId).pipe(
      Effect.mapError((error) => {
        const type = error.type ?? "UnreadableModel"
        const what = type === "UnreadableModel" ? "cannot be read" : "cannot be analysed"
        return new EngineError({ status: 422, type, message: `modelEndpoint: the model file ${fileName ?? url} ${what}: ${error.reason}` })
      })
    )
  })

/**
 * The file name and geometry of a part's model: its own file, downloaded and
 * analysed; or its catalogue model's, analysed when that was written (a
 * catalogue model stored before then is analysed now).
 */
const partModel = (context: OperationContext, part: StoredRecord) =>
  Effect.gen(function*() {
    const endpoint = objectOf(part.modelEndpoint)
    if (endpoint !== undefined) {
      const fileName = fileNameOf(endpoint)
      return { fileName, geometry: yield* modelGeometry(endpoint, fileName, context.appId) }
    }
    const configurationId = text(part, "catalogueModelConfigurationId") ?? ""
    const found = yield* findConfiguration(context.appId, configurationId)
    if (found === undefined) {
      return yield* EngineError.unknownReference("catalogueModelConfigurationId", "catalogue model configuration", configurationId)
    }
    const catalogueEndpoint = objectOf(found.model.modelEndpoint)
    const fileName = fileNameOf(catalogueEndpoint)
    const geometry = found.model.geometry !== undefined
      ? found.model.geometry
      : yield* modelGeometry(catalogueEndpoint, fileName, context.appId)
    return { fileName, geometry }
  })

/**
 * Completes a part before it is stored: a new model's file name and
 * geometry (a replace with the same model keeps them), then the price
 * calculation, on every write: new parameters, quantity, material or
 * services give new production times and prices.
 */
const prepareTicketModel: NonNullable<RecordHooks["prepare"]> = (context, input, previous) =>
  Effect.gen(function*() {
    const technologyId = text(input, "technologyId") ?? ""
    yield* checkParameters(context, technologyId, objectOf(input.productionParameterIds))
    yield* checkServices(context, technologyId, arrayOf(input.serviceIds), "serviceIds")
    if (previous !== undefined && sameModel(previous, input)) return yield* pricePart(context, input)
    return yield* pricePart(context, { ...input, ...(yield* partModel(context, input)) })
  })

// ---------------------------------------------------------------------------
// Part operations

/** Stores the part's model as its next model version (the first for a new part, with no lookup). */
const addVersion = (context: OperationContext, part: StoredRecord, first = false) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const partId = String(part.id)
    const existing = first ? [] : yield* listAll("modelVersion", context.appId, { ticketModelId: partId })
    const version = existing.reduce((max, record) => Math.max(max, numeric(record, "version") ?? 0), 0) + 1
    return yield* records.insert("modelVersion", context.appId, {
      ticketModelId: partId,
      version,
      fileName: part.fileName ?? null,
      modelEndpoint: part.modelEndpoint ?? null,
      geometry: part.geometry ?? null
    })
  })

/**
 * A part's hooks: its model versions go with it, written in the part's own
 * transaction (the first with a new part, the next when its model changes),
 * and removed with it, as are its machining strategies.
 */
const ticketModelHooks: RecordHooks = {
  prepare: prepareTicketModel,
  written: (context, part, previous) =>
    previous !== undefined && sameModel(previous, part) ? Effect.void : Effect.asVoid(addVersion(context, part, previous === undefined)),
  removed: (context, part) =>
    Effect.gen(function*() {
      const records = yield* RecordRepository
      for (const resource of ["modelVersion", "machiningStrategy"]) {
        for (const record of yield* listAll(resource, context.appId, { ticketModelId: String(part.id) })) {
          yield* records.remove(resource, context.appId, String(record.id))
        }
      }
    })
}

export const partHooks: Readonly<Record<string, RecordHooks>> = { ticketModel: ticketModelHooks }

const generic = crudOperations(TicketModel, ticketModelHooks)
const createPart = generic["ticketModel.create"]!

/** `POST /ticket-model/from-catalogue`: all parts or none. */
const fromCatalogue: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const sql = yield* SqlClient.SqlClient
    const body = payloadOf(request)
    const ticketId = text(body, "ticketId") ?? ""
    if ((yield* records.find("ticket", context.appId, ticketId)) === undefined) {
      return yield* EngineError.unknownReference("ticketId", "ticket", ticketId)
    }
    const requested = arrayOf(body.parts).map((part) => objectOf(part) ?? {})
    const found = yield* Effect.forEach(requested, (part, index) =>
      Effect.gen(function*() {
        const configurationId = text(part, "catalogueModelConfigurationId") ?? ""
        const match = yield* findConfiguration(context.appId, configurationId)
        if (match === undefined) {
          return yield* EngineError.unknownReference(
            `parts.${index}.catalogueModelConfigurationId`,
            "catalogue model configuration",
            configurationId
          )
        }
        return { ...match, configurationId, quantity: part.quantity }
      }))
    return yield* sql.withTransaction(Effect.forEach(found, ({ configuration, configurationId, model, quantity }) => {
      const payload: Record<string, unknown> = {
        ticketId,
        name: text(configuration, "name") ?? text(model, "name"),
        catalogueModelConfigurationId: configurationId,
        technologyId: configuration.technologyId,
        materialId: configuration.materialId,
        quantity
      }
      if (configuration.colourId !== undefined) payload.colourId = configuration.colourId
      if (configuration.productionParameterIds !== undefined) payload.productionParameterIds = configuration.productionParameterIds
      return createPart(context, { payload })
    }))
  })

// ---------------------------------------------------------------------------
// Machining strategies and post-processing

const STRATEGY_KEYS = ["ticketModelId", "serviceId", "strategy", "toolIds", "stepover", "notes"] as const

const strategyOf = (record: StoredRecord) => Object.fromEntries(STRATEGY_KEYS.filter((key) => record[key] !== undefined).map((key) => [key, record[key]]))

const strategyId = (ticketModelId: string, serviceId: string) => `${ticketModelId}:${serviceId}`

const getMachiningStrategy: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const id = strategyId(param(request, "ticketModelId"), param(request, "serviceId"))
    const found = yield* records.find("machiningStrategy", context.appId, id)
    return found === undefined ? null : strategyOf(found)
  })

const setMachiningStrategy: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const ticketModelId = param(request, "ticketModelId")
    const serviceId = param(request, "serviceId")
    if ((yield* records.find("ticketModel", context.appId, ticketModelId)) === undefined) {
      return yield* EngineError.notFound("ticketModel", ticketModelId)
    }
    if ((yield* records.find("service", context.appId, serviceId)) === undefined) {
      return yield* EngineError.unknownReference("serviceId", "service", serviceId)
    }
    const id = strategyId(ticketModelId, serviceId)
    const data = { ...payloadOf(request), ticketModelId, serviceId }
    const existing = yield* records.find("machiningStrategy", context.appId, id)
    const stored = existing === undefined
      ? yield* records.insert("machiningStrategy", context.appId, data, { id })
      : yield* records.replace("machiningStrategy", context.appId, id, data)
    return strategyOf(stored ?? data)
  })

const setPostProcessing: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const id = param(request, "ticketModelId")
    const part = yield* records.find("ticketModel", context.appId, id)
    if (part === undefined) return yield* EngineError.notFound("ticketModel", id)
    const serviceIds = arrayOf(payloadOf(request).serviceIds)
    yield* checkServices(context, text(part, "technologyId") ?? "", serviceIds, "serviceIds")
    const priced = yield* pricePart(context, { ...part, serviceIds })
    return (yield* records.replace("ticketModel", context.appId, id, priced)) ?? (yield* EngineError.notFound("ticketModel", id))
  })

// ---------------------------------------------------------------------------
// Model versions

/** A value at a dotted path of a record, if it is a string, a finite number or a boolean. */
const valueAt = (record: StoredRecord, path: string): string | number | boolean | null => {
  let current: unknown = record
  for (const key of path.split(".")) {
    const object = objectOf(current)
    if (object === undefined || !Object.hasOwn(object, key)) return null
    current = object[key]
  }
  if (typeof current === "string" || typeof current === "boolean") return current
  return typeof current === "number" && Number.isFinite(current) ? current : null
}

const fieldsResolve: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const id = param(request, "id")
    const version = yield* records.find("modelVersion", context.appId, id)
    if (version === undefined) return yield* EngineError.notFound("modelVersion", id)
    const fields = arrayOf(payloadOf(request).fields).map(String)
    return { modelVersionId: id, values: Object.fromEntries(fields.map((field) => [field, valueAt(version, field)])) }
  })

export const partWorkflows: Operations = {
  "ticketModel.create": createPart,
  "ticketModel.replace": generic["ticketModel.replace"]!,
  "ticketModel.remove": generic["ticketModel.remove"]!,
  "ticketModel.fromCatalogue": fromCatalogue,
  "ticketModel.getMachiningStrategy": getMachiningStrategy,
  "ticketModel.setMachiningStrategy": setMachiningStrategy,
  "ticketModel.setPostProcessing": setPostProcessing,
  "modelVersion.fieldsResolve": fieldsResolve
}
