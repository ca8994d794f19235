/**
 * What may be made of what: a material of the part's technology, a colour
 * the material comes in, production parameters of the technology with one
 * of their values, post-processing services for the technology. Parts and
 * catalogue configurations share the checks; `at` prefixes the field each
 * refusal (422) names (`configurations.0.` for a configuration).
 */
import { Effect } from "effect"
import type { ProductionParameterIds } from "../../domain/resources/catalogue.ts"
import { Material, PostProcessingService, ProductionParameterField } from "../../domain/resources/reference.ts"
import { EngineError } from "../EngineError.ts"
import type { OperationContext } from "../Operation.ts"
import { findRecord, listRecords } from "../typedRecords.ts"

/** What a part or a configuration is made of. */
export interface Makeup {
  readonly technologyId: string
  readonly materialId: string
  readonly colourId?: string | undefined
}

/**
 * The material must be of the technology, and the colour one of the
 * material's `colourIds` when it lists them (a material without the list
 * does not restrict the colour).
 */
export const checkMaterial = Effect.fnUntraced(function*(context: OperationContext, { colourId, materialId, technologyId }: Makeup, at = "") {
  const material = yield* findRecord(Material, context.appId, materialId)
  if (material === undefined) return yield* EngineError.unknownReference(`${at}materialId`, "material", materialId)
  if (material.technologyId !== technologyId) {
    return yield* EngineError.invalid(
      `${at}materialId: material ${material.name} (${material.id}) is a ${material.technologyId} material, not one of ${technologyId}`
    )
  }
  const colours = material.colourIds
  if (colourId !== undefined && colours !== undefined && !colours.includes(colourId)) {
    const offered = colours.length === 0 ? "no colour" : colours.join(", ")
    return yield* EngineError.invalid(`${at}colourId: material ${material.name} (${material.id}) comes in ${offered}, not ${colourId}`)
  }
})

/** Each `productionParameterIds` entry must name a parameter field of the technology and one of its values. */
export const checkParameters = Effect.fnUntraced(function*(
  context: OperationContext,
  technologyId: string,
  parameters: typeof ProductionParameterIds.Type | undefined,
  at = ""
) {
  const entries = Object.entries(parameters ?? {})
  if (entries.length === 0) return
  const fields = yield* listRecords(ProductionParameterField, context.appId, { technologyId })
  for (const [name, valueId] of entries) {
    const field = fields.find((candidate) => candidate.name === name)
    if (field === undefined) {
      return yield* EngineError.unknownReference(`${at}productionParameterIds.${name}`, `production parameter field of ${technologyId}`, name)
    }
    if (!field.values.some((value) => value.id === valueId)) {
      return yield* EngineError.unknownReference(`${at}productionParameterIds.${name}`, `value of ${field.id}`, valueId)
    }
  }
})

/** Each service must exist for the app and apply to the technology; `field` names the list in errors. */
export const checkServices = Effect.fnUntraced(function*(context: OperationContext, technologyId: string, serviceIds: ReadonlyArray<string>, field: string) {
  for (const [index, serviceId] of serviceIds.entries()) {
    const service = yield* findRecord(PostProcessingService, context.appId, serviceId)
    if (service === undefined) return yield* EngineError.unknownReference(`${field}.${index}`, "service", serviceId)
    if (!service.technologyIds.includes(technologyId)) {
      return yield* EngineError.invalid(`${field}.${index}: service ${serviceId} does not apply to technology ${technologyId}`)
    }
  }
})

/**
 * The services a part has, as its `productionTimes.services[].serviceId`
 * shows them: its technology's manufacturing step (`fdm`, `cnc-milling`),
 * then its post-processing services. A machining strategy is for one of them.
 */
export const servicesOf = (part: { readonly technologyId: string; readonly serviceIds?: ReadonlyArray<string> | undefined }): ReadonlyArray<string> => [
  part.technologyId,
  ...(part.serviceIds ?? [])
]
