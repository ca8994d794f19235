/**
 * Production: machine groups 1–n machines (technology, location, hourly
 * rate); reel groups (numeric ids) 1–n reels that machines hold; service
 * jobs made from a ticket's parts when it is sent to production, with PPS
 * records (one per part in a job), a timeline, merges and reassignments.
 * The rules between them are in docs/workflows-production.md.
 */
import { Schema, SchemaGetter } from "effect"
import { Int32 } from "../Integers.ts"
import { NonEmptyList } from "../NonEmptyList.ts"
import { acceptingTheRecord, DateRangeQuery, defineResource, FilterText, repeatable } from "../Resource.ts"
import { Dimensions, IsoDateTime, Location, Money, Name, NonNegative, Quantity, Ref, Text } from "./fields.ts"

/** A time of day, `HH:MM` on the 24-hour clock; `24:00` is the end of the day. */
const TimeOfDay = Schema.String.check(
  Schema.isPattern(/^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$/, { message: "expected a time of day, HH:MM (00:00 to 24:00)" })
)

/** Minutes since midnight of a `HH:MM` time. */
export const minutesOfDay = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5))

/** When a group's machines work, every week: the same hours on each of its days (docs/pricing.md, "Lead times"). */
export const WorkingHours = Schema.Struct({
  days: Schema.Array(Int32.check(Schema.isBetween({ minimum: 1, maximum: 7 }))).check(
    Schema.isMinLength(1),
    Schema.isUnique({ message: "expected distinct days" })
  ).annotate({ description: "The weekdays they work, ISO numbers: 1 Monday … 7 Sunday", examples: [[1, 2, 3, 4, 5]] }),
  from: TimeOfDay.annotate({ description: "When their day starts, HH:MM", examples: ["08:00"] }),
  to: TimeOfDay.annotate({ description: "When their day ends, HH:MM (24:00: midnight), after `from`", examples: ["18:00"] })
}).check(Schema.makeFilter((hours) => minutesOfDay(hours.from) < minutesOfDay(hours.to) ? true : { path: ["to"], issue: "must be after `from`" }))

export const MachineGroup = defineResource({
  name: "machineGroup",
  path: "/machine-group",
  title: "Machine group",
  fields: {
    name: Name,
    technologyId: Ref("technology"),
    hourlyRate: Schema.optional(Money.annotate({ description: "Per hour, for machines without their own" })),
    description: Schema.optional(Text(2000)),
    workingHours: Schema.optional(WorkingHours.annotate({
      description: "When the group's machines work, the capacity lead times are computed from (docs/pricing.md); absent: around the clock, every day"
    }))
  },
  filters: ["technologyId", "name"],
  storage: { references: { technologyId: "technology" } }
})

/** Every list pages alike: `limit` (1–1000, default 100) and `offset`. */
const { limit: PageLimit, offset: PageOffset } = MachineGroup.listQuery.fields

export const Machine = defineResource({
  name: "machine",
  path: "/machine",
  title: "Machine",
  fields: {
    name: Name,
    technologyId: Ref("technology").annotate({ description: "The id of a technology: its machine group's, when it has one" }),
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
  limit: Schema.optional(Int32.check(Schema.isBetween({ minimum: 1, maximum: 100 })))
})
export const MachineByDistance = Machine.record.mapFields((fields) => ({
  ...fields,
  distanceKm: NonNegative.annotate({ description: "Great-circle distance from the given point" })
}))

export const MachineReelsRequest = Schema.Struct({ reelIds: Schema.Array(Ref("reel")) })

/** A reel group's id is a number, the same in POST, GET and the body of PUT /reel-group. */
export const ReelGroupId = Int32.check(Schema.isGreaterThanOrEqualTo(1))

const reelGroupFields = {
  materialId: Ref("material"),
  colourId: Schema.optional(Ref("colour")),
  reelWeight: Schema.optional(NonNegative.annotate({ description: "Grams of material on a full reel" })),
  supplierId: Schema.optional(Ref("supplier")),
  lowWeightThreshold: Schema.optional(NonNegative.annotate({
    description: "Grams: a reel of the group whose `remainingWeight` falls under it is low, announced once by a `reel.low` event " +
      "(again only after it has been at or above it)",
    examples: [100]
  }))
}

export const ReelGroupInput = Schema.Struct({
  name: Name.annotate({ description: "Read back as `inventoryProductName`" }),
  ...reelGroupFields
})
const ReelGroupReplacement = Schema.Struct({ id: ReelGroupId, ...ReelGroupInput.fields })
/**
 * `PUT /reel-group`: the whole group, its id in the body. The group as read is
 * accepted: its `inventoryProductName` stands for `name` (send either, or both
 * alike), and its timestamps are ignored.
 */
export const ReelGroupUpdate = Schema.Struct({
  id: ReelGroupId,
  name: Schema.optional(ReelGroupInput.fields.name),
  inventoryProductName: Schema.optional(Name.annotate({ description: "The group's name as read: accepted for `name`" })),
  ...reelGroupFields,
  createdAt: Schema.optional(Schema.String.annotate({ description: "Read-only: accepted in a PUT body (as read) and ignored." })),
  updatedAt: Schema.optional(Schema.String.annotate({ description: "Read-only: accepted in a PUT body (as read) and ignored." }))
}).check(Schema.makeFilter((body) => {
  if (body.name === undefined && body.inventoryProductName === undefined) {
    return { path: ["name"], issue: "Missing required value: send `name` (or `inventoryProductName`, as read)" }
  }
  if (body.name !== undefined && body.inventoryProductName !== undefined && body.name !== body.inventoryProductName) {
    return { path: ["inventoryProductName"], issue: "differs from `name`: send one of them, or both alike" }
  }
  return true
})).pipe(Schema.decodeTo(ReelGroupReplacement, {
  decode: SchemaGetter.transform(({ createdAt: _c, updatedAt: _u, inventoryProductName, name, ...fields }) => ({
    ...fields,
    name: (name ?? inventoryProductName)!
  })),
  encode: SchemaGetter.transform((group) => group)
})).annotate({ title: "Reel group replacement" })
export const ReelGroup = Schema.Struct({
  id: ReelGroupId,
  inventoryProductName: Schema.String,
  ...reelGroupFields,
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ title: "Reel group" })
export const ReelGroupListQuery = Schema.Struct({
  ids: Schema.optional(repeatable(FilterText)),
  materialId: Schema.optional(repeatable(FilterText)),
  ...DateRangeQuery,
  limit: PageLimit,
  offset: PageOffset
})

export const Reel = defineResource({
  name: "reel",
  path: "/reel",
  title: "Reel",
  fields: {
    reelGroupId: ReelGroupId,
    remainingWeight: NonNegative.annotate({ description: "Grams left on the reel: at most its group's `reelWeight`" }),
    machineId: Schema.optional(Schema.NullOr(
      Ref("machine").annotate({
        description: "The machine holding the reel: one of the technology of the reel group's material"
      })
    )),
    lotNumber: Schema.optional(Text(100))
  },
  filters: ["machineId", "lotNumber"],
  storage: { references: { machineId: "machine" } }
})
/** `PUT /reel`: the whole reel, its id in the body. */
export const ReelUpdate = acceptingTheRecord(Schema.Struct({ id: Ref("reel"), ...Reel.fields }), {
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotate({ title: "Reel replacement" })
/** `POST /inventory-product-location/{id}/reel`: new reels in a reel group. */
export const NewReelsRequest = Schema.Struct({
  reels: NonEmptyList(Schema.Struct({ remainingWeight: NonNegative, lotNumber: Schema.optional(Text(100)) }), 100)
})

export const ServiceJobState = Schema.Literals(["queued", "running", "paused", "done", "merged"]).annotate({
  description: "queued → running ⇄ paused → done (when every PPS record is done); merged: folded into another job"
})
export const TimelineInterval = Schema.Struct({ startedAt: Schema.String, stoppedAt: Schema.NullOr(Schema.String) })

export const ServiceJob = defineResource({
  name: "serviceJob",
  path: "/service-job",
  title: "Service job",
  fields: {
    name: Name,
    technologyId: Ref("technology").annotate({ description: "The id of a technology: every part's, and the machine group's and machine's" }),
    machineGroupId: Schema.optional(Schema.NullOr(Ref("machine group"))),
    machineId: Schema.optional(Schema.NullOr(Ref("machine"))),
    ticketId: Schema.optional(Ref("ticket")),
    ticketModelIds: Schema.Array(Ref("part")).annotate({
      description: "The parts the job makes, of its technology; a part is in at most one open (queued, running, paused) job"
    }),
    dueDate: Schema.optional(IsoDateTime)
  },
  computed: {
    state: ServiceJobState,
    timeline: Schema.Array(TimelineInterval),
    totalTime: NonNegative.annotate({ description: "Seconds of the stopped intervals, to the millisecond", examples: [5400.021] })
  },
  filters: ["technologyId", "machineGroupId", "ticketId", "state"],
  storage: { references: { technologyId: "technology", machineGroupId: "machineGroup", machineId: "machine", ticketId: "ticket" } }
})

export const PpsState = Schema.Literals(["planned", "in_production", "done", "scrapped"]).annotate({
  description: "done needs `producedQuantity` equal to `quantity` and is final"
})

export const Pps = defineResource({
  name: "pps",
  path: "/pps",
  title: "PPS record",
  fields: {
    serviceJobId: Schema.NullOr(Ref("service job")).annotate({
      description: "The job the part is in; null while it is in none (the record keeps its progress for the job the part joins next)"
    }),
    ticketModelId: Ref("part"),
    quantity: Quantity.annotate({ description: "The planned quantity: the part's, when the record was made" }),
    state: PpsState,
    producedQuantity: Int32.check(Schema.isGreaterThanOrEqualTo(0)),
    scrappedQuantity: Int32.check(Schema.isGreaterThanOrEqualTo(0))
  },
  filters: ["serviceJobId", "ticketModelId", "state"],
  storage: { references: { serviceJobId: "serviceJob", ticketModelId: "ticketModel" } }
})

/** The production of one service job: its PPS records. */
export const ServiceJobProduction = Schema.Struct({
  serviceJobId: Schema.String,
  state: ServiceJobState,
  quantity: Int32,
  producedQuantity: Int32,
  scrappedQuantity: Int32,
  pps: Schema.Array(Pps.record)
}).annotate({ title: "Service job production" })
export const ServiceJobProductionQuery = Schema.Struct({
  ids: Schema.optional(repeatable(FilterText).annotate({ description: "Only the productions of these service jobs (repeatable)" })),
  serviceJobIds: Schema.optional(repeatable(FilterText).annotate({ description: "The same as `ids`, kept for existing clients" })),
  state: Schema.optional(repeatable(ServiceJobState)),
  ...DateRangeQuery,
  limit: PageLimit,
  offset: PageOffset
})
/** `PUT /service-job/{id}/production/{ppsId}`: a PPS record's progress. */
export const PpsProgress = Schema.Struct({
  state: PpsState,
  producedQuantity: Int32.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
    description: "Good pieces made: at most the record's quantity, and equal to it for `done`"
  }),
  scrappedQuantity: Int32.check(Schema.isGreaterThanOrEqualTo(0)).annotate({ description: "Pieces scrapped on the way (besides the good ones)" })
})

export const MergeRequest = Schema.Struct({
  targetServiceJobId: Ref("service job"),
  sourceServiceJobIds: NonEmptyList(Ref("service job"), 100)
})
export const ReassignRequest = Schema.Struct({
  fromServiceJobId: Ref("service job"),
  toServiceJobId: Ref("service job"),
  ticketModelIds: NonEmptyList(Ref("part"), 1000)
})
