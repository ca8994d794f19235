/**
 * `POST /catalogue-model-configuration/{id}/price-breaks`: a catalogue
 * configuration priced at each quantity asked for as a part made from it
 * would be (asConfigured.ts): its technology, material, production
 * parameters and post-processing services, its catalogue model's geometry; with the same lead times and expedite options as a
 * part's breaks (priceBreaks.ts). It reads only.
 */
import { Effect } from "effect"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers } from "../Operation.ts"
import { configuredMakeup } from "./asConfigured.ts"
import { findConfiguration } from "./partModel.ts"
import { breaksOf } from "./priceBreaks.ts"

export const configurationPriceBreaks: GroupHandlers<"catalogueModel">["configurationPriceBreaks"] = Effect.fnUntraced(function*(
  context,
  { params: { id }, payload: { quantities } }
) {
  // A configuration of a catalogue model the app cannot see (another app's) is one it does not have.
  const found = yield* findConfiguration(context.appId, id)
  if (found === undefined) return yield* EngineError.notFound("catalogue model configuration", id)
  const { configuration, model } = found
  const breaks = yield* breaksOf(context, { ...configuredMakeup(configuration), geometry: model.geometry ?? null }, quantities)
  if (breaks === undefined) {
    return yield* EngineError.conflict(
      `catalogue configuration ${configuration.name ?? id} of catalogue model ${model.name} (${model.id}) has no price yet: ` +
        "its model file has no geometry"
    )
  }
  return { catalogueModelConfigurationId: id, catalogueModelId: model.id, ...breaks }
})
