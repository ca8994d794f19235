/**
 * A part made from a catalogue configuration is made as the configuration
 * says: its technology, material, colour, production parameters (every
 * field of the technology: the configuration's value, else the field's
 * default) and post-processing services. One code path for every way a part
 * is made from one (`POST /ticket-model` with `catalogueModelConfigurationId`,
 * `POST /ticket-model/from-catalogue`, MCP `create_part`, a replace) and for
 * a configuration's price breaks, so the same configuration has the same
 * price on each. A value the caller sends as well must be the
 * configuration's: else a 422 naming the field and both values.
 */
import { Effect } from "effect"
import type { TicketModel } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import type { OperationContext } from "../Operation.ts"
import { pricedParameters } from "../referenceData.ts"
import type { PrepareInput } from "../typedRecords.ts"
import { checkParameters } from "./eligibility.ts"
import type { FoundConfiguration } from "./partModel.ts"

type Configuration = FoundConfiguration["configuration"]

/** How a configuration makes a part. */
export interface ConfiguredMakeup {
  readonly technologyId: string
  readonly materialId: string
  readonly colourId?: string
  readonly productionParameterIds: Readonly<Record<string, string>>
  readonly serviceIds?: ReadonlyArray<string>
}

/** What a part made from `configuration` is made of and priced with. */
export const configuredMakeup = (configuration: Configuration): ConfiguredMakeup => ({
  technologyId: configuration.technologyId,
  materialId: configuration.materialId,
  ...(configuration.colourId === undefined ? {} : { colourId: configuration.colourId }),
  productionParameterIds: pricedParameters(configuration.technologyId, configuration.productionParameterIds),
  ...(configuration.serviceIds === undefined || configuration.serviceIds.length === 0 ? {} : { serviceIds: configuration.serviceIds })
})

/** What a caller may send of a part's makeup besides its configuration. */
export interface SentMakeup {
  readonly technologyId?: string | undefined
  readonly materialId?: string | undefined
  readonly colourId?: string | undefined
  readonly productionParameterIds?: Readonly<Record<string, string>> | undefined
  readonly serviceIds?: ReadonlyArray<string> | undefined
}

const listed = (ids: ReadonlyArray<string> | undefined) => `[${(ids ?? []).join(", ")}]`
const sameServices = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.length === b.length && a.every((id) => b.includes(id))

/**
 * Refuses what the caller sent that the configuration (`configurationId`,
 * making `made`) does not have: 422 naming the field, the configuration's
 * value and the one sent. A production parameter sent is first checked as a
 * part's would be (a field of the technology, one of its values).
 */
export const checkAgreement = Effect.fnUntraced(function*(
  context: OperationContext,
  configurationId: string,
  made: ConfiguredMakeup,
  sent: SentMakeup
) {
  const refuse = (field: string, configured: string, given: string) =>
    EngineError.invalid(`${field}: catalogue configuration ${configurationId} has ${configured}, not ${given}`)
  for (const field of ["technologyId", "materialId"] as const) {
    const given = sent[field]
    if (given !== undefined && given !== made[field]) return yield* refuse(field, made[field], given)
  }
  if (sent.colourId !== undefined && sent.colourId !== made.colourId) return yield* refuse("colourId", made.colourId ?? "no colour", sent.colourId)
  if (sent.productionParameterIds !== undefined) {
    yield* checkParameters(context, made.technologyId, sent.productionParameterIds)
    for (const [name, given] of Object.entries(sent.productionParameterIds)) {
      const configured = made.productionParameterIds[name]
      if (configured !== given) return yield* refuse(`productionParameterIds.${name}`, configured ?? "none", given)
    }
  }
  if (sent.serviceIds !== undefined && !sameServices(sent.serviceIds, made.serviceIds ?? [])) {
    return yield* refuse("serviceIds", listed(made.serviceIds), listed(sent.serviceIds))
  }
})

type PartInput = PrepareInput<typeof TicketModel>

/**
 * The part's input as its configuration (`found`) makes it, once what the
 * caller sent agrees with it; a part without a name takes the
 * configuration's, else its catalogue model's.
 */
export const asConfigured = Effect.fnUntraced(function*(context: OperationContext, input: PartInput, found: FoundConfiguration) {
  const configurationId = input.catalogueModelConfigurationId ?? ""
  const made = configuredMakeup(found.configuration)
  yield* checkAgreement(context, configurationId, made, input)
  const { colourId: _colour, serviceIds: _services, ...rest } = input
  return { ...rest, name: input.name ?? found.configuration.name ?? found.model.name, ...made }
})
