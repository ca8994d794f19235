/**
 * Reference data: technologies with their quotation forms and production
 * parameter fields, currencies, colours and post-processing services are
 * global (every app reads them from its first call); materials, material
 * series, regions, suppliers, users and blanks belong to an app.
 */
import { Schema } from "effect"
import { Mode } from "../Grants.ts"
import { Int32 } from "../Integers.ts"
import { NonEmptyList } from "../NonEmptyList.ts"
import { defineResource } from "../Resource.ts"
import { Dimensions, Email, List, Money, Name, NonNegative, Positive, Ref, Refs, Text } from "./fields.ts"

export const Technology = defineResource({
  name: "technology",
  path: "/technology",
  title: "Technology",
  fields: { name: Name.annotate({ examples: ["FDM", "SLA", "SLS", "MJF", "CNC milling"] }), description: Schema.optional(Text(1000)) },
  filters: ["name"],
  storage: { global: true }
})

export const Currency = defineResource({
  name: "currency",
  path: "/currency",
  title: "Currency",
  fields: {
    code: Schema.String.check(Schema.isPattern(/^[A-Z]{3}$/, { message: "an ISO 4217 code" }))
      .annotate({ description: "ISO 4217 code", examples: ["EUR"] }),
    name: Name.annotate({ examples: ["Euro"] }),
    symbol: Text(5).annotate({ examples: ["€"] }),
    minorUnits: Int32.check(Schema.isBetween({ minimum: 0, maximum: 4 })).annotate({
      description: "Decimal places of the minor unit (ISO 4217 exponent): prices in this currency are rounded to it",
      examples: [2]
    }),
    exchangeRate: Positive.annotate({
      description: "Units of this currency per 1 EUR, the base currency (1 for EUR): the app's own rate when it set one " +
        "(PUT /currency/{id}/exchange-rate), else the engine's reference rate. A quote records the rate it used; " +
        "POST /ticket/{ticketId}/quote may give its own",
      examples: [1]
    })
  },
  filters: ["code"],
  storage: { global: true }
})

/** The most units of a currency per 1 EUR an app's rate may give (far above any currency's). */
export const MAX_EXCHANGE_RATE = 1_000_000

/** `PUT /currency/{id}/exchange-rate`: the app's own rate of a currency. */
export const ExchangeRateRequest = Schema.Struct({
  exchangeRate: Positive.check(Schema.isLessThanOrEqualTo(MAX_EXCHANGE_RATE)).annotate({
    description: `Units of the currency per 1 EUR, above 0 and at most ${MAX_EXCHANGE_RATE}; EUR's is 1`,
    examples: [1.08]
  })
})

export const Colour = defineResource({
  name: "colour",
  path: "/colour",
  title: "Colour",
  fields: {
    name: Name,
    hex: Schema.String.check(Schema.isPattern(/^#[0-9a-fA-F]{6}$/, { message: "a colour as #rrggbb" }))
      .annotate({ description: "The colour as #rrggbb", examples: ["#1e90ff"] })
  },
  filters: ["name", "hex"],
  storage: { global: true }
})

export const PostProcessingService = defineResource({
  name: "service",
  path: "/service",
  title: "Post-processing service",
  fields: {
    name: Name,
    description: Schema.optional(Text(1000)),
    technologyIds: Schema.Array(Ref("technology")).annotate({ description: "Technologies the service applies to" }),
    pricePerPart: Money,
    pricePerSquareCentimetre: Money,
    setupTime: NonNegative.annotate({ description: "Seconds per batch" }),
    cycleTimePerSquareCentimetre: NonNegative.annotate({ description: "Seconds per cm² of surface" })
  },
  filters: ["name"],
  storage: { global: true }
})

const ParameterValue = Schema.Struct({ id: Schema.String, label: Schema.String })

export const ProductionParameterField = defineResource({
  name: "productionParameterField",
  path: "/production-parameter-field",
  title: "Production parameter field",
  fields: {
    technologyId: Ref("technology"),
    name: Name.annotate({ description: "The key of `productionParameterIds` on a part", examples: ["layerHeight"] }),
    label: Name,
    values: NonEmptyList(ParameterValue, 100),
    defaultValueId: Schema.String
  },
  filters: ["technologyId", "name"],
  storage: { global: true, references: { technologyId: "technology" } }
})

export const QuotationForm = defineResource({
  name: "quotationForm",
  path: "/quotation-form",
  title: "Quotation form",
  fields: {
    technologyId: Ref("technology"),
    name: Name,
    parameterFieldIds: Schema.Array(Ref("production parameter field"))
  },
  filters: ["technologyId"],
  storage: { global: true, references: { technologyId: "technology" } }
})

export const QuotationFormRegion = defineResource({
  name: "quotationFormRegion",
  path: "/quotation-form-region",
  title: "Quotation form region",
  fields: {
    quotationFormId: Ref("quotation form"),
    name: Name,
    countries: List(
      Schema.String.check(Schema.isMaxLength(2), Schema.isPattern(/^[A-Z]{2}$/, { message: "an ISO 3166-1 alpha-2 code" }))
        .annotate({ description: "ISO 3166-1 alpha-2 code", examples: ["DE"] }),
      // Every code ISO 3166-1 assigns (249), with room for new ones.
      300
    ),
    currencyId: Schema.optional(Ref("currency")),
    priceFactor: Schema.optional(Positive.annotate({ description: "Multiplies prices quoted in the region (default 1)" }))
  },
  filters: ["quotationFormId", "name"],
  storage: { references: { quotationFormId: "quotationForm", currencyId: "currency" } }
})

export const MaterialSeries = defineResource({
  name: "materialSeries",
  path: "/material-series",
  title: "Material series",
  fields: { technologyId: Ref("technology"), name: Name, description: Schema.optional(Text(1000)) },
  filters: ["technologyId", "name"],
  storage: { references: { technologyId: "technology" } }
})

export const Material = defineResource({
  name: "material",
  path: "/material",
  title: "Material",
  fields: {
    name: Name,
    technologyId: Ref("technology"),
    materialSeriesId: Schema.optional(Ref("material series")),
    density: Schema.optional(Positive.annotate({ description: "g/cm³; defaults per technology" })),
    pricePerKg: Schema.optional(Money.annotate({ description: "Defaults per technology" })),
    colourIds: Schema.optional(Refs("colour"))
  },
  filters: ["technologyId", "materialSeriesId", "name"],
  storage: { references: { technologyId: "technology", materialSeriesId: "materialSeries" } }
})

export const Supplier = defineResource({
  name: "supplier",
  path: "/supplier",
  title: "Supplier",
  fields: { name: Name, email: Schema.optional(Email), phone: Schema.optional(Text(50)), website: Schema.optional(Text(300)) },
  filters: ["name"]
})

export const User = defineResource({
  name: "user",
  path: "/user",
  title: "User",
  fields: {
    name: Name,
    email: Email,
    role: Schema.Literals(["admin", "sales", "production", "viewer"])
  },
  filters: ["email", "role"]
})

export const Blank = defineResource({
  name: "blank",
  path: "/blank",
  title: "Blank",
  fields: {
    name: Name,
    materialId: Schema.optional(Ref("material")),
    dimensions: Dimensions.annotate({ description: "Stock size in millimetres" }),
    price: Schema.optional(Money)
  },
  filters: ["materialId", "name"],
  storage: { references: { materialId: "material" } }
})

/** The app's settings (GET /app): derived from the secret's app. */
export const AppSettings = Schema.Struct({
  id: Schema.String.annotate({ description: "The app id" }),
  name: Schema.String,
  defaultCurrency: Schema.String,
  measurementUnit: Schema.Literal("mm"),
  timeZone: Schema.String,
  mode: Mode.annotate({ description: "The mode of the secret that reads them: `test` when it works on the app's test data" })
}).annotate({ title: "App settings" })
