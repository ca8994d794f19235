/** Groups of production: machines, reels, service jobs, PPS records and report metrics. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
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
  ReportMetrics,
  ReportMetricsQuery,
  ServiceJob,
  ServiceJobProduction,
  ServiceJobProductionQuery
} from "../../domain/resources/production.ts"
import { COMMON_ERRORS, create, get, IdParam, list, recordOf, remove, replace, tag } from "../endpoints.ts"
import { emptyOk } from "../openapi.ts"

const Id = IdParam.id

export const MachineGroupGroup = HttpApiGroup.make("machineGroup")
  .add(list(MachineGroup), create(MachineGroup), get(MachineGroup), replace(MachineGroup), remove(MachineGroup))
  .annotateMerge(tag("Machine group", "Groups of machines of one technology, with a default hourly rate."))

export const MachinesGroup = HttpApiGroup.make("machine")
  .add(
    list(Machine),
    create(Machine),
    get(Machine),
    replace(Machine),
    remove(Machine),
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
    }).annotate(OpenApi.Summary, "Assign the reels of a machine")
  )
  .annotateMerge(tag("Machine", "Machines: technology, location, hourly rate, build volume and the reels they hold."))

const ReelGroupIdParam = { id: Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)) }

export const ReelGroupGroup = HttpApiGroup.make("reelGroup")
  .add(
    HttpApiEndpoint.get("list", "/reel-group", { query: ReelGroupListQuery, success: Schema.Array(ReelGroup), error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "List reel groups"),
    HttpApiEndpoint.put("replace", "/reel-group", { payload: ReelGroupUpdate, success: ReelGroup, error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Update a reel group; the numeric id is in the body"),
    HttpApiEndpoint.post("create", "/reel-group", { payload: ReelGroupInput, success: ReelGroup, error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Create a reel group"),
    HttpApiEndpoint.get("get", "/reel-group/:id", { params: ReelGroupIdParam, success: ReelGroup, error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Get a reel group").annotate(OpenApi.Transform, emptyOk)
  )
  .annotateMerge(tag("Reel group", "Reel groups (numeric ids): a material (and colour) kept on reels."))

const LocationParams = { inventoryProductLocationId: Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)) }

export const ReelsGroup = HttpApiGroup.make("reel")
  .add(
    list(Reel),
    HttpApiEndpoint.put("replace", "/reel", { payload: ReelUpdate, success: recordOf(Reel), error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Update a reel; its id is in the body"),
    HttpApiEndpoint.get("listInGroup", "/inventory-product-location/:inventoryProductLocationId/reel", {
      params: LocationParams,
      success: Schema.Array(recordOf(Reel)),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List the reels of a reel group"),
    HttpApiEndpoint.post("createInGroup", "/inventory-product-location/:inventoryProductLocationId/reel", {
      params: LocationParams,
      payload: NewReelsRequest,
      success: Schema.Array(recordOf(Reel)),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Create reels in a reel group")
  )
  .annotateMerge(tag("Reel", "Reels of material in a reel group, with their remaining weight and machine."))

export const ReportMetricsGroup = HttpApiGroup.make("reportMetrics")
  .add(
    HttpApiEndpoint.get("get", "/report-metrics", { query: ReportMetricsQuery, success: ReportMetrics, error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Get report metrics for a period")
  )
  .annotateMerge(tag("Report metrics", "Quoting and production figures over a period."))

export const ServiceJobGroup = HttpApiGroup.make("serviceJob")
  .add(
    list(ServiceJob),
    create(ServiceJob),
    get(ServiceJob),
    replace(ServiceJob),
    remove(ServiceJob),
    HttpApiEndpoint.get("production", "/service-job/:id/production", { params: IdParam, success: ServiceJobProduction, error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Get a service job production"),
    HttpApiEndpoint.put("updateProduction", "/service-job/:id/production/:ppsId", {
      params: { ...IdParam, ppsId: Id },
      payload: PpsProgress,
      success: recordOf(Pps),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Update a service job production"),
    HttpApiEndpoint.post("reassignTicketModels", "/service-job/reassign-ticket-models", {
      payload: ReassignRequest,
      success: Schema.Array(recordOf(ServiceJob)),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Reassign ticket models between service jobs"),
    HttpApiEndpoint.put("merge", "/service-job/merge", { payload: MergeRequest, success: recordOf(ServiceJob), error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Merge service jobs of the same technology"),
    HttpApiEndpoint.put("startTimeline", "/service-job/:id/timeline/start", {
      params: IdParam,
      success: recordOf(ServiceJob),
      error: [...COMMON_ERRORS, NotFound]
    })
      .annotate(OpenApi.Summary, "Start the timeline of a service job"),
    HttpApiEndpoint.put("stopTimeline", "/service-job/:id/timeline/stop", {
      params: IdParam,
      success: recordOf(ServiceJob),
      error: [...COMMON_ERRORS, NotFound]
    })
      .annotate(OpenApi.Summary, "Stop the timeline of a service job")
  )
  .annotateMerge(tag("Service job", "Jobs made from a ticket's parts when it is sent to production: timeline, merges, reassignments."))

export const ServiceJobProductionGroup = HttpApiGroup.make("serviceJobProduction")
  .add(
    HttpApiEndpoint.get("list", "/service-job-production", {
      query: ServiceJobProductionQuery,
      success: Schema.Array(ServiceJobProduction),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List service job productions")
  )
  .annotateMerge(tag("Service job production", "The production progress of service jobs, with their PPS records."))

export const PpsGroup = HttpApiGroup.make("pps").add(list(Pps), get(Pps))
  .annotateMerge(tag("PPS record", "One part in one service job: quantity, produced and scrapped."))
