/**
 * Orders: Customer 1–n Project (order) 1–n Ticket 1–n Part (ticket model);
 * items are extra lines of a ticket; a ticket's quote prices its parts and
 * items; model versions keep each model file a part has had.
 */
import { Schema } from "effect"
import { defineResource } from "../Resource.ts"
import { ProductionParameterIds } from "./catalogue.ts"
import { IsoDateTime, Money, Name, NonNegative, Quantity, Ref, Text } from "./fields.ts"
import { Geometry, ModelEndpoint } from "./modelFiles.ts"

export const Project = defineResource({
  name: "project",
  path: "/project",
  title: "Project (order)",
  fields: {
    customerId: Ref("customer"),
    name: Name,
    externalReference: Schema.optional(Text(200)),
    description: Schema.optional(Text(2000)),
    currencyId: Schema.optional(Ref("currency"))
  },
  computed: { number: Schema.String.annotate({ description: "The order number, e.g. P-000042" }) },
  filters: ["customerId", "externalReference", "name"],
  storage: { numberPrefix: "P", references: { customerId: "customer", currencyId: "currency" } }
})

/** The documented states of a ticket; moves are made by the workflow operations. */
export const TicketState = Schema.Literals(["draft", "quoted", "accepted", "in_production", "completed", "cancelled"])

export const Ticket = defineResource({
  name: "ticket",
  path: "/ticket",
  title: "Ticket",
  fields: {
    projectId: Ref("project"),
    name: Name,
    externalReference: Schema.optional(Text(200)),
    description: Schema.optional(Text(2000)),
    dueDate: Schema.optional(IsoDateTime)
  },
  computed: {
    number: Schema.String.annotate({ description: "The ticket number, e.g. T-000042" }),
    state: TicketState
  },
  filters: ["projectId", "externalReference"],
  storage: { numberPrefix: "T", references: { projectId: "project" } }
})

export const Item = defineResource({
  name: "item",
  path: "/item",
  title: "Item",
  fields: {
    ticketId: Ref("ticket"),
    name: Name,
    description: Schema.optional(Text(2000)),
    quantity: Quantity,
    unitPrice: Money
  },
  filters: ["ticketId"],
  storage: { references: { ticketId: "ticket" } }
})

export const ServiceTimes = Schema.Struct({
  serviceId: Schema.String,
  cycleTime: NonNegative,
  programmingTime: NonNegative,
  setupTime: NonNegative
})

export const ProductionTimes = Schema.Struct({
  cycleTime: NonNegative.annotate({ description: "Seconds" }),
  programmingTime: NonNegative.annotate({ description: "Seconds" }),
  setupTime: NonNegative.annotate({ description: "Seconds" }),
  services: Schema.Array(ServiceTimes)
}).annotate({ description: "Times of the last price calculation, in seconds" })

/** A URL whose last segment is a model file name; otherwise `fileName` is required. */
const CLEAN_FILE_NAME = /\/[^/?#]+\.(stl|3mf|obj)$/i

export const TicketModel = defineResource({
  name: "ticketModel",
  path: "/ticket-model",
  title: "Part (ticket model)",
  fields: {
    ticketId: Ref("ticket"),
    name: Schema.optional(Text(200)),
    modelEndpoint: Schema.optional(ModelEndpoint),
    catalogueModelConfigurationId: Schema.optional(Ref("catalogue model configuration")),
    technologyId: Ref("technology"),
    materialId: Ref("material"),
    colourId: Schema.optional(Ref("colour")),
    quantity: Quantity,
    productionParameterIds: Schema.optional(ProductionParameterIds),
    serviceIds: Schema.optional(Schema.Array(Ref("post-processing service")))
  },
  computed: {
    fileName: Schema.NullOr(Schema.String),
    geometry: Schema.NullOr(Geometry).annotate({ description: "From the model file; null until analysed" }),
    productionTimes: Schema.NullOr(ProductionTimes),
    unitPrice: Schema.NullOr(Money),
    totalPrice: Schema.NullOr(Money)
  },
  filters: ["ticketId", "technologyId", "materialId"],
  storage: { references: { ticketId: "ticket", technologyId: "technology", materialId: "material", colourId: "colour" } },
  validate: (part) => {
    const hasEndpoint = part.modelEndpoint !== undefined
    const hasConfiguration = part.catalogueModelConfigurationId !== undefined
    if (hasEndpoint === hasConfiguration) {
      return {
        path: [hasEndpoint ? "catalogueModelConfigurationId" : "modelEndpoint"],
        issue: "exactly one of modelEndpoint and catalogueModelConfigurationId is required"
      }
    }
    if (part.modelEndpoint !== undefined && part.modelEndpoint.fileName === undefined) {
      const path = part.modelEndpoint.url.split(/[?#]/)[0] ?? ""
      if (!CLEAN_FILE_NAME.test(path)) {
        return { path: ["modelEndpoint", "fileName"], issue: "required when the url does not end in a model file name" }
      }
    }
    return true
  }
})

export const QuoteState = Schema.Literals(["sent", "accepted", "rejected", "expired"])

export const QuoteLine = Schema.Struct({
  description: Text(500),
  ticketModelId: Schema.optional(Schema.String),
  itemId: Schema.optional(Schema.String),
  quantity: Quantity,
  unitPrice: Money,
  total: Money
})

export const TicketQuote = defineResource({
  name: "ticketQuote",
  path: "/ticket-quote",
  title: "Ticket quote",
  fields: {
    ticketId: Ref("ticket"),
    currencyId: Ref("currency"),
    state: QuoteState,
    validUntil: IsoDateTime,
    lines: Schema.Array(QuoteLine),
    notes: Schema.optional(Text(4000))
  },
  computed: {
    number: Schema.String.annotate({ description: "The quote number, e.g. Q-000042" }),
    total: Money
  },
  filters: ["ticketId", "state"],
  storage: { numberPrefix: "Q", references: { ticketId: "ticket", currencyId: "currency" } }
})

/** `POST /ticket/{ticketId}/quote`: optional overrides of the created quote. */
export const QuoteRequest = Schema.Struct({
  currencyId: Schema.optional(Ref("currency")),
  validDays: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 365 }))),
  notes: Schema.optional(Text(4000))
})

export const ModelVersion = defineResource({
  name: "modelVersion",
  path: "/model-version",
  title: "Model version",
  fields: {
    ticketModelId: Ref("part"),
    version: Quantity,
    fileName: Schema.NullOr(Schema.String),
    modelEndpoint: Schema.NullOr(ModelEndpoint),
    geometry: Schema.NullOr(Geometry)
  },
  filters: ["ticketModelId"],
  storage: { references: { ticketModelId: "ticketModel" } }
})

/** `POST /model-version/{id}/fields-resolve`: values of named fields of a version. */
export const FieldsResolveRequest = Schema.Struct({
  fields: Schema.NonEmptyArray(Schema.String.check(Schema.isMaxLength(100)))
})
export const FieldsResolveResult = Schema.Struct({
  modelVersionId: Schema.String,
  values: Schema.Record(Schema.String, Schema.NullOr(Schema.Union([Schema.String, Schema.Finite, Schema.Boolean])))
})

export const MeetingNote = defineResource({
  name: "meetingNote",
  path: "/meeting-note",
  title: "Meeting note",
  fields: {
    customerId: Ref("customer"),
    projectId: Schema.optional(Ref("project")),
    title: Name,
    body: Text(20000),
    meetingAt: Schema.optional(IsoDateTime)
  },
  filters: ["customerId", "projectId"],
  storage: { references: { customerId: "customer", projectId: "project" } }
})

export const ProductionNote = defineResource({
  name: "productionNote",
  path: "/production-note",
  title: "Production note",
  fields: {
    ticketId: Schema.optional(Ref("ticket")),
    serviceJobId: Schema.optional(Ref("service job")),
    body: Text(20000),
    author: Schema.optional(Text(200))
  },
  filters: ["ticketId", "serviceJobId"],
  storage: { references: { ticketId: "ticket", serviceJobId: "serviceJob" } }
})

/** `POST /ticket-model/from-catalogue`: parts for a ticket from catalogue configurations. */
export const FromCatalogueRequest = Schema.Struct({
  ticketId: Ref("ticket"),
  parts: Schema.NonEmptyArray(Schema.Struct({
    catalogueModelConfigurationId: Ref("catalogue model configuration"),
    quantity: Quantity
  }))
})

/** `POST /ticket-model/{id}/similarity`. */
export const SimilarityRequest = Schema.Struct({
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 })))
})
export const SimilarPart = Schema.Struct({ ticketModelId: Schema.String, score: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })) })

export const MachiningStrategy = Schema.Struct({
  ticketModelId: Schema.String,
  serviceId: Schema.String,
  strategy: Schema.Literals(["roughing", "finishing", "roughing_and_finishing", "adaptive"]),
  toolIds: Schema.Array(Schema.String),
  stepover: Schema.optional(Schema.Finite.check(Schema.isBetween({ minimum: 0.01, maximum: 1 }))),
  notes: Schema.optional(Text(2000))
})
export const MachiningStrategyInput = MachiningStrategy.mapFields(({ ticketModelId: _t, serviceId: _s, ...rest }) => rest)

export const PostProcessingRequest = Schema.Struct({ serviceIds: Schema.Array(Ref("post-processing service")) })
