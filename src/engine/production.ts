/**
 * The production engine: how machines, service jobs and materials are
 * completed when stored, and the production workflows (send to production,
 * timelines, merges, reassignments, PPS progress, reels, proximity).
 * The model is described in docs/workflows-production.md.
 */
import type { EngineHandlers, GroupHandlers } from "./Operation.ts"
import { machineHandlers, materialHandlers } from "./production/machines.ts"
import { reportMetricsHandlers } from "./production/metrics.ts"
import { reelGroupHandlers, reelHandlers } from "./production/reels.ts"
import { sendToProduction } from "./production/sendToProduction.ts"
import { serviceJobHandlers, serviceJobProductionHandlers } from "./production/serviceJobs.ts"

/** The production groups' handlers, and the ticket's `sendToProduction`. */
export type ProductionHandlers =
  & Pick<EngineHandlers, "machine" | "material" | "reel" | "reelGroup" | "reportMetrics" | "serviceJob" | "serviceJobProduction">
  & { readonly sendToProduction: GroupHandlers<"ticket">["sendToProduction"] }

export const productionHandlers: ProductionHandlers = {
  machine: machineHandlers,
  material: materialHandlers,
  reel: reelHandlers,
  reelGroup: reelGroupHandlers,
  reportMetrics: reportMetricsHandlers,
  serviceJob: serviceJobHandlers,
  serviceJobProduction: serviceJobProductionHandlers,
  sendToProduction
}
