/** Groups of orders: projects, tickets, items, parts, quotes, model versions and notes. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
import {
  FieldsResolveRequest,
  FieldsResolveResult,
  FromCatalogueRequest,
  Item,
  MachiningStrategy,
  MachiningStrategyInput,
  MeetingNote,
  ModelVersion,
  PostProcessingRequest,
  ProductionNote,
  Project,
  QuoteRequest,
  SimilarityRequest,
  SimilarPart,
  Ticket,
  TicketModel,
  TicketQuote
} from "../../domain/resources/orders.ts"
import { ServiceJob } from "../../domain/resources/production.ts"
import { COMMON_ERRORS, create, get, IdParam, list, lookup, recordOf, remove, replace, tag } from "../endpoints.ts"
import { emptyOk } from "../openapi.ts"

const Id = IdParam.id

export const ProjectGroup = HttpApiGroup.make("project")
  .add(lookup(Project), list(Project), create(Project), get(Project), replace(Project))
  .annotateMerge(tag("Project (order)", "Orders of a customer (Project 1–n Ticket); numbered P-000042, found by id, number or external reference."))

export const TicketGroup = HttpApiGroup.make("ticket")
  .add(
    lookup(Ticket),
    create(Ticket),
    replace(Ticket),
    HttpApiEndpoint.put("sendToProduction", "/ticket/:id/send-to-production", {
      params: IdParam,
      success: Schema.Array(recordOf(ServiceJob)),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Send a ticket to production").annotate(
      OpenApi.Description,
      "The ticket's parts become service jobs, one per technology (and machine group), each with a PPS record per part. Answers the jobs."
    ),
    HttpApiEndpoint.post("quote", "/ticket/:ticketId/quote", {
      params: { ticketId: Id },
      payload: QuoteRequest,
      success: recordOf(TicketQuote),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Create and send a quote").annotate(
      OpenApi.Description,
      "Prices the ticket's parts and items into a quote, in the ticket's currency unless overridden, and sends it."
    )
  )
  .annotateMerge(tag("Ticket", "Tickets of a project: their parts are priced into quotes and sent to production."))

export const ItemGroup = HttpApiGroup.make("item")
  .add(
    list(Item),
    create(Item),
    replace(Item),
    remove(Item).annotate(OpenApi.Description, "Not implemented: answers 501 with the standard error body."),
    HttpApiEndpoint.get("get", "/item/:partItemId", {
      params: { partItemId: Id },
      success: recordOf(Item),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "Get an item").annotate(OpenApi.Transform, emptyOk)
  )
  .annotateMerge(tag("Item", "Extra lines of a ticket (a service, a fee) with a quantity and a unit price."))

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
      success: Schema.Array(recordOf(TicketModel)),
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
    }).annotate(OpenApi.Summary, "Get a machining strategy").annotate(OpenApi.Description, "None set reads as 200 with an empty body.")
      .annotate(OpenApi.Transform, emptyOk),
    HttpApiEndpoint.put("setMachiningStrategy", "/ticket-model/:ticketModelId/machining-strategy/:serviceId", {
      params: { ...TicketModelParams, serviceId: Id },
      payload: MachiningStrategyInput,
      success: MachiningStrategy,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Set the machining strategy of a part service"),
    HttpApiEndpoint.put("setPostProcessing", "/ticket-model/:ticketModelId/post-processing", {
      params: TicketModelParams,
      payload: PostProcessingRequest,
      success: recordOf(TicketModel),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Update a part's post-processing services")
  )
  .annotateMerge(
    tag("Part (ticket model)", "Parts of a ticket: a model file (or a catalogue configuration), technology, material, quantity; priced by the engine.")
  )

export const TicketQuoteGroup = HttpApiGroup.make("ticketQuote")
  .add(list(TicketQuote), get(TicketQuote), replace(TicketQuote))
  .annotateMerge(tag("Ticket quote", "Quotes of a ticket: priced lines, a total, a state and a validity."))

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
  .annotateMerge(tag("Model version", "Every model file a part has had, with its geometry."))

export const MeetingNoteGroup = HttpApiGroup.make("meetingNote").add(list(MeetingNote), create(MeetingNote))
  .annotateMerge(tag("Meeting note", "Notes of meetings with a customer, optionally about one project."))
export const ProductionNoteGroup = HttpApiGroup.make("productionNote")
  .add(list(ProductionNote), create(ProductionNote))
  .annotateMerge(tag("Production note", "Notes about a ticket or a service job in production."))
