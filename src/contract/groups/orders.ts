/** Groups of orders: projects, tickets, items, parts, quotes, model versions and notes. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
import { PriceBreaks, PriceBreaksRequest } from "../../domain/resources/priceBreaks.ts"
import { ServiceJob } from "../../domain/resources/production.ts"
import { COMMON_ERRORS, create, get, IdParam, list, lookup, MissingRecord, PAGING, recordOf, remove, replace, tag } from "../endpoints.ts"
import { emptyOk } from "../openapi.ts"

const Id = IdParam.id

/** What every write of a ticket's parts and items says about the ticket's state. */
const WHILE_OPEN = "Only while the ticket is `draft` or `quoted`: otherwise 409 `Conflict` naming the ticket and its state. " +
  "A change while `quoted` supersedes its open (`sent`) quotes and returns the ticket to `draft`."

export const ProjectGroup = HttpApiGroup.make("project")
  .add(lookup(Project), list(Project), create(Project), get(Project), replace(Project))
  .annotateMerge(tag("Project (order)", "Orders of a customer (Project 1–n Ticket); numbered P-000042, found by id, number or external reference."))

export const TicketGroup = HttpApiGroup.make("ticket")
  .add(
    lookup(Ticket),
    create(Ticket).annotate(
      OpenApi.Description,
      "Stores the ticket in state `draft`, numbered `T-000042`. Answers the created record, with its `id`. An unknown field is a 400 naming it."
    ),
    replace(Ticket).annotate(
      OpenApi.Description,
      "Whole-record replacement of the ticket's own fields: every required field must be present, omitted optional fields are cleared. " +
        "The `state` and `number` are kept: the state moves only through the workflow operations (quote, quote acceptance, " +
        "send to production, cancel)."
    ),
    HttpApiEndpoint.put("sendToProduction", "/ticket/:id/send-to-production", {
      params: IdParam,
      success: Schema.Array(recordOf(ServiceJob)),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Send a ticket to production").annotate(
      OpenApi.Description,
      "Needs an `accepted` ticket (its quote accepted): any other state is a 409 `Conflict` naming it. " +
        "The ticket's parts become service jobs, one per technology (and machine group), each with a PPS record per part, " +
        "and the ticket moves to `in_production`. Answers the jobs."
    ),
    HttpApiEndpoint.put("cancel", "/ticket/:id/cancel", {
      params: IdParam,
      success: recordOf(Ticket),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Cancel a ticket").annotate(
      OpenApi.Description,
      "Moves a `draft`, `quoted` or `accepted` ticket to `cancelled`, a final state, and withdraws its open quotes " +
        "(`sent` → `withdrawn`; an accepted quote stays accepted). A ticket `in_production`, `completed` or already `cancelled` " +
        "is a 409 `Conflict` naming its state; a missing ticket a 404. Takes no body. Answers the ticket."
    ),
    HttpApiEndpoint.post("quote", "/ticket/:ticketId/quote", {
      params: { ticketId: Id },
      payload: QuoteRequest,
      success: recordOf(TicketQuote),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Create and send a quote").annotate(
      OpenApi.Description,
      "Prices the ticket's parts and items into a `sent` quote, valid for `validDays` (default 30), and moves the ticket to `quoted`. " +
        "Only a `draft` or `quoted` ticket can be quoted (409 naming the state otherwise); a newer quote supersedes the ticket's open one " +
        "(`sent` → `superseded`). A part without a price yet is a 409 naming it; a ticket without parts or items a 422. " +
        "Currency: `currencyId`, else the project's, else EUR. Part and item prices are in EUR; in another currency each unit price is " +
        "converted at the `exchangeRate` given, else the currency's rate for the app (GET /currency/{id}), rounded to the currency's minor unit, " +
        "and the rate is recorded on the quote. Every line total is exactly quantity × unitPrice and the total their sum. " +
        "`quantityOptions` offers a part's line at several quantities: the line's `options` price the part at each (as its price breaks, " +
        "converted like the unit price, with the break's `leadTimeDays`), its own quantity included, and the buyer chooses one when " +
        "accepting the quote; the line and the total still price the part's own quantity. A part not on the ticket, or named twice, is a " +
        "422 naming `quantityOptions.<i>.ticketModelId`."
    )
  )
  .annotateMerge(tag("Ticket", "Tickets of a project: their parts are priced into quotes and sent to production."))

export const ItemGroup = HttpApiGroup.make("item")
  .add(
    list(Item),
    create(Item).annotate(
      OpenApi.Description,
      `An extra line of a ticket; \`unitPrice\` in EUR, at most to the cent (422 naming it otherwise). ${WHILE_OPEN} Answers the created item.`
    ),
    replace(Item).annotate(
      OpenApi.Description,
      `Whole-record replacement of the item; \`unitPrice\` in EUR, at most to the cent. ${WHILE_OPEN} ` +
        "Moving the item to another ticket needs both tickets open."
    ),
    remove(Item).annotate(OpenApi.Description, "Not implemented: answers 501 with the standard error body."),
    HttpApiEndpoint.get("get", "/item/:partItemId", {
      params: { partItemId: Id },
      success: recordOf(Item),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "Get an item").annotate(OpenApi.Transform, emptyOk)
  )
  .annotateMerge(tag("Item", "Extra lines of a ticket (a service, a fee) with a quantity and a unit price."))

const TicketModelParams = { ticketModelId: Id }

/** The eligibility rules of a part, checked on every write. */
const PART_RULES = "The material must be of the part's technology (422 naming `materialId`), the colour one of the material's " +
  "`colourIds` when it lists them (422 naming `colourId`), each production parameter a field of the technology with one of its values " +
  "(422 naming `productionParameterIds.<name>`), each service one that applies to the technology (422 naming `serviceIds.<i>`), and a " +
  "catalogue configuration one of the same technology (422 naming `technologyId`)."

export const TicketModelGroup = HttpApiGroup.make("ticketModel")
  .add(
    list(TicketModel),
    create(TicketModel).annotate(OpenApi.Description, `${PART_RULES} ${WHILE_OPEN} Answers the part, analysed and priced.`),
    get(TicketModel),
    replace(TicketModel).annotate(
      OpenApi.Description,
      `Whole-record replacement; the part is priced again. ${PART_RULES} ${WHILE_OPEN} Moving the part to another ticket needs both tickets open.`
    ),
    remove(TicketModel).annotate(
      OpenApi.Description,
      `Deletes the part with its model versions and machining strategies. ${WHILE_OPEN} Answers the deleted part.`
    ),
    HttpApiEndpoint.post("fromCatalogue", "/ticket-model/from-catalogue", {
      payload: FromCatalogueRequest,
      success: Schema.Array(recordOf(TicketModel)),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Create parts from a catalogue").annotate(
      OpenApi.Description,
      "One part per entry, with its configuration's technology, material, colour and production parameters; all or none. " +
        `${WHILE_OPEN} Answers the parts.`
    ),
    HttpApiEndpoint.post("similarity", "/ticket-model/:id/similarity", {
      params: IdParam,
      payload: SimilarityRequest,
      success: Schema.Array(SimilarPart),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Find similar parts"),
    HttpApiEndpoint.post("priceBreaks", "/ticket-model/:id/price-breaks", {
      params: IdParam,
      payload: PriceBreaksRequest,
      success: PriceBreaks,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Price a part at several quantities").annotate(
      OpenApi.Description,
      "Prices the part at each of `quantities` (1 to 20 distinct), answered in that order: each break's `unitPrice`, `totalPrice` and " +
        "`productionTimes` are what the part would have at that quantity (its price calculation, on the app's records as they are now), " +
        "in EUR. `leadTimeDays` is in working days, from the app's machines of the part's technology (their groups' `workingHours`), the " +
        "hours left in its open service jobs and a margin; `expedite` makes the break ahead of those jobs at a surcharge, and is there when " +
        "that is sooner. `leadTimeBasis` says what the lead times come from; without a machine of the technology it is null, as is every " +
        "`leadTimeDays`. Reads only: the part is not changed, and no event is written. A part without a price yet (its model not analysed) " +
        "is a 409 naming it; another app's part a 404. docs/pricing.md, \"Price breaks\" and \"Lead times\"."
    ),
    HttpApiEndpoint.get("getMachiningStrategy", "/ticket-model/:ticketModelId/machining-strategy/:serviceId", {
      params: { ...TicketModelParams, serviceId: Id },
      success: [MachiningStrategy, MissingRecord],
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "Get a machining strategy").annotate(OpenApi.Description, "None set reads as 200 with an empty body.")
      .annotate(OpenApi.Transform, emptyOk),
    HttpApiEndpoint.put("setMachiningStrategy", "/ticket-model/:ticketModelId/machining-strategy/:serviceId", {
      params: { ...TicketModelParams, serviceId: Id },
      payload: MachiningStrategyInput,
      success: MachiningStrategy,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Set the machining strategy of a part service").annotate(
      OpenApi.Description,
      "`serviceId` is one of the services the part has: the ids its `productionTimes.services[].serviceId` shows, that is its " +
        "technology's manufacturing step (`cnc-milling`, `fdm`, …) and its post-processing `serviceIds`; any other is a 422 naming " +
        "`serviceId`. Creates or overwrites the strategy; a strategy goes when its service leaves the part."
    ),
    HttpApiEndpoint.put("setPostProcessing", "/ticket-model/:ticketModelId/post-processing", {
      params: TicketModelParams,
      payload: PostProcessingRequest,
      success: recordOf(TicketModel),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Update a part's post-processing services").annotate(
      OpenApi.Description,
      `Each service must apply to the part's technology (422 naming \`serviceIds.<i>\`); the part is priced again. ${WHILE_OPEN}`
    )
  )
  .annotateMerge(
    tag("Part (ticket model)", "Parts of a ticket: a model file (or a catalogue configuration), technology, material, quantity; priced by the engine.")
  )

const EXPIRED_ON_READ = "A `sent` quote whose `validUntil` has passed reads as `expired` (and the `state` filter finds it so)."

/** A quote's other representation: the PDF the gateway renders from it (src/gateway/rest/QuotePdfHandler.ts). */
const QuotePdf = Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/pdf" })).annotate({
  description: "The quote as a PDF document (A4, fonts embedded)"
})

export const TicketQuoteGroup = HttpApiGroup.make("ticketQuote")
  .add(
    list(TicketQuote).annotate(
      OpenApi.Description,
      "Filters are repeatable (`?ids=a&ids=b`) and combine with AND; each date field takes one date or a `[from]`/`[to]` range. " +
        `${PAGING} ${EXPIRED_ON_READ}`
    ),
    HttpApiEndpoint.get("get", "/ticket-quote/:id", {
      params: IdParam,
      success: [recordOf(TicketQuote), QuotePdf],
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Get a Ticket quote").annotate(
      OpenApi.Description,
      `${EXPIRED_ON_READ} With \`Accept: application/pdf\` (preferred over \`application/json\`) the answer is the quote as a PDF: ` +
        "A4, `Content-Disposition: inline; filename=<number>.pdf`, the same bytes for the same quote: the app, the customer, the ticket, " +
        "the dates, the state, each line with its quantity, prices, manufacturability findings and lead time, each of a line's `options` " +
        "in a row under it (the chosen one marked once accepted), the total. " +
        "A missing quote asked for as a PDF is a 404 `NotFound` (as JSON), not the empty 200. The quote's `pdfUrl` is this path."
    ).annotate(OpenApi.Transform, emptyOk),
    replace(TicketQuote).annotate(
      OpenApi.Description,
      "Whole-record replacement of a `sent` quote; every other state is final (409 `Conflict` naming it), though a PUT that " +
        "changes nothing answers the quote as it is. `state` moves `sent` → `accepted` or `rejected` (any other is a 409). Accepting needs " +
        "the newest sent quote of the ticket, still valid, and a `quoted` ticket, which becomes `accepted`. `ticketId` and `currencyId` " +
        "cannot change (422 naming the field). The lines are the engine's, one per part and item of the ticket: a PUT may change a line's " +
        "`description` and override its `unitPrice` (in the quote's minor unit), never add, drop or re-point a line or change its quantity " +
        "(422 naming `lines.<i>.<field>`; `lines: []` is a 422 naming `lines`). The engine recomputes each line total " +
        "(quantity × unitPrice) and the total. A line with `options` is the exception: accepting the quote with the line's `quantity` set " +
        "to one of its options' quantities chooses that option (the line takes its unit price and total, the part that quantity and its " +
        "price at it, without superseding the quote); another quantity is a 422 naming `lines.<i>.quantity` and the quantities offered. " +
        "`options` are the engine's; the option at the line's quantity follows the line's unit price. The shortest acceptance is the quote " +
        "as read with `state: \"accepted\"`: the engine's fields (`number`, `exchangeRate`, `total`, a line's `total`, `manufacturability`, " +
        "`options`) may be left out, and those sent must be the quote's as read or as the PUT makes them (one 422 naming each other value, " +
        "never a silent overwrite). `validUntil` can change only to the future, never before the quote was made (422 naming `validUntil`); " +
        "whether the quote has expired is judged on the stored quote (an expired one is a 409 naming the state)."
    )
  )
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
