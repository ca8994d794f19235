/**
 * The orders engine: how tickets, parts, quotes, catalogue models and items
 * are completed when stored, and the order workflows (quotes, parts from a
 * catalogue, similarity, machining strategies, post-processing, model
 * fields). See docs/workflows-orders.md.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { RecordHooks } from "./crud.ts"
import { EngineError } from "./EngineError.ts"
import type { Operation, Operations } from "./Operation.ts"
import { arrayOf, fileNameOf, objectOf, param, text } from "./orders/common.ts"
import { modelGeometry, partHooks, partWorkflows } from "./orders/parts.ts"
import { quoteHooks, quoteWorkflows } from "./orders/quotes.ts"
import { similarityWorkflows } from "./orders/similarity.ts"
import { RecordRepository } from "./RecordRepository.ts"

/** References inside a catalogue configuration, checked like a record's own. */
const CONFIGURATION_REFERENCES = { technologyId: "technology", materialId: "material", colourId: "colour" } as const

/**
 * Gives each configuration without an id a new one (existing ids are kept),
 * checks its references, and analyses the model file when it is new.
 */
const prepareCatalogueModel: NonNullable<RecordHooks["prepare"]> = (context, input, previous) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const configurations = arrayOf(input.configurations).map((value) => objectOf(value) ?? {})
    for (const [index, configuration] of configurations.entries()) {
      for (const [field, resource] of Object.entries(CONFIGURATION_REFERENCES)) {
        const id = text(configuration, field)
        if (id === undefined) continue
        if ((yield* records.find(resource, context.appId, id)) === undefined) {
          return yield* EngineError.unknownReference(`configurations.${index}.${field}`, resource, id)
        }
      }
    }
    const endpoint = objectOf(input.modelEndpoint)
    const previousEndpoint = objectOf(previous?.modelEndpoint)
    const sameFile = previous !== undefined && previous.geometry !== undefined
      && previousEndpoint?.url === endpoint?.url && previousEndpoint?.fileName === endpoint?.fileName
    return {
      ...input,
      configurations: configurations.map((configuration) => ({ ...configuration, id: text(configuration, "id") ?? randomUUID() })),
      // Analysed once here, so every part made from the model shares it without a download.
      geometry: sameFile ? previous.geometry : yield* modelGeometry(endpoint, fileNameOf(endpoint), context.appId)
    }
  })

export const orderHooks: Readonly<Record<string, RecordHooks>> = {
  ...quoteHooks,
  ...partHooks,
  catalogueModel: { prepare: prepareCatalogueModel }
}

/** `GET /item/{partItemId}`: the path parameter is not `id`. */
const getItem: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    return (yield* records.find("item", context.appId, param(request, "partItemId"))) ?? null
  })

const removeItem: Operation = () => Effect.fail(EngineError.notImplemented("Deleting an item is not implemented"))

/** `GET /app`: the settings of the caller's app. */
const getApp: Operation = (context) =>
  Effect.succeed({ id: context.appId, name: context.appId, defaultCurrency: "EUR", measurementUnit: "mm", timeZone: "UTC" })

export const orderWorkflows: Operations = {
  ...quoteWorkflows,
  ...partWorkflows,
  ...similarityWorkflows,
  "item.get": getItem,
  "item.remove": removeItem,
  "app.get": getApp
}
