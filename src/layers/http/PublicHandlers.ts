/**
 * Handlers of the public API. Every endpoint forwards to the engine with the
 * same handler (ForwardHandlers.ts), so a group only lists its endpoints.
 */
import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { PublicApi } from "../../api/PublicApi.ts"
import { Forward } from "./ForwardHandlers.ts"

const group = HttpApiBuilder.group

export const PublicHandlers = Layer.mergeAll(
  group(PublicApi, "app", (h) => Effect.map(Forward, (f) => h.handleAll({ get: f }))),
  group(PublicApi, "blank", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f, get: f }))),
  group(PublicApi, "catalogue", (h) => Effect.map(Forward, (f) => h.handleAll({ create: f }))),
  group(PublicApi, "catalogueModel", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f, get: f, replace: f, remove: f }))),
  group(PublicApi, "colour", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f }))),
  group(PublicApi, "currency", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f }))),
  group(PublicApi, "customer", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f, get: f, replace: f }))),
  group(PublicApi, "item", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f, replace: f, remove: f, get: f }))),
  group(PublicApi, "machineGroup", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f, get: f, replace: f, remove: f }))),
  group(
    PublicApi,
    "machine",
    (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f, get: f, replace: f, remove: f, byProximity: f, assignReels: f }))
  ),
  group(PublicApi, "materialSeries", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f, replace: f, remove: f }))),
  group(PublicApi, "material", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f, get: f, replace: f, remove: f }))),
  group(PublicApi, "meetingNote", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f }))),
  group(PublicApi, "modelVersion", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f, fieldsResolve: f }))),
  group(PublicApi, "pps", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f }))),
  group(PublicApi, "ticketModel", (h) =>
    Effect.map(Forward, (f) =>
      h.handleAll({
        list: f,
        create: f,
        get: f,
        replace: f,
        remove: f,
        fromCatalogue: f,
        similarity: f,
        getMachiningStrategy: f,
        setMachiningStrategy: f,
        setPostProcessing: f
      }))),
  group(PublicApi, "productionNote", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f }))),
  group(PublicApi, "productionParameterField", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f }))),
  group(PublicApi, "project", (h) => Effect.map(Forward, (f) => h.handleAll({ lookup: f, list: f, create: f, get: f, replace: f }))),
  group(PublicApi, "quotationFormRegion", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, create: f, get: f, replace: f, remove: f }))),
  group(PublicApi, "quotationForm", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f }))),
  group(PublicApi, "ticketQuote", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f, replace: f }))),
  group(PublicApi, "reelGroup", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, replace: f, create: f, get: f }))),
  group(PublicApi, "reel", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, replace: f, listInGroup: f, createInGroup: f }))),
  group(PublicApi, "reportMetrics", (h) => Effect.map(Forward, (f) => h.handleAll({ get: f }))),
  group(PublicApi, "serviceJob", (h) =>
    Effect.map(Forward, (f) =>
      h.handleAll({
        list: f,
        create: f,
        get: f,
        replace: f,
        remove: f,
        production: f,
        updateProduction: f,
        reassignTicketModels: f,
        merge: f,
        startTimeline: f,
        stopTimeline: f
      }))),
  group(PublicApi, "serviceJobProduction", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f }))),
  group(PublicApi, "service", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f }))),
  group(PublicApi, "supplier", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f }))),
  group(PublicApi, "technology", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f }))),
  group(PublicApi, "ticket", (h) => Effect.map(Forward, (f) => h.handleAll({ lookup: f, create: f, replace: f, sendToProduction: f, quote: f }))),
  group(PublicApi, "user", (h) => Effect.map(Forward, (f) => h.handleAll({ list: f, get: f })))
)
