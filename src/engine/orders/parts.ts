/**
 * Parts (ticket models). Every write checks what the part may be made of
 * (eligibility.ts; a part from a catalogue configuration is made as the
 * configuration says, asConfigured.ts), finds its model (partModel.ts; a replace with the same
 * model keeps it) and prices it again (docs/pricing.md). A part changes only
 * while its ticket is draft or quoted; a change while quoted supersedes the
 * ticket's open quotes and returns it to draft (ticketState.ts). Its model
 * versions and machining strategies go with it.
 */
import { Effect } from "effect"
import { Ticket, TicketModel } from "../../domain/resources/orders.ts"
import { ServiceJob } from "../../domain/resources/production.ts"
import { recordHandlers, type RecordHooks, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import { usedBy } from "../integrity.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import { pricePart } from "../pricing/pricePart.ts"
import { pricedParameters } from "../referenceData.ts"
import { inTransaction } from "../transaction.ts"
import { asRecord, findRecord, getRecord, type PrepareInput, type RecordOf } from "../typedRecords.ts"
import { replaceLocked } from "../writes.ts"
import { asConfigured, checkAgreement, configuredMakeup } from "./asConfigured.ts"
import { checkMaterial, checkParameters, checkServices } from "./eligibility.ts"
import { getMachiningStrategy, pruneStrategies, setMachiningStrategy } from "./machiningStrategies.ts"
import { manufacturabilityOf } from "./manufacturability.ts"
import { addVersion, removeVersions } from "./modelVersions.ts"
import { recordPartEvents } from "./partEvents.ts"
import { findConfiguration, partModel, sameModel } from "./partModel.ts"
import { checkOpenForChanges, ticketsChanged } from "./ticketState.ts"

type Part = RecordOf<typeof TicketModel>

/** The tickets a write of a part changes: its own, and the one it leaves. */
const ticketsOf = (part: { readonly ticketId: string }, previous: Part | undefined) => [part.ticketId, ...(previous === undefined ? [] : [previous.ticketId])]

/** How the part is made: as its catalogue configuration says (asConfigured.ts), or as the caller says with its own model file. */
const makeupOf = Effect.fnUntraced(function*(context: OperationContext, input: PrepareInput<typeof TicketModel>) {
  const configurationId = input.catalogueModelConfigurationId
  if (configurationId !== undefined) {
    const found = yield* findConfiguration(context.appId, configurationId)
    if (found === undefined) return yield* EngineError.unknownReference("catalogueModelConfigurationId", "catalogue model configuration", configurationId)
    return { part: yield* asConfigured(context, input, found), configuration: found }
  }
  const { materialId, technologyId } = input
  // The body's schema requires both with a model file; a stored record always has them.
  if (technologyId === undefined) return yield* EngineError.invalid("technologyId: required with modelEndpoint")
  if (materialId === undefined) return yield* EngineError.invalid("materialId: required with modelEndpoint")
  return { part: { ...input, technologyId, materialId }, configuration: undefined }
})

/** A part in a service job is of the job's technology: its own changes only once no job names it. */
const checkJobsOf = Effect.fnUntraced(function*(context: OperationContext, previous: Part, technologyId: string) {
  if (previous.technologyId === technologyId) return
  const jobs = yield* usedBy(TicketModel.name, context.appId, previous, [ServiceJob.name])
  if (jobs !== undefined) {
    return yield* EngineError.invalid(
      `technologyId: part ${previous.name ?? previous.id} is in ${jobs} of ${previous.technologyId}: its technology cannot change to ${technologyId}`
    )
  }
})

/**
 * Completes a part before it is stored: its tickets open for changes, what
 * it is made of eligible (and of its service jobs' technology), every
 * production parameter of its technology with the value it is priced with
 * (pricedParameters), a new model's file name and geometry (a replace
 * with the same model keeps them), then the price calculation, on every
 * write: new parameters, quantity, material or services give new production
 * times and prices; and its manufacturability for its technology, on the
 * app's machines as they are (manufacturability.ts).
 */
const prepareTicketModel = Effect.fnUntraced(function*(context: OperationContext, input: PrepareInput<typeof TicketModel>, previous: Part | undefined) {
  yield* checkOpenForChanges(context, ticketsOf(input, previous))
  const { configuration, part: made } = yield* makeupOf(context, input)
  if (previous !== undefined) yield* checkJobsOf(context, previous, made.technologyId)
  yield* checkMaterial(context, made)
  yield* checkParameters(context, made.technologyId, made.productionParameterIds)
  yield* checkServices(context, made.technologyId, made.serviceIds ?? [], "serviceIds")
  const part = { ...made, productionParameterIds: pricedParameters(made.technologyId, made.productionParameterIds) }
  const model = previous !== undefined && sameModel(previous, part)
    ? { fileName: previous.fileName, geometry: previous.geometry }
    : yield* partModel(context, part, configuration)
  const manufacturability = yield* manufacturabilityOf(context, part.technologyId, model.geometry)
  return yield* pricePart(context, { ...part, ...model, manufacturability })
})

/**
 * A part's hooks, in the transaction of its own write: its tickets locked
 * and moved (ticketsChanged); its model versions (the first with a new
 * part, the next when its model changes); its strategies kept to the
 * services it has; its events (partEvents.ts); and on delete, its versions
 * and strategies removed.
 */
const ticketModelHooks: RecordHooks<typeof TicketModel> = {
  prepare: prepareTicketModel,
  written: Effect.fnUntraced(function*(context, part, previous) {
    yield* ticketsChanged(context, ticketsOf(part, previous))
    if (previous === undefined || !sameModel(previous, part)) yield* addVersion(context, part, previous === undefined)
    if (previous !== undefined) yield* pruneStrategies(context, part)
    yield* recordPartEvents(context, part, previous)
  }),
  removed: Effect.fnUntraced(function*(context, part) {
    yield* ticketsChanged(context, [part.ticketId])
    yield* removeVersions(context, part)
    yield* pruneStrategies(context, part, true)
  })
}

const parts = recordHandlers(TicketModel, ticketModelHooks)

type PartHandlers = GroupHandlers<"ticketModel">

/** `POST /ticket-model/from-catalogue`: all parts or none. */
const fromCatalogue: PartHandlers["fromCatalogue"] = Effect.fnUntraced(function*(context, { payload: { parts: requested, ticketId } }) {
  if ((yield* findRecord(Ticket, context.appId, ticketId)) === undefined) {
    return yield* EngineError.unknownReference("ticketId", "ticket", ticketId)
  }
  yield* checkOpenForChanges(context, [ticketId])
  // Every configuration first, so that a missing one is named by its place in the request.
  for (const [index, { catalogueModelConfigurationId }] of requested.entries()) {
    if ((yield* findConfiguration(context.appId, catalogueModelConfigurationId)) === undefined) {
      return yield* EngineError.unknownReference(`parts.${index}.catalogueModelConfigurationId`, "catalogue model configuration", catalogueModelConfigurationId)
    }
  }
  // Made as POST /ticket-model makes a part from a configuration (asConfigured.ts): the same part, the same price.
  return yield* inTransaction(
    Effect.forEach(
      requested,
      ({ catalogueModelConfigurationId, quantity }) => parts.create(context, { payload: { ticketId, catalogueModelConfigurationId, quantity } })
    )
  )
})

/** `PUT /ticket-model/{id}/post-processing`: a change of the part like any other, priced again, in one transaction with its ticket's move. */
const setPostProcessing: PartHandlers["setPostProcessing"] = Effect.fnUntraced(function*(context, { params: { ticketModelId: id }, payload: { serviceIds } }) {
  const part = yield* getRecord(TicketModel, context.appId, id)
  yield* ticketsChanged(context, [part.ticketId])
  yield* checkServices(context, part.technologyId, serviceIds, "serviceIds")
  // A part from a catalogue configuration has the configuration's services.
  const configurationId = part.catalogueModelConfigurationId
  const found = configurationId === undefined ? undefined : yield* findConfiguration(context.appId, configurationId)
  if (found !== undefined) yield* checkAgreement(context, configurationId!, configuredMakeup(found.configuration), { serviceIds })
  const priced = yield* pricePart(context, { ...part, serviceIds })
  const replaced = yield* replaceLocked(TicketModel.name, context.appId, id, priced)
  if (replaced === undefined) return yield* EngineError.notFound(TicketModel.name, id)
  const stored = asRecord(TicketModel, replaced)
  yield* pruneStrategies(context, stored)
  yield* recordPartEvents(context, stored, part)
  return stored
})

/** The part group's handlers, but for `similarity` (similarity.ts) and `priceBreaks` (priceBreaks.ts). */
export const partHandlers: Omit<PartHandlers, "similarity" | "priceBreaks"> = {
  list: parts.list,
  create: parts.create,
  get: parts.get,
  replace: parts.replace,
  remove: parts.remove,
  fromCatalogue,
  getMachiningStrategy,
  // The strategy is written with its part locked, so that a delete of the part finds it and removes it.
  setMachiningStrategy: transactional(setMachiningStrategy),
  setPostProcessing: transactional(setPostProcessing)
}
