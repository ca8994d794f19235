/**
 * Similar parts: `POST /ticket-model/{id}/similarity` ranks the app's other
 * parts with geometry by how alike their shapes are: the signature and its
 * weights in shapeSignature.ts, the per-app index that answers 100,000 parts
 * in milliseconds in shapeIndex.ts (docs/geometry.md, "Similarity").
 */
import { Effect } from "effect"
import { EngineError } from "../EngineError.ts"
import type { Operation, Operations } from "../Operation.ts"
import { RecordRepository } from "../RecordRepository.ts"
import { numeric, objectOf, param, payloadOf, text } from "./common.ts"
import { rankSimilarParts } from "./shapeIndex.ts"

const DEFAULT_LIMIT = 10
/** The schema's bounds (the gateway checks them); kept here so no caller can size the ranking. */
const MAX_LIMIT = 100

/** The part's geometry: 404 for a part the app does not have, 409 for one without geometry yet. */
const geometryOf = (appId: string, id: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const part = yield* records.find("ticketModel", appId, id)
    if (part === undefined) return yield* EngineError.notFound("ticketModel", id)
    const geometry = objectOf(part.geometry)
    if (geometry === undefined) {
      return yield* EngineError.conflict(`part ${text(part, "name") ?? id} has no geometry yet: it cannot be compared`)
    }
    return geometry
  })

const similarity: Operation = (context, request) => {
  const id = param(request, "id")
  const limit = Math.min(Math.max(Math.floor(numeric(payloadOf(request), "limit") ?? DEFAULT_LIMIT), 1), MAX_LIMIT)
  return rankSimilarParts(context.appId, id, limit, geometryOf(context.appId, id))
}

export const similarityWorkflows: Operations = { "ticketModel.similarity": similarity }
