/** Groups of production: machines, reels, service jobs, PPS records and report metrics. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
import { INT32_MAX } from "../../domain/Integers.ts"
import { MAX_FILTER_VALUES } from "../../domain/Resource.ts"
import {
  Machine,
  MachineByDistance,
  MachineGroup,
  MachineReelsRequest,
  MergeRequest,
  NewReelsRequest,
  Pps,
  PpsProgress,
  ProximityRequest,
  ReassignRequest,
  Reel,
  ReelGroup,
  ReelGroupInput,
  ReelGroupListQuery,
  ReelGroupUpdate,
  ReelUpdate,
  ServiceJob,
  ServiceJobProduction,
  ServiceJobProductionQuery
} from "../../domain/resources/production.ts"
import { ReportMetrics, ReportMetricsQuery } from "../../domain/resources/reportMetrics.ts"
import { COMMON_ERRORS, create, get, IdParam, list, MissingRecord, pagedList, PAGING, recordOf, remove, replace, tag } from "../endpoints.ts"
import { emptyOk } from "../openapi.ts"

const Id = IdParam.id

export const MachineGroupGroup = HttpApiGroup.make("machineGroup")
  .add(
    list(MachineGroup),
    create(MachineGroup),
    get(MachineGroup),
    replace(MachineGroup).annotate(
      OpenApi.Description,
      "Whole-record replacement; the record as read is accepted. Its `technologyId` cannot change while machines or service jobs " +
        "name the group (422 naming `technologyId` and how many records use it)."
    ),
    remove(MachineGroup)
  )
  .annotateMerge(tag("Machine group", "Groups of machines of one technology, with a default hourly rate."))

export const MachinesGroup = HttpApiGroup.make("machine")
  .add(
    list(Machine),
    create(Machine).annotate(
      OpenApi.Description,
      "Answers the created machine, holding no reels. A machine in a machine group is of the group's technology " +
        "(422 naming `technologyId`). An unknown field is a 400 naming it."
    ),
    get(Machine),
    replace(Machine).annotate(
      OpenApi.Description,
      "Whole-record replacement; the machine keeps the reels it holds. Its technology is its machine group's, and that of " +
        "the material of every reel it holds (422 naming `technologyId`)."
    ),
    remove(Machine).annotate(OpenApi.Description, "Answers the deleted machine; the reels it held are released (`machineId: null`)."),
    HttpApiEndpoint.post("byProximity", "/machine/by-proximity", {
      payload: ProximityRequest,
      success: Schema.Array(MachineByDistance),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List machines by proximity").annotate(OpenApi.Description, "Nearest first, by great-circle distance."),
    HttpApiEndpoint.put("assignReels", "/machine/:machineId/reels", {
      params: { machineId: Id },
      payload: MachineReelsRequest,
      success: recordOf(Machine),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Assign the reels of a machine").annotate(
      OpenApi.Description,
      "The machine holds exactly the listed reels (taken from other machines; reels no longer listed are released). " +
        "Each reel's material is of the machine's technology (422 naming `reelIds` and the reel)."
    )
  )
  .annotateMerge(tag("Machine", "Machines: technology, location, hourly rate, build volume and the reels they hold."))

/**
 * A reel group's number in a path. Any text decodes: text that is no number
 * names a group that does not exist, which reads as the spec's empty 200
 * (rule 1) rather than a 400; the document declares the integer clients send.
 */
const ReelGroupNumber = IdParam.id
const ReelGroupIdParam = { id: ReelGroupNumber }

type Json = Record<string, unknown>

const NUMBER = { type: "integer", format: "int32", minimum: 1, maximum: INT32_MAX }

/**
 * Endpoint transform: the parameter `name` holds reel group numbers (integers
 * from 1), which is what clients send and what the document declares; the
 * handler reads any other text as a group that does not exist.
 */
const reelGroupNumberIn = (name: string) => (operation: Json): Json => {
  const parameters = operation.parameters
  if (!Array.isArray(parameters)) return operation
  for (const parameter of parameters as Array<Json>) {
    if (parameter.name !== name) continue
    if (parameter.in === "path") {
      parameter.schema = { ...NUMBER }
      parameter.description = "The reel group's number, as POST /reel-group answers it. Any other value is a reel group that does not exist."
    } else {
      parameter.schema = { anyOf: [{ ...NUMBER }, { type: "array", items: { ...NUMBER }, maxItems: MAX_FILTER_VALUES }] }
      parameter.description = "Only these reel groups, by number; repeatable (`?ids=7&ids=8`)"
    }
  }
  return operation
}

export const ReelGroupGroup = HttpApiGroup.make("reelGroup")
  .add(
    HttpApiEndpoint.get("list", "/reel-group", { query: ReelGroupListQuery, success: Schema.Array(ReelGroup), error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "List reel groups").annotate(
        OpenApi.Description,
        "Filters are repeatable (`?ids=7&ids=8`, `?materialId=…`) and combine with AND; each date field takes one date or a " +
          `\`[from]\`/\`[to]\` range. ${PAGING}`
      ).annotate(OpenApi.Transform, (operation) => pagedList(reelGroupNumberIn("ids")(operation))),
    HttpApiEndpoint.put("replace", "/reel-group", { payload: ReelGroupUpdate, success: ReelGroup, error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Update a reel group; the numeric id is in the body").annotate(
        OpenApi.Description,
        "Whole-record replacement (404 when the group is missing). Its reels must still fit: none holds more than " +
          "`reelWeight` (422 naming `reelWeight`), and a reel loaded on a machine stays of the machine's technology (422 naming `materialId`)."
      ),
    HttpApiEndpoint.post("create", "/reel-group", { payload: ReelGroupInput, success: ReelGroup, error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Create a reel group").annotate(OpenApi.Description, "Answers the group with its numeric `id`."),
    HttpApiEndpoint.get("get", "/reel-group/:id", { params: ReelGroupIdParam, success: [ReelGroup, MissingRecord], error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Get a reel group").annotate(
        OpenApi.Description,
        "A missing id, another app's, or a value that is no number reads as 200 with an empty body."
      ).annotate(OpenApi.Transform, (operation) => reelGroupNumberIn("id")(emptyOk(operation)))
  )
  .annotateMerge(tag("Reel group", "Reel groups (numeric ids): a material (and colour) kept on reels."))

const LocationParams = { inventoryProductLocationId: ReelGroupNumber }

export const ReelsGroup = HttpApiGroup.make("reel")
  .add(
    list(Reel),
    HttpApiEndpoint.put("replace", "/reel", { payload: ReelUpdate, success: recordOf(Reel), error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Update a reel; its id is in the body").annotate(
        OpenApi.Description,
        "Whole-record replacement (404 when the reel is missing; 422 for an unknown `reelGroupId` or `machineId`). " +
          "`remainingWeight` is at most the group's `reelWeight` (422 naming `remainingWeight`); a machine holding the reel " +
          "is of the technology of the group's material (422 naming `machineId`)."
      ),
    HttpApiEndpoint.get("listInGroup", "/inventory-product-location/:inventoryProductLocationId/reel", {
      params: LocationParams,
      success: Schema.Array(recordOf(Reel)),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List the reels of a reel group").annotate(
      OpenApi.Description,
      "A group that does not exist (or a value that is no number) has no reels: `[]`."
    ).annotate(OpenApi.Transform, reelGroupNumberIn("inventoryProductLocationId")),
    HttpApiEndpoint.post("createInGroup", "/inventory-product-location/:inventoryProductLocationId/reel", {
      params: LocationParams,
      payload: NewReelsRequest,
      success: Schema.Array(recordOf(Reel)),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Create reels in a reel group").annotate(
      OpenApi.Description,
      "All or none: each reel's `remainingWeight` is at most the group's `reelWeight` (422 naming `reels.<i>.remainingWeight`); " +
        "404 when the group does not exist."
    ).annotate(OpenApi.Transform, reelGroupNumberIn("inventoryProductLocationId"))
  )
  .annotateMerge(tag("Reel", "Reels of material in a reel group, with their remaining weight and machine."))

export const ReportMetricsGroup = HttpApiGroup.make("reportMetrics")
  .add(
    HttpApiEndpoint.get("get", "/report-metrics", { query: ReportMetricsQuery, success: ReportMetrics, error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Get report metrics for a period").annotate(
        OpenApi.Description,
        "Figures over the app's quotes and service jobs created in the period: `createdAt` (one date) or `createdAt[from]`/`createdAt[to]` " +
          "(inclusive; a date as `to` means the end of that day), both ends optional. Quote values are per currency (`byCurrency`) and " +
          "converted to the base currency, EUR, at the rate each quote recorded; `quotedValue` and `byTechnology[].quotedValue` are in EUR."
      )
  )
  .annotateMerge(tag("Report metrics", "Quoting and production figures over a period."))

const JOB_RULES = "Every part exists (422), is of the job's technology (422 naming `ticketModelIds`) and is in no other open " +
  "(queued, running, paused) job (409 naming that job and its state); the machine group and machine are of the job's technology " +
  "(422 naming `machineGroupId` / `machineId`)."

export const ServiceJobGroup = HttpApiGroup.make("serviceJob")
  .add(
    list(ServiceJob),
    create(ServiceJob).annotate(
      OpenApi.Description,
      `Answers the job, \`queued\` with an empty timeline, each part with its PPS record (a part's record kept from an earlier job comes along). ${JOB_RULES}`
    ),
    get(ServiceJob),
    replace(ServiceJob).annotate(
      OpenApi.Description,
      "Whole-record replacement; the state, timeline and time are kept. A part taken out keeps its PPS record (in no job) and " +
        `gets it back when it returns. A done or merged job keeps its parts and technology (409 naming the state). ${JOB_RULES}`
    ),
    remove(ServiceJob).annotate(
      OpenApi.Description,
      "Only a `queued` job (409 naming the state). Answers the deleted job; its parts keep their PPS records, in no job."
    ),
    HttpApiEndpoint.get("production", "/service-job/:id/production", {
      params: IdParam,
      success: [ServiceJobProduction, MissingRecord],
      error: COMMON_ERRORS
    })
      .annotate(OpenApi.Summary, "Get a service job production").annotate(
        OpenApi.Description,
        "The job's state and the sums of its PPS records. A missing id reads as 200 with an empty body."
      ).annotate(OpenApi.Transform, emptyOk),
    HttpApiEndpoint.put("updateProduction", "/service-job/:id/production/:ppsId", {
      params: { ...IdParam, ppsId: Id },
      payload: PpsProgress,
      success: recordOf(Pps),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Update a service job production").annotate(
      OpenApi.Description,
      "Recorded while the job is `running` or `paused` (409 naming the state otherwise). `producedQuantity` is at most the " +
        "record's quantity, and `done` needs it equal (422 naming `producedQuantity`); a done record is final (409). When every " +
        "record of the job is done, the job is `done`, and a ticket whose parts are all in done jobs is `completed`."
    ),
    HttpApiEndpoint.post("reassignTicketModels", "/service-job/reassign-ticket-models", {
      payload: ReassignRequest,
      success: Schema.Array(recordOf(ServiceJob)),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Reassign ticket models between service jobs").annotate(
      OpenApi.Description,
      "The parts and their PPS records move. Both jobs are open (409 naming the state) and of one technology (422). Answers `[from, to]`."
    ),
    HttpApiEndpoint.put("merge", "/service-job/merge", { payload: MergeRequest, success: recordOf(ServiceJob), error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Merge service jobs of the same technology").annotate(
        OpenApi.Description,
        "The sources' parts and PPS records move to the target; the sources end `merged`. Every job is open (409 naming the " +
          "state) and of the target's technology (422)."
      ),
    HttpApiEndpoint.put("startTimeline", "/service-job/:id/timeline/start", {
      params: IdParam,
      success: recordOf(ServiceJob),
      error: [...COMMON_ERRORS, NotFound]
    })
      .annotate(OpenApi.Summary, "Start the timeline of a service job").annotate(
        OpenApi.Description,
        "`queued` or `paused` → `running` (409 naming any other state)."
      ),
    HttpApiEndpoint.put("stopTimeline", "/service-job/:id/timeline/stop", {
      params: IdParam,
      success: recordOf(ServiceJob),
      error: [...COMMON_ERRORS, NotFound]
    })
      .annotate(OpenApi.Summary, "Stop the timeline of a service job").annotate(
        OpenApi.Description,
        "`running` → `paused` (409 naming any other state); the interval's seconds are added to `totalTime`."
      )
  )
  .annotateMerge(tag(
    "Service job",
    "Jobs made from a ticket's parts when it is sent to production: queued → running ⇄ paused → done (every PPS record done); " +
      "merged into another job. Timeline, merges, reassignments."
  ))

export const ServiceJobProductionGroup = HttpApiGroup.make("serviceJobProduction")
  .add(
    HttpApiEndpoint.get("list", "/service-job-production", {
      query: ServiceJobProductionQuery,
      success: Schema.Array(ServiceJobProduction),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List service job productions").annotate(
      OpenApi.Description,
      "The production of each selected job, in creation order. Filters are repeatable (`?ids=a&ids=b`, `?state=running`) and " +
        `combine with AND; each date field takes one date or a \`[from]\`/\`[to]\` range. ${PAGING}`
    ).annotate(OpenApi.Transform, pagedList)
  )
  .annotateMerge(tag("Service job production", "The production progress of service jobs, with their PPS records."))

export const PpsGroup = HttpApiGroup.make("pps").add(list(Pps), get(Pps))
  .annotateMerge(tag(
    "PPS record",
    "One part in one service job: planned quantity, produced and scrapped. A part taken out of its job keeps its record (`serviceJobId: null`)."
  ))
