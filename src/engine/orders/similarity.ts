/**
 * Similar parts: `POST /ticket-model/{id}/similarity` ranks the app's other
 * parts with geometry by how alike their shapes are: the signature and its
 * weights in shapeSignature.ts, the per-app index that answers 100,000 parts
 * in milliseconds in shapeIndex.ts (docs/geometry.md, "Similarity").
 */
import { Effect } from "effect"
import { TicketModel } from "../../domain/resources/orders.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers } from "../Operation.ts"
import { getRecord } from "../typedRecords.ts"
import { rankSimilarParts } from "./shapeIndex.ts"
import type { ShapeGeometry } from "./shapeSignature.ts"

const DEFAULT_LIMIT = 10
/** The schema's bounds (the gateway checks them); kept here so no caller can size the ranking. */
const MAX_LIMIT = 100

/**
 * The part's geometry: 404 for a part the app does not have, 409 for one
 * without geometry yet. The stored geometry carries the shape distribution
 * the signature reads beside the API's measures.
 */
const geometryOf = Effect.fnUntraced(function*(appId: string, id: string) {
  const part = yield* getRecord(TicketModel, appId, id)
  const geometry: ShapeGeometry | null = part.geometry
  if (geometry === null) {
    return yield* EngineError.conflict(`part ${part.name ?? id} has no geometry yet: it cannot be compared`)
  }
  return geometry
})

export const similarity: GroupHandlers<"ticketModel">["similarity"] = (context, { params: { id }, payload }) => {
  const limit = Math.min(Math.max(Math.floor(payload.limit ?? DEFAULT_LIMIT), 1), MAX_LIMIT)
  return rankSimilarParts(context.appId, id, limit, geometryOf(context.appId, id))
}
