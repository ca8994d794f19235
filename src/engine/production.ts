/**
 * The production engine: how machines, service jobs and materials are
 * completed when stored, and the production workflows (send to production,
 * timelines, merges, reassignments, PPS progress, reels, proximity).
 * The model is described in docs/workflows-production.md.
 */
import type { RecordHooks } from "./crud.ts"
import type { Operations } from "./Operation.ts"
import { machineHooks, machineWorkflows, materialHooks } from "./production/machines.ts"
import { metricsWorkflows } from "./production/metrics.ts"
import { reelWorkflows } from "./production/reels.ts"
import { serviceJobHooks, serviceJobWorkflows } from "./production/serviceJobs.ts"

export const productionHooks: Readonly<Record<string, RecordHooks>> = {
  material: materialHooks,
  machine: machineHooks,
  serviceJob: serviceJobHooks
}

export const productionWorkflows: Operations = {
  ...machineWorkflows,
  ...reelWorkflows,
  ...serviceJobWorkflows,
  ...metricsWorkflows
}
