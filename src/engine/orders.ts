/**
 * The orders engine: how tickets, parts, quotes, catalogue models and items
 * are completed when stored, and the order workflows (quotes, lookups,
 * parts from a catalogue, similarity, machining strategies, model fields).
 */
import type { Operations } from "./Operation.ts"
import type { RecordHooks } from "./crud.ts"

export const orderHooks: Readonly<Record<string, RecordHooks>> = {}

export const orderWorkflows: Operations = {}
