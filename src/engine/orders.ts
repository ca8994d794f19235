/**
 * The orders engine: how tickets, parts, quotes, catalogue models and items
 * are completed when stored, and the order workflows (quotes, parts from a
 * catalogue, similarity, machining strategies, post-processing, model
 * fields). See docs/workflows-orders.md.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { CatalogueModel } from "../domain/resources/catalogue.ts"
import { Item, ModelVersion } from "../domain/resources/orders.ts"
import type { AppSettings } from "../domain/resources/reference.ts"
import { type PrepareInput, recordHandlers, type RecordOf, type StoredFields } from "./crud.ts"
import { EngineError } from "./EngineError.ts"
import type { EngineHandlers, GroupHandlers, OperationContext, Step } from "./Operation.ts"
import { fileNameOf } from "./orders/common.ts"
import { fieldsResolve, modelGeometry, partHandlers } from "./orders/parts.ts"
import { ticketHandlers, ticketQuoteHandlers } from "./orders/quotes.ts"
import { similarity } from "./orders/similarity.ts"
import { RecordRepository } from "./RecordRepository.ts"

/** The order groups' handlers; the ticket's `sendToProduction` is production's. */
export type OrderHandlers =
  & Pick<EngineHandlers, "app" | "item" | "catalogueModel" | "ticketModel" | "modelVersion" | "ticketQuote">
  & { readonly ticket: Omit<GroupHandlers<"ticket">, "sendToProduction"> }

/** References inside a catalogue configuration, checked like a record's own. */
const CONFIGURATION_REFERENCES = [["technologyId", "technology"], ["materialId", "material"], ["colourId", "colour"]] as const

/**
 * Gives each configuration without an id a new one (existing ids are kept),
 * checks its references, and analyses the model file when it is new (a
 * catalogue model stored before the analysis existed has no `geometry`, and
 * is analysed on its next write).
 */
const prepareCatalogueModel = (
  context: OperationContext,
  input: PrepareInput<typeof CatalogueModel>,
  previous: RecordOf<typeof CatalogueModel> | undefined
): Step<StoredFields<typeof CatalogueModel>> =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    for (const [index, configuration] of input.configurations.entries()) {
      for (const [field, resource] of CONFIGURATION_REFERENCES) {
        const id = configuration[field]
        if (id === undefined) continue
        if ((yield* records.find(resource, context.appId, id)) === undefined) {
          return yield* EngineError.unknownReference(`configurations.${index}.${field}`, resource, id)
        }
      }
    }
    const endpoint = input.modelEndpoint
    const sameFile = previous !== undefined && previous.geometry !== undefined
      && previous.modelEndpoint.url === endpoint.url && previous.modelEndpoint.fileName === endpoint.fileName
    return {
      ...input,
      configurations: input.configurations.map((configuration) => ({ ...configuration, id: configuration.id ?? randomUUID() })),
      // Analysed once here, so every part made from the model shares it without a download.
      geometry: sameFile ? previous.geometry : yield* modelGeometry(endpoint, fileNameOf(endpoint), context.appId)
    }
  })

const items = recordHandlers(Item)
const versions = recordHandlers(ModelVersion)

/** `GET /app`: the settings of the caller's app. */
const getApp: GroupHandlers<"app">["get"] = (context) =>
  Effect.succeed<typeof AppSettings.Type>({ id: context.appId, name: context.appId, defaultCurrency: "EUR", measurementUnit: "mm", timeZone: "UTC" })

export const orderHandlers: OrderHandlers = {
  app: { get: getApp },
  item: {
    list: items.list,
    create: items.create,
    replace: items.replace,
    // The path parameter is `partItemId`, not `id`.
    get: (context, { params }) => items.get(context, { params: { id: params.partItemId } }),
    remove: () => Effect.fail(EngineError.notImplemented("Deleting an item is not implemented"))
  },
  catalogueModel: recordHandlers(CatalogueModel, { prepare: prepareCatalogueModel }),
  ticketModel: { ...partHandlers, similarity },
  modelVersion: { list: versions.list, get: versions.get, fieldsResolve },
  ticketQuote: ticketQuoteHandlers,
  ticket: ticketHandlers
}
