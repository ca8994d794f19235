/**
 * Price breaks: a part, or a catalogue configuration as a part made from it
 * would be, priced at several quantities in one call, each with its lead
 * time from the app's capacity and, when priority scheduling shortens it,
 * an expedite option (docs/pricing.md, "Price breaks" and "Lead times").
 */
import { Schema } from "effect"
import { Int32 } from "../Integers.ts"
import { Money, NonNegative, Positive, Quantity } from "./fields.ts"
import { LeadTimeDays, MAX_QUANTITY_LADDER, ProductionTimes, QuantityLadder } from "./orders.ts"

/** The most quantities one call prices: a ladder, not a table. */
export const MAX_PRICE_BREAKS = MAX_QUANTITY_LADDER

/** `POST /ticket-model/{id}/price-breaks` and `POST /catalogue-model-configuration/{id}/price-breaks`. */
export const PriceBreaksRequest = Schema.Struct({
  quantities: QuantityLadder.annotate({
    description: `The quantities to price: 1 to ${MAX_PRICE_BREAKS} distinct whole numbers, each a valid part quantity; answered in this order`,
    examples: [[1, 10, 100, 1000]]
  })
})

export const Expedite = Schema.Struct({
  leadTimeDays: LeadTimeDays.annotate({
    description: "Working days when the break is made ahead of the queue of open service jobs: fewer than the break's own `leadTimeDays`",
    examples: [3]
  }),
  unitPrice: Money.annotate({ description: "EUR: the break's unit price plus the expedite surcharge, rounded half up to the cent (at least a cent more)" }),
  totalPrice: Money.annotate({ description: "EUR: quantity × unitPrice, exactly; more than the break's `totalPrice`" })
}).annotate({ description: "Priority scheduling at the expedite surcharge; absent when it would not deliver sooner" })

export const PriceBreak = Schema.Struct({
  quantity: Quantity,
  unitPrice: Money.annotate({
    description: "EUR: what the part's `unitPrice` is at this quantity (setup and programming amortised over it); for a catalogue " +
      "configuration, that of a part made from it"
  }),
  totalPrice: Money.annotate({ description: "EUR: quantity × unitPrice, exactly" }),
  productionTimes: ProductionTimes,
  leadTimeDays: Schema.NullOr(LeadTimeDays).annotate({
    description: "Working days until the break is made: the queue of open service jobs of the technology plus this break's hours, over the " +
      "machines' hours per working day, rounded up, plus the margin; null when the app has no machine of the technology",
    examples: [5]
  }),
  expedite: Schema.optional(Expedite)
})

/** What the lead times are computed from; null when the app has no machine of the part's technology. */
export const LeadTimeBasis = Schema.Struct({
  machineCount: Int32.check(Schema.isGreaterThanOrEqualTo(1)).annotate({ description: "The app's machines of the technology" }),
  workingDaysPerWeek: Int32.check(Schema.isBetween({ minimum: 1, maximum: 7 })).annotate({
    description: "Weekdays on which at least one of them works (their groups' `workingHours`; a machine without one works every day)"
  }),
  capacityHoursPerWorkingDay: Positive.annotate({ description: "Machine hours per working day: their hours per week over the working days" }),
  backlogHours: NonNegative.annotate({ description: "Hours still to make in the open (queued, running, paused) service jobs of the technology" }),
  marginDays: LeadTimeDays.annotate({ description: "Working days added to every lead time (inspection, packing, hand-over)" }),
  expediteSurchargePercent: NonNegative.annotate({ description: "What expediting adds to the unit price, in percent" })
}).annotate({ description: "The capacity and queue the lead times come from, rounded to the hundredth of an hour" })

/** What both answers share: the breaks, their currency and what their lead times come from. */
const breaksFields = {
  technologyId: Schema.String,
  currencyId: Schema.String.annotate({ description: "The currency of every price: EUR, the base currency", examples: ["EUR"] }),
  breaks: Schema.Array(PriceBreak).annotate({ description: "One per quantity asked for, in the order asked" }),
  leadTimeBasis: Schema.NullOr(LeadTimeBasis)
}

export const PriceBreaks = Schema.Struct({
  ticketModelId: Schema.String,
  ...breaksFields
}).annotate({ title: "Price breaks" })

/** A catalogue configuration priced as a part made from it would be: its model's geometry, no post-processing. */
export const CatalogueConfigurationPriceBreaks = Schema.Struct({
  catalogueModelConfigurationId: Schema.String,
  catalogueModelId: Schema.String.annotate({ description: "The catalogue model holding the configuration" }),
  ...breaksFields
}).annotate({ title: "Catalogue configuration price breaks" })
