/** Groups of production: machines, reels, service jobs, PPS records and report metrics. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
import {
  Machine, MachineByDistance, MachineGroup, MachineReelsRequest, MergeRequest, NewReelsRequest, Pps, PpsProgress,
  ProximityRequest, ReassignRequest, Reel, ReelGroup, ReelGroupInput, ReelGroupListQuery, ReelGroupUpdate,
  ReelUpdate, ReportMetrics, ReportMetricsQuery, ServiceJob, ServiceJobProduction, ServiceJobProductionQuery
} from "../../domain/resources/production.ts"
import { IncomingSecretAuth } from "../Authorization.ts"
import { COMMON_ERRORS, create, get, IdParam, list, remove, replace } from "../endpoints.ts"

const Id = IdParam.id

export const MachineGroupGroup = HttpApiGroup.make("machineGroup")
  .add(list(MachineGroup), create(MachineGroup), get(MachineGroup), replace(MachineGroup), remove(MachineGroup))
  .middleware(IncomingSecretAuth)

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
      success: Machine.record,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Assign the reels of a machine")
  )
  .middleware(IncomingSecretAuth)

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
      .annotate(OpenApi.Summary, "Get a reel group")
  )
  .middleware(IncomingSecretAuth)

const LocationParams = { inventoryProductLocationId: Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)) }

export const ReelsGroup = HttpApiGroup.make("reel")
  .add(
    list(Reel),
    HttpApiEndpoint.put("replace", "/reel", { payload: ReelUpdate, success: Reel.record, error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Update a reel; its id is in the body"),
    HttpApiEndpoint.get("listInGroup", "/inventory-product-location/:inventoryProductLocationId/reel", {
      params: LocationParams,
      success: Schema.Array(Reel.record),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List the reels of a reel group"),
    HttpApiEndpoint.post("createInGroup", "/inventory-product-location/:inventoryProductLocationId/reel", {
      params: LocationParams,
      payload: NewReelsRequest,
      success: Schema.Array(Reel.record),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Create reels in a reel group")
  )
  .middleware(IncomingSecretAuth)

export const ReportMetricsGroup = HttpApiGroup.make("reportMetrics")
  .add(
    HttpApiEndpoint.get("get", "/report-metrics", { query: ReportMetricsQuery, success: ReportMetrics, error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Get report metrics for a period")
  )
  .middleware(IncomingSecretAuth)

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
      success: Pps.record,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Update a service job production"),
    HttpApiEndpoint.post("reassignTicketModels", "/service-job/reassign-ticket-models", {
      payload: ReassignRequest,
      success: Schema.Array(ServiceJob.record),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Reassign ticket models between service jobs"),
    HttpApiEndpoint.put("merge", "/service-job/merge", { payload: MergeRequest, success: ServiceJob.record, error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Merge service jobs of the same technology"),
    HttpApiEndpoint.put("startTimeline", "/service-job/:id/timeline/start", { params: IdParam, success: ServiceJob.record, error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Start the timeline of a service job"),
    HttpApiEndpoint.put("stopTimeline", "/service-job/:id/timeline/stop", { params: IdParam, success: ServiceJob.record, error: [...COMMON_ERRORS, NotFound] })
      .annotate(OpenApi.Summary, "Stop the timeline of a service job")
  )
  .middleware(IncomingSecretAuth)

export const ServiceJobProductionGroup = HttpApiGroup.make("serviceJobProduction")
  .add(
    HttpApiEndpoint.get("list", "/service-job-production", {
      query: ServiceJobProductionQuery,
      success: Schema.Array(ServiceJobProduction),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List service job productions")
  )
  .middleware(IncomingSecretAuth)

export const PpsGroup = HttpApiGroup.make("pps").add(list(Pps), get(Pps)).middleware(IncomingSecretAuth)

