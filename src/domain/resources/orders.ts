/**
 * Orders: Customer 1–n Project (order) 1–n Ticket 1–n Part (ticket model);
 * items are extra lines of a ticket; a ticket's quote prices its parts and
 * items; model versions keep each model file a part has had.
 */
import { Schema, SchemaIssue } from "effect"
import { Int32 } from "../Integers.ts"
import { NonEmptyList } from "../NonEmptyList.ts"
import { acceptingTheRecord, defineResource } from "../Resource.ts"
import { ProductionParameterIds } from "./catalogue.ts"
import { IsoDateTime, MAX_QUANTITY, Money, Name, NonNegative, Positive, Quantity, Ref, Text } from "./fields.ts"
import { fileNameRule } from "./modelFileName.ts"
import { Geometry, MODEL_SOURCE_ONE_OF, MODEL_SOURCE_REQUIRES, ModelEndpoint } from "./modelFiles.ts"

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
  computed: {
    number: Schema.String.annotate({ description: "The order number, numbered per app and kind: the app's first project is P-000001; kept on a replace" })
  },
  filters: ["customerId", "externalReference", "name"],
  storage: { numberPrefix: "P", references: { customerId: "customer", currencyId: "currency" } }
})

/** The documented states of a ticket; moves are made by the workflow operations (docs/workflows-orders.md). */
export const TicketState = Schema.Literals(["draft", "quoted", "accepted", "in_production", "completed", "cancelled"]).annotate({
  description: "draft → quoted (a quote is sent) → accepted (its quote is accepted) → in_production → completed; cancelled (by cancelling the ticket) " +
    "from draft, quoted or accepted. Parts and items change only while draft or quoted; a change while quoted returns the ticket to draft."
})

export const Ticket = defineResource({
  name: "ticket",
  path: "/ticket",
  title: "Ticket",
  fields: {
    projectId: Ref("project").annotate({ description: "The id of the project (order) the ticket belongs to" }),
    name: Name.annotate({ description: "What the ticket is for", examples: ["Prototype run"] }),
    externalReference: Schema.optional(
      Text(200).annotate({
        description: "The integrator's own identifier for the ticket: unique among the app's tickets; a lookup finds the ticket by it",
        examples: ["ERP-4711"]
      })
    ),
    description: Schema.optional(Text(2000).annotate({ examples: ["Ten brackets for the gearbox prototype"] })),
    dueDate: Schema.optional(IsoDateTime.annotate({
      description: "When the customer needs the parts: an ISO 8601 date-time (a date alone is 00:00 UTC); service jobs carry it into production"
    }))
  },
  computed: {
    number: Schema.String.annotate({ description: "The ticket number, numbered per app and kind: the app's first ticket is T-000001; kept on a replace" }),
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

export const ManufacturabilityStatus = Schema.Literals(["ok", "warning", "blocked"]).annotate({
  description: "ok: nothing found; warning: it can be made, but look (support, thin walls, an open mesh …); blocked: it cannot be made as it is " +
    "(no machine of its technology holds it, walls thinner than the technology makes). docs/geometry.md, \"Manufacturability\""
})

const PartPoint = Schema.Struct({ x: Schema.Finite, y: Schema.Finite, z: Schema.Finite })

/** Where a finding is: docs/geometry.md, "Located findings". */
export const FindingLocation = Schema.Struct({
  boundingBox: Schema.Struct({ min: PartPoint, max: PartPoint }).annotate({
    description: "The box of everything the finding concerns (edges, faces, sampled points, bodies; the whole part for build-volume)"
  }),
  points: Schema.Array(PartPoint).annotate({ description: "A few points of it (at most 5): the thinnest walls first, the largest overhangs first" })
}).annotate({ description: "Where the finding is, in the part's coordinates: millimetres, in the model file's axes" })

export const ManufacturabilityCheck = Schema.Struct({
  id: Schema.String.annotate({
    description: "The check: mesh-open-edges, mesh-non-manifold-edges, mesh-inconsistent-normals, mesh-degenerate-triangles, mesh-shells, " +
      "build-volume, wall-thickness, overhang (FDM, SLA), enclosed-cavities (SLS, MJF), cnc-undercuts, cnc-stock-size (CNC milling)",
    examples: ["build-volume"]
  }),
  status: ManufacturabilityStatus,
  value: Schema.NullOr(Schema.Finite).annotate({ description: "What was measured, in `unit`; null when it could not be measured" }),
  limit: Schema.NullOr(Schema.Finite).annotate({ description: "The technology's limit the value is held to, in `unit`; null when none applies" }),
  unit: Schema.String.annotate({ examples: ["mm", "mm²", "edges"] }),
  message: Schema.String,
  machineIds: Schema.optional(Schema.Array(Schema.String).annotate({ description: "build-volume: the app's machines of the technology the part fits" })),
  location: Schema.optional(FindingLocation.annotate({
    description: "A check that warns or blocks: where, in the part's coordinates (mm). Absent on a model measured before findings were located"
  })),
  suggestion: Schema.optional(Schema.String.annotate({
    description: "A check that warns or blocks: what to change, in one sentence",
    examples: ["Thicken the wall to 0.8 mm at least."]
  }))
})

export const Manufacturability = Schema.Struct({
  status: ManufacturabilityStatus.annotate({ description: "The worst of the checks' statuses" }),
  checks: Schema.Array(ManufacturabilityCheck)
}).annotate({
  description: "Design-for-manufacturing checks of the part's model for its technology, from the geometry (measured once with it) and the app's " +
    "machines as of the part's last write; null until the model is analysed. A blocked part is not quoted unless the quote request says `override`"
})

const PartTechnologyId = Ref("technology").annotate({ description: "The id of the technology that makes the part", examples: ["fdm"] })
const PartMaterialId = Ref("material").annotate({ description: "The id of a material of the part's technology" })
const FROM_CONFIGURATION = "Required with `modelEndpoint`; from a catalogue configuration, the configuration's (a value sent must be it)"

export const TicketModel = defineResource({
  name: "ticketModel",
  path: "/ticket-model",
  title: "Part (ticket model)",
  fields: {
    ticketId: Ref("ticket").annotate({ description: "The id of the ticket the part belongs to" }),
    name: Schema.optional(Text(200).annotate({ description: "The part's name", examples: ["Gearbox bracket"] })),
    modelEndpoint: Schema.optional(ModelEndpoint),
    catalogueModelConfigurationId: Schema.optional(
      Ref("catalogue model configuration").annotate({
        description: "The id of a catalogue model configuration (of the part's technology): the part is made from that catalogue model"
      })
    ),
    technologyId: Schema.optional(PartTechnologyId.annotate({ description: `${PartTechnologyId.ast.annotations?.description} ${FROM_CONFIGURATION}` })),
    materialId: Schema.optional(PartMaterialId.annotate({ description: `${PartMaterialId.ast.annotations?.description} ${FROM_CONFIGURATION}` })),
    colourId: Schema.optional(
      Ref("colour").annotate({
        description: "The id of a colour: one of the material's `colourIds` when it lists them. From a catalogue configuration: the " +
          "configuration's (none when it has none); a value sent must be it",
        examples: ["black"]
      })
    ),
    quantity: Quantity.annotate({ description: `How many pieces: a whole number from 1 to ${MAX_QUANTITY}` }),
    productionParameterIds: Schema.optional(ProductionParameterIds.annotate({
      description: "Production parameter field `name` → the id of one of that field's `values`, for the production parameter fields of the " +
        "technology; a field left out takes its default value. As read: every field of the technology, with the value the part is " +
        "priced with. From a catalogue configuration: the configuration's; a value sent must be it"
    })),
    serviceIds: Schema.optional(
      Schema.Array(Ref("post-processing service")).annotate({
        description: "Post-processing services for the part, each one that applies to its technology. From a catalogue configuration: " +
          "the configuration's; a list sent must hold the same services",
        examples: [["sanding"]]
      })
    )
  },
  completed: { technologyId: PartTechnologyId, materialId: PartMaterialId },
  computed: {
    fileName: Schema.NullOr(Schema.String),
    geometry: Schema.NullOr(Geometry).annotate({ description: "From the model file; null until analysed" }),
    // Absent on a part stored before manufacturability was judged: it gets its verdict when written or quoted again.
    manufacturability: Schema.optional(Schema.NullOr(Manufacturability)),
    productionTimes: Schema.NullOr(ProductionTimes),
    unitPrice: Schema.NullOr(Money),
    totalPrice: Schema.NullOr(Money)
  },
  filters: ["ticketId", "technologyId", "materialId"],
  storage: { references: { ticketId: "ticket", technologyId: "technology", materialId: "material", colourId: "colour" } },
  validateJsonSchema: MODEL_SOURCE_ONE_OF,
  validate: (part) => {
    const hasEndpoint = part.modelEndpoint !== undefined
    const hasConfiguration = part.catalogueModelConfigurationId !== undefined
    if (hasEndpoint === hasConfiguration) {
      return {
        path: [hasEndpoint ? "catalogueModelConfigurationId" : "modelEndpoint"],
        issue: "exactly one of modelEndpoint and catalogueModelConfigurationId is required"
      }
    }
    // From a model file, nothing else says how the part is made: the field is missing, as a required one is (400 MissingField).
    const missing = hasEndpoint ? MODEL_SOURCE_REQUIRES.modelEndpoint.filter((field) => part[field] === undefined) : []
    if (missing.length > 0) return missing.map((field) => ({ path: [field], issue: new SchemaIssue.MissingKey(undefined) }))
    return fileNameRule(part.modelEndpoint)
  }
})

/**
 * A quote is `sent` when created; every other state is final. A PUT moves it
 * to `accepted` or `rejected`; the engine moves it to `superseded` (a newer
 * quote of its ticket, or a change of the ticket's parts or items),
 * `withdrawn` (its ticket cancelled) or `expired` (read after `validUntil`).
 */
export const QuoteState = Schema.Literals(["sent", "accepted", "rejected", "superseded", "expired", "withdrawn"]).annotate({
  description: "sent → accepted | rejected (by a replacement of the quote); sent → superseded (a newer quote of the ticket, or its parts or items changed), " +
    "withdrawn (the ticket cancelled), expired (after validUntil, as read). Every state but sent is final."
})

const Notes = Text(4000).annotate({ description: "Free-text notes on the quote", examples: ["Valid with drawing rev B"] })

/** The most quantities one call prices, or one quote line offers: a ladder, not a table. */
export const MAX_QUANTITY_LADDER = 20

/** Quantities asked for at once: 1 to 20 distinct part quantities (400 naming the field otherwise). */
export const QuantityLadder = Schema.Array(Quantity).check(
  Schema.isMinLength(1),
  Schema.isMaxLength(MAX_QUANTITY_LADDER),
  Schema.isUnique({ message: "expected distinct quantities" })
)

/** Working days until something is made (docs/pricing.md, "Lead times"). */
export const LeadTimeDays = Int32.check(Schema.isGreaterThanOrEqualTo(0))

export const QuoteOption = Schema.Struct({
  quantity: Quantity.annotate({ description: "A quantity the buyer may choose for the line's part" }),
  unitPrice: Money.annotate({
    description: "In the quote's currency, in its minor unit: the part's EUR unit price at this quantity (its price breaks) at the quote's " +
      "exchange rate; at the line's own quantity, always the line's unitPrice"
  }),
  total: Money.annotate({ description: "quantity × unitPrice, exactly" }),
  leadTimeDays: Schema.NullOr(LeadTimeDays).annotate({
    description: "Working days until made at this quantity, as the part's price breaks say when the quote is made; null when the app has no " +
      "machine of the part's technology",
    examples: [9]
  })
}).annotate({ description: "One quantity a quote line offers, with its price and lead time" })

/** `POST /ticket/{ticketId}/quote`: a part's line offered at several quantities. */
export const QuantityOptionsRequest = Schema.Struct({
  ticketModelId: Ref("part").annotate({ description: "A part of the quoted ticket (once in `quantityOptions`)" }),
  quantities: QuantityLadder.annotate({
    description: `The quantities to offer: 1 to ${MAX_QUANTITY_LADDER} distinct part quantities; the part's own quantity is added when missing`,
    examples: [[1, 10, 100]]
  })
})

export const QuoteLine = Schema.Struct({
  description: Text(500),
  ticketModelId: Schema.optional(Schema.String.annotate({ description: "The part (of the quote's ticket) this line prices" })),
  itemId: Schema.optional(Schema.String.annotate({ description: "The item (of the quote's ticket) this line prices" })),
  quantity: Quantity.annotate({
    description: "The part's or item's quantity. A replacement of the quote cannot change it, except on a line with `options` when it " +
      "accepts the quote: one of the options' quantities chooses that option (the part takes the quantity)"
  }),
  manufacturability: Schema.optional(ManufacturabilityStatus.annotate({
    description: "Set by the engine on a part's line: the part's manufacturability status when the quote was made; a value sent must be " +
      "the line's (422 naming `lines.<i>.manufacturability`)"
  })),
  unitPrice: Money.annotate({
    description: "In the quote's currency, in its minor unit (0.01 for EUR): the part's or item's EUR unit price at the quote's exchange rate; " +
      "a replacement of the quote may override it while the quote is sent"
  }),
  total: Money.annotate({
    description: "Set by the engine: quantity × unitPrice, exactly. A replacement may leave it out; a value sent must be the line's as " +
      "read or as the replacement makes it (422 naming `lines.<i>.total`)"
  }),
  options: Schema.optional(
    Schema.Array(QuoteOption).annotate({
      description: "Set by the engine on a part's line quoted at several quantities (`quantityOptions` of the quote request), in ascending " +
        "quantity, the line's own quantity among them; the buyer chooses one by accepting the quote with the line's `quantity` set to it. " +
        "A value sent must be the line's as read or as the replacement makes it (422 naming `lines.<i>.options`)"
    })
  )
})

/** A line as a replacement of the quote sends it: its total may be left out (the engine sets it). */
const QuoteLineSent = QuoteLine.mapFields((fields) => ({ ...fields, total: Schema.optional(fields.total) }))

export const TicketQuote = defineResource({
  name: "ticketQuote",
  path: "/ticket-quote",
  title: "Ticket quote",
  fields: {
    ticketId: Ref("ticket").annotate({ description: "The id of the quoted ticket; it cannot change" }),
    currencyId: Ref("currency").annotate({ description: "The id of the quote's currency; it cannot change", examples: ["EUR"] }),
    state: QuoteState,
    validUntil: IsoDateTime.annotate({
      description: "The quote can be accepted until this instant (an ISO 8601 date-time); a sent quote read after it is expired"
    }),
    lines: Schema.Array(QuoteLineSent),
    notes: Schema.optional(Notes)
  },
  completed: { lines: Schema.Array(QuoteLine) },
  computed: {
    number: Schema.String.annotate({ description: "The quote number, numbered per app and kind: the app's first quote is Q-000001; kept on a replace" }),
    exchangeRate: Positive.annotate({
      description: "Units of the quote's currency per 1 EUR (the base currency) used to convert its prices; 1 for EUR"
    }),
    total: Money.annotate({ description: "Set by the engine: the sum of the line totals, exactly" }),
    pdfUrl: Schema.String.annotate({
      description: "Where the quote reads as a PDF (A4, the same bytes for the same quote): the quote's own path, relative to the " +
        "API's origin like a created record's `Location`, read with `Accept: application/pdf`"
    })
  },
  filters: ["ticketId", "state"],
  // A replacement that carries them back must carry the engine's: an edited total is refused, not silently replaced.
  verified: ["number", "exchangeRate", "total"],
  storage: { numberPrefix: "Q", references: { ticketId: "ticket", currencyId: "currency" } }
})

/** `POST /ticket/{ticketId}/quote`: optional overrides of the created quote. */
export const QuoteRequest = Schema.Struct({
  currencyId: Schema.optional(Ref("currency").annotate({ description: "The id of the quote's currency; default: the project's, else EUR", examples: ["USD"] })),
  exchangeRate: Schema.optional(Positive.annotate({
    description: "Units of the quote's currency per 1 EUR, replacing for this quote the currency's own `exchangeRate`",
    examples: [1.08]
  })),
  validDays: Schema.optional(
    Int32.check(Schema.isBetween({ minimum: 1, maximum: 365 })).annotate({
      description: "How many days the quote is valid, 1 to 365 (default 30)",
      examples: [30]
    })
  ),
  notes: Schema.optional(Notes),
  quantityOptions: Schema.optional(
    Schema.Array(QuantityOptionsRequest).annotate({
      description: "Parts whose lines offer several quantities for the buyer to choose one when accepting the quote; each line still " +
        "prices the part's own quantity, and the quote's total is that of the lines as they are. 422 naming " +
        "`quantityOptions.<i>.ticketModelId` for a part not on the ticket or named twice"
    })
  ),
  override: Schema.optional(Schema.Boolean.annotate({
    description: "true quotes the ticket even when a part's manufacturability is blocked (its line says so); without it such a ticket is a 409 " +
      "naming the part and the check",
    examples: [true]
  }))
})

export const ModelVersion = defineResource({
  name: "modelVersion",
  path: "/model-version",
  title: "Model version",
  fields: {
    ticketModelId: Ref("part"),
    version: Int32.check(Schema.isGreaterThanOrEqualTo(1)).annotate({ description: "1 for the part's first model file, then 2, 3, …" }),
    fileName: Schema.NullOr(Schema.String),
    modelEndpoint: Schema.NullOr(ModelEndpoint),
    geometry: Schema.NullOr(Geometry)
  },
  filters: ["ticketModelId"],
  storage: { references: { ticketModelId: "ticketModel" } }
})

/** `POST /model-version/{id}/fields-resolve`: values of named fields of a version. */
export const FieldsResolveRequest = Schema.Struct({
  fields: NonEmptyList(Schema.String.check(Schema.isMaxLength(100)), 100)
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

/** The most parts one `from-catalogue` call creates. */
export const MAX_PARTS_FROM_CATALOGUE = 100

/** `POST /ticket-model/from-catalogue`: parts for a ticket from catalogue configurations. */
export const FromCatalogueRequest = Schema.Struct({
  ticketId: Ref("ticket"),
  parts: NonEmptyList(
    Schema.Struct({
      catalogueModelConfigurationId: Ref("catalogue model configuration"),
      quantity: Quantity
    }),
    MAX_PARTS_FROM_CATALOGUE
  )
})

/** `POST /ticket-model/{id}/similarity`. */
export const SimilarityRequest = Schema.Struct({
  limit: Schema.optional(Int32.check(Schema.isBetween({ minimum: 1, maximum: 100 })))
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
/** The body of `PUT /ticket-model/{id}/machining-strategy/{serviceId}`; the strategy as read is accepted, its ids ignored (the path's hold). */
export const MachiningStrategyInput = acceptingTheRecord(
  MachiningStrategy.mapFields(({ ticketModelId: _t, serviceId: _s, ...rest }) => rest),
  { ticketModelId: Schema.String, serviceId: Schema.String }
)

export const PostProcessingRequest = Schema.Struct({ serviceIds: Schema.Array(Ref("post-processing service")) })
