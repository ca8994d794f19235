/**
 * The production engine: how machines, service jobs and materials are
 * completed when stored, and the production workflows (send to production,
 * timelines, merges, reassignments, PPS progress, reels, proximity).
 */
import type { Operations } from "./Operation.ts"
import type { RecordHooks } from "./crud.ts"

export const productionHooks: Readonly<Record<string, RecordHooks>> = {}

export const productionWorkflows: Operations = {}
