/**
 * Catalogue models: each write checks every configuration as a part would
 * be checked (references, material of the technology, colour of the
 * material, production parameters, post-processing services), gives a configuration without an id a
 * new one, keeps configuration ids unique among the app's catalogue models,
 * and analyses the model file when it is new.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { CatalogueModel } from "../../domain/resources/catalogue.ts"
import { TicketModel } from "../../domain/resources/orders.ts"
import { recordHandlers, type RecordHooks } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import { usedBy } from "../integrity.ts"
import type { OperationContext } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { asRecord, type PrepareInput, type RecordOf } from "../typedRecords.ts"
import { fileNameOf } from "./common.ts"
import { checkMaterial, checkParameters, checkServices } from "./eligibility.ts"
import { modelGeometry } from "./partModel.ts"

type Model = RecordOf<typeof CatalogueModel>

/** References inside a catalogue configuration, checked like a record's own. */
const CONFIGURATION_REFERENCES = [["technologyId", "technology"], ["materialId", "material"], ["colourId", "colour"]] as const

/** Each configuration checked as a part made from it would be, its refusals naming `configurations.<i>.<field>`. */
const checkConfigurations = Effect.fnUntraced(function*(context: OperationContext, configurations: Model["configurations"]) {
  const records = yield* RecordRepository
  const given = new Map<string, number>()
  for (const [index, configuration] of configurations.entries()) {
    const at = `configurations.${index}.`
    for (const [field, resource] of CONFIGURATION_REFERENCES) {
      const id = configuration[field]
      if (id === undefined) continue
      if ((yield* records.find(resource, context.appId, id)) === undefined) return yield* EngineError.unknownReference(`${at}${field}`, resource, id)
    }
    yield* checkMaterial(context, configuration, at)
    yield* checkParameters(context, configuration.technologyId, configuration.productionParameterIds, at)
    yield* checkServices(context, configuration.technologyId, configuration.serviceIds ?? [], `${at}serviceIds`)
    if (configuration.id === undefined) continue
    const earlier = given.get(configuration.id)
    if (earlier !== undefined) {
      return yield* EngineError.invalid(`${at}id: configuration ${configuration.id} is configurations.${earlier} already`)
    }
    given.set(configuration.id, index)
  }
})

/**
 * A part made from a configuration is of its technology: a configuration
 * that parts were made from keeps it (422 naming
 * `configurations.<i>.technologyId` and the parts).
 */
const checkMadeFrom = Effect.fnUntraced(function*(context: OperationContext, input: Model["configurations"], previous: Model) {
  for (const [index, configuration] of input.entries()) {
    const before = previous.configurations.find((candidate) => candidate.id !== undefined && candidate.id === configuration.id)
    if (before === undefined || before.technologyId === configuration.technologyId) continue
    const parts = yield* usedBy(CatalogueModel.name, context.appId, { id: previous.id, configurations: [before] }, [TicketModel.name])
    if (parts !== undefined) {
      return yield* EngineError.invalid(
        `configurations.${index}.technologyId: configuration ${before.id} is used by ${parts} of ${before.technologyId}: ` +
          `its technology cannot change to ${configuration.technologyId}`
      )
    }
  }
})

/**
 * Completes a catalogue model before it is stored: its configurations
 * checked and given ids (existing ids are kept), and its model file analysed
 * when it is new (a model stored before the analysis existed has no
 * `geometry`, and is analysed on its next write).
 */
const prepareCatalogueModel = Effect.fnUntraced(function*(
  context: OperationContext,
  input: PrepareInput<typeof CatalogueModel>,
  previous: Model | undefined
) {
  yield* checkConfigurations(context, input.configurations)
  if (previous !== undefined) yield* checkMadeFrom(context, input.configurations, previous)
  const endpoint = input.modelEndpoint
  const sameFile = previous !== undefined && previous.geometry !== undefined
    && previous.modelEndpoint.url === endpoint.url && previous.modelEndpoint.fileName === endpoint.fileName
    && previous.modelEndpoint.unit === endpoint.unit
  return {
    ...input,
    configurations: input.configurations.map((configuration) => ({ ...configuration, id: configuration.id ?? randomUUID() })),
    // Analysed once here, so every part made from the model shares it without a download.
    geometry: sameFile ? previous.geometry : yield* modelGeometry(endpoint, fileNameOf(endpoint), context.appId)
  }
})

/**
 * In the write's transaction: no other catalogue model the app sees holds
 * one of this model's configuration ids (409 naming the configuration and
 * the model), since a part names its configuration by id alone. A lock per
 * app orders the writes that check, so two of them cannot both pass.
 */
const checkUnique = Effect.fnUntraced(function*(context: OperationContext, model: Model) {
  const records = yield* RecordRepository
  const ids = model.configurations.flatMap((configuration) => configuration.id ?? [])
  if (ids.length === 0) return
  yield* records.lockKey(`catalogue-configuration:${context.appId}`)
  const found = yield* records.findConfigurationHolder(CatalogueModel.name, context.appId, model.id, ids)
  const holder = found === undefined ? undefined : asRecord(CatalogueModel, found)
  if (holder === undefined) return
  const index = model.configurations.findIndex((configuration) => holder.configurations.some((other) => other.id === configuration.id))
  const id = model.configurations[index]?.id ?? ""
  return yield* EngineError.conflict(`configurations.${index}.id: configuration ${id} is one of catalogue model ${holder.name} (${holder.id}) already`)
})

const catalogueModelHooks: RecordHooks<typeof CatalogueModel> = {
  prepare: prepareCatalogueModel,
  written: checkUnique
}

export const catalogueModelHandlers = recordHandlers(CatalogueModel, catalogueModelHooks)
