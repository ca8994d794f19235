/** Groups of orders: projects, tickets, items, parts, quotes, model versions and notes. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
import {
  FieldsResolveRequest, FieldsResolveResult, FromCatalogueRequest, Item, MachiningStrategy, MachiningStrategyInput,
  MeetingNote, ModelVersion, PostProcessingRequest, ProductionNote, Project, QuoteRequest, SimilarityRequest, SimilarPart,
  Ticket, TicketModel, TicketQuote
} from "../../domain/resources/orders.ts"
import { ServiceJob } from "../../domain/resources/production.ts"
import { IncomingSecretAuth } from "../Authorization.ts"
import { COMMON_ERRORS, create, get, IdParam, list, lookup, remove, replace } from "../endpoints.ts"

const Id = IdParam.id

export const ProjectGroup = HttpApiGroup.make("project")
  .add(lookup(Project), list(Project), create(Project), get(Project), replace(Project))
  .middleware(IncomingSecretAuth)

export const TicketGroup = HttpApiGroup.make("ticket")
  .add(
    lookup(Ticket),
    create(Ticket),
    replace(Ticket),
    HttpApiEndpoint.put("sendToProduction", "/ticket/:id/send-to-production", {
      params: IdParam,
      success: Schema.Array(ServiceJob.record),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Send a ticket to production").annotate(
      OpenApi.Description,
      "The ticket's parts become service jobs, one per technology (and machine group), each with a PPS record per part. Answers the jobs."
    ),
    HttpApiEndpoint.post("quote", "/ticket/:ticketId/quote", {
      params: { ticketId: Id },
      payload: QuoteRequest,
      success: TicketQuote.record,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Create and send a quote").annotate(
      OpenApi.Description,
      "Prices the ticket's parts and items into a quote, in the ticket's currency unless overridden, and sends it."
    )
  )
  .middleware(IncomingSecretAuth)

export const ItemGroup = HttpApiGroup.make("item")
  .add(
    list(Item),
    create(Item),
    replace(Item),
    remove(Item).annotate(OpenApi.Description, "Not implemented: answers 501 with the standard error body."),
    HttpApiEndpoint.get("get", "/item/:partItemId", {
      params: { partItemId: Id },
      success: Item.record,
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "Get an item").annotate(OpenApi.Description, "A missing id reads as 200 with an empty body.")
  )
  .middleware(IncomingSecretAuth)

const TicketModelParams = { ticketModelId: Id }

export const TicketModelGroup = HttpApiGroup.make("ticketModel")
  .add(
    list(TicketModel),
    create(TicketModel),
    get(TicketModel),
    replace(TicketModel),
    remove(TicketModel),
    HttpApiEndpoint.post("fromCatalogue", "/ticket-model/from-catalogue", {
      payload: FromCatalogueRequest,
      success: Schema.Array(TicketModel.record),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Create parts from a catalogue"),
    HttpApiEndpoint.post("similarity", "/ticket-model/:id/similarity", {
      params: IdParam,
      payload: SimilarityRequest,
      success: Schema.Array(SimilarPart),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Find similar parts"),
    HttpApiEndpoint.get("getMachiningStrategy", "/ticket-model/:ticketModelId/machining-strategy/:serviceId", {
      params: { ...TicketModelParams, serviceId: Id },
      success: MachiningStrategy,
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "Get a machining strategy").annotate(OpenApi.Description, "None set reads as 200 with an empty body."),
    HttpApiEndpoint.put("setMachiningStrategy", "/ticket-model/:ticketModelId/machining-strategy/:serviceId", {
      params: { ...TicketModelParams, serviceId: Id },
      payload: MachiningStrategyInput,
      success: MachiningStrategy,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Set the machining strategy of a part service"),
    HttpApiEndpoint.put("setPostProcessing", "/ticket-model/:ticketModelId/post-processing", {
      params: TicketModelParams,
      payload: PostProcessingRequest,
      success: TicketModel.record,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Update a part's post-processing services")
  )
  .middleware(IncomingSecretAuth)

export const TicketQuoteGroup = HttpApiGroup.make("ticketQuote")
  .add(list(TicketQuote), get(TicketQuote), replace(TicketQuote))
  .middleware(IncomingSecretAuth)

export const ModelVersionGroup = HttpApiGroup.make("modelVersion")
  .add(
    list(ModelVersion),
    get(ModelVersion),
    HttpApiEndpoint.post("fieldsResolve", "/model-version/:id/fields-resolve", {
      params: IdParam,
      payload: FieldsResolveRequest,
      success: FieldsResolveResult,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Resolve model fields of a version")
  )
  .middleware(IncomingSecretAuth)

export const MeetingNoteGroup = HttpApiGroup.make("meetingNote").add(list(MeetingNote), create(MeetingNote)).middleware(IncomingSecretAuth)
export const ProductionNoteGroup = HttpApiGroup.make("productionNote")
  .add(list(ProductionNote), create(ProductionNote)).middleware(IncomingSecretAuth)
