/**
 * Similar parts: `POST /ticket-model/{id}/similarity` ranks the app's other
 * parts with geometry by how alike their shapes are (see docs/geometry.md).
 */
import { Effect } from "effect"
import { EngineError } from "../EngineError.ts"
import type { Operation, Operations } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { listAll, numeric, objectOf, param, payloadOf, text } from "./common.ts"


/**
 * The one place that says what makes two parts alike, until real shape
 * analysis arrives: a scale-aware feature vector of the geometry. Size
 * enters as logarithms (a part twice as large is a constant distance away,
 * whatever its size), shape as the bounding box proportions (sorted edges
 * over the longest) and the compactness (volume over surface area, relative
 * to the box). Two parts' score is `1 / (1 + distance)`, in (0, 1].
 */
export const geometryFeatures = (geometry: StoredRecord): ReadonlyArray<number> => {
  const volume = Math.max(numeric(geometry, "volume") ?? 0, 0)
  const area = Math.max(numeric(geometry, "surfaceArea") ?? 0, 0)
  const box = objectOf(geometry.boundingBox) ?? {}
  const edges = [numeric(box, "x") ?? 0, numeric(box, "y") ?? 0, numeric(box, "z") ?? 0].sort((a, b) => b - a)
  const longest = edges[0]! > 0 ? edges[0]! : 1
  const compactness = area > 0 ? volume / area / (longest / 6) : 0
  return [
    Math.log1p(volume) / 3,
    Math.log1p(area) / 2,
    edges[1]! / longest,
    edges[2]! / longest,
    Math.min(compactness, 1)
  ]
}

export const similarityScore = (a: StoredRecord, b: StoredRecord): number => {
  const fa = geometryFeatures(a)
  const fb = geometryFeatures(b)
  const distance = Math.sqrt(fa.reduce((sum, value, index) => sum + (value - fb[index]!) ** 2, 0))
  return 1 / (1 + distance)
}

const similarity: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const id = param(request, "id")
    const part = yield* records.find("ticketModel", context.appId, id)
    if (part === undefined) return yield* EngineError.notFound("ticketModel", id)
    const geometry = objectOf(part.geometry)
    if (geometry === undefined) {
      return yield* EngineError.conflict(`part ${text(part, "name") ?? id} has no geometry yet: it cannot be compared`)
    }
    const limit = numeric(payloadOf(request), "limit") ?? 10
    const others = (yield* listAll("ticketModel", context.appId)).flatMap((other) => {
      const otherGeometry = objectOf(other.geometry)
      return other.id === id || otherGeometry === undefined
        ? []
        : [{ ticketModelId: String(other.id), score: similarityScore(geometry, otherGeometry) }]
    })
    return others
      .sort((a, b) => b.score - a.score || a.ticketModelId.localeCompare(b.ticketModelId))
      .slice(0, limit)
  })

export const similarityWorkflows: Operations = { "ticketModel.similarity": similarity }
