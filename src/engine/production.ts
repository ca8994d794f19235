/**
 * The production engine: how machines, service jobs and materials are
 * completed when stored, and the production workflows (send to production,
 * timelines, merges, reassignments, PPS progress, reels, proximity).
 * The model is described in docs/workflows-production.md.
 */
import type { EngineHandlers, GroupHandlers } from "./Operation.ts"
import { machineGroupHandlers, machineHandlers } from "./production/machines.ts"
import { materialHandlers, materialSeriesHandlers } from "./production/materials.ts"
import { reportMetricsHandlers } from "./production/metrics.ts"
import { reelGroupHandlers, reelHandlers } from "./production/reels.ts"
import { sendToProduction } from "./production/sendToProduction.ts"
import { serviceJobHandlers, serviceJobProductionHandlers } from "./production/serviceJobs.ts"

/** The production groups' handlers, and the ticket's `sendToProduction`. */
export type ProductionHandlers =
  & Pick<
    EngineHandlers,
    "machine" | "machineGroup" | "material" | "materialSeries" | "reel" | "reelGroup" | "reportMetrics" | "serviceJob" | "serviceJobProduction"
  >
  & { readonly sendToProduction: GroupHandlers<"ticket">["sendToProduction"] }

export const productionHandlers: ProductionHandlers = {
  machine: machineHandlers,
  machineGroup: machineGroupHandlers,
  material: materialHandlers,
  materialSeries: materialSeriesHandlers,
  reel: reelHandlers,
  reelGroup: reelGroupHandlers,
  reportMetrics: reportMetricsHandlers,
  serviceJob: serviceJobHandlers,
  serviceJobProduction: serviceJobProductionHandlers,
  sendToProduction
}
