/**
 * Production: machine groups 1–n machines (technology, location, hourly
 * rate); reel groups (numeric ids) 1–n reels that machines hold; service
 * jobs made from a ticket's parts when it is sent to production, with PPS
 * records (one per part in a job), a timeline, merges and reassignments.
 */
import { Schema } from "effect"
import { DateRangeQuery, defineResource } from "../Resource.ts"
import { Dimensions, IsoDateTime, Location, Money, Name, NonNegative, Quantity, Ref, Text } from "./fields.ts"

export const MachineGroup = defineResource({
  name: "machineGroup",
  path: "/machine-group",
  title: "Machine group",
  fields: {
    name: Name,
    technologyId: Ref("technology"),
    hourlyRate: Schema.optional(Money.annotate({ description: "Per hour, for machines without their own" })),
    description: Schema.optional(Text(2000))
  },
  filters: ["technologyId", "name"],
  storage: { references: { technologyId: "technology" } }
})

export const Machine = defineResource({
  name: "machine",
  path: "/machine",
  title: "Machine",
  fields: {
    name: Name,
    technologyId: Ref("technology"),
    machineGroupId: Schema.optional(Ref("machine group")),
    location: Location,
    hourlyRate: Schema.optional(Money),
    buildVolume: Schema.optional(Dimensions)
  },
  computed: { reelIds: Schema.Array(Schema.String).annotate({ description: "Reels the machine holds (PUT /machine/{id}/reels)" }) },
  filters: ["technologyId", "machineGroupId", "name"],
  storage: { references: { technologyId: "technology", machineGroupId: "machineGroup" } }
})

export const ProximityRequest = Schema.Struct({
  latitude: Location.fields.latitude,
  longitude: Location.fields.longitude,
  technologyId: Schema.optional(Ref("technology")),
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 })))
})
export const MachineByDistance = Machine.record.mapFields((fields) => ({
  ...fields,
  distanceKm: NonNegative.annotate({ description: "Great-circle distance from the given point" })
}))

export const MachineReelsRequest = Schema.Struct({ reelIds: Schema.Array(Ref("reel")) })

/** A reel group's id is a number, the same in POST, GET and the body of PUT /reel-group. */
export const ReelGroupId = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

const reelGroupFields = {
  materialId: Ref("material"),
  colourId: Schema.optional(Ref("colour")),
  reelWeight: Schema.optional(NonNegative.annotate({ description: "Grams of material on a full reel" })),
  supplierId: Schema.optional(Ref("supplier"))
}

export const ReelGroupInput = Schema.Struct({
  name: Name.annotate({ description: "Read back as `inventoryProductName`" }),
  ...reelGroupFields
})
export const ReelGroupUpdate = Schema.Struct({ id: ReelGroupId, ...ReelGroupInput.fields })
export const ReelGroup = Schema.Struct({
  id: ReelGroupId,
  inventoryProductName: Schema.String,
  ...reelGroupFields,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ title: "Reel group" })
export const ReelGroupListQuery = Schema.Struct({
  ids: Schema.optional(Schema.ArrayEnsure(Schema.String)),
  materialId: Schema.optional(Schema.ArrayEnsure(Schema.String)),
  ...DateRangeQuery
})

export const Reel = defineResource({
  name: "reel",
  path: "/reel",
  title: "Reel",
  fields: {
    reelGroupId: ReelGroupId,
    remainingWeight: NonNegative.annotate({ description: "Grams left on the reel" }),
    machineId: Schema.optional(Schema.NullOr(Ref("machine"))),
    lotNumber: Schema.optional(Text(100))
  },
  filters: ["machineId", "lotNumber"],
  storage: { references: { machineId: "machine" } }
})
/** `PUT /reel`: the whole reel, its id in the body. */
export const ReelUpdate = Schema.Struct({ id: Ref("reel"), ...Reel.fields })
/** `POST /inventory-product-location/{id}/reel`: new reels in a reel group. */
export const NewReelsRequest = Schema.Struct({
  reels: Schema.NonEmptyArray(Schema.Struct({ remainingWeight: NonNegative, lotNumber: Schema.optional(Text(100)) }))
})

export const ServiceJobState = Schema.Literals(["queued", "running", "paused", "done", "merged"])
export const TimelineInterval = Schema.Struct({ startedAt: Schema.String, stoppedAt: Schema.NullOr(Schema.String) })

export const ServiceJob = defineResource({
  name: "serviceJob",
  path: "/service-job",
  title: "Service job",
  fields: {
    name: Name,
    technologyId: Ref("technology"),
    machineGroupId: Schema.optional(Schema.NullOr(Ref("machine group"))),
    machineId: Schema.optional(Schema.NullOr(Ref("machine"))),
    ticketId: Schema.optional(Ref("ticket")),
    ticketModelIds: Schema.Array(Ref("part")),
    dueDate: Schema.optional(IsoDateTime)
  },
  computed: {
    state: ServiceJobState,
    timeline: Schema.Array(TimelineInterval),
    totalTime: NonNegative.annotate({ description: "Seconds of the stopped intervals" })
  },
  filters: ["technologyId", "machineGroupId", "ticketId", "state"],
  storage: { references: { technologyId: "technology", machineGroupId: "machineGroup", machineId: "machine", ticketId: "ticket" } }
})

export const PpsState = Schema.Literals(["planned", "in_production", "done", "scrapped"])

export const Pps = defineResource({
  name: "pps",
  path: "/pps",
  title: "PPS record",
  fields: {
    serviceJobId: Ref("service job"),
    ticketModelId: Ref("part"),
    quantity: Quantity,
    state: PpsState,
    producedQuantity: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    scrappedQuantity: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
  },
  filters: ["serviceJobId", "ticketModelId", "state"],
  storage: { references: { serviceJobId: "serviceJob", ticketModelId: "ticketModel" } }
})

/** The production of one service job: its PPS records. */
export const ServiceJobProduction = Schema.Struct({
  serviceJobId: Schema.String,
  state: ServiceJobState,
  quantity: Schema.Int,
  producedQuantity: Schema.Int,
  scrappedQuantity: Schema.Int,
  pps: Schema.Array(Pps.record)
}).annotate({ title: "Service job production" })
export const ServiceJobProductionQuery = Schema.Struct({
  serviceJobIds: Schema.optional(Schema.ArrayEnsure(Schema.String)),
  state: Schema.optional(Schema.ArrayEnsure(ServiceJobState)),
  ...DateRangeQuery
})
/** `PUT /service-job/{id}/production/{ppsId}`: a PPS record's progress. */
export const PpsProgress = Schema.Struct({
  state: PpsState,
  producedQuantity: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  scrappedQuantity: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})

export const MergeRequest = Schema.Struct({
  targetServiceJobId: Ref("service job"),
  sourceServiceJobIds: Schema.NonEmptyArray(Ref("service job"))
})
export const ReassignRequest = Schema.Struct({
  fromServiceJobId: Ref("service job"),
  toServiceJobId: Ref("service job"),
  ticketModelIds: Schema.NonEmptyArray(Ref("part"))
})

export const ReportMetricsQuery = Schema.Struct({
  from: Schema.optional(IsoDateTime),
  to: Schema.optional(IsoDateTime)
})
export const ReportMetrics = Schema.Struct({
  from: Schema.NullOr(Schema.String),
  to: Schema.NullOr(Schema.String),
  quotesSent: Schema.Int,
  acceptedShare: Schema.Finite,
  quotedValue: Money,
  productionHours: NonNegative,
  byTechnology: Schema.Array(Schema.Struct({
    technologyId: Schema.String,
    quotesSent: Schema.Int,
    quotedValue: Money,
    productionHours: NonNegative
  }))
}).annotate({ title: "Report metrics" })
