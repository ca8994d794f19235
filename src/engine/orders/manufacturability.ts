/**
 * A part's manufacturability (docs/geometry.md, "Manufacturability"): its
 * geometry's stored measurements held to its technology's limits and to the
 * build volumes of the app's machines of that technology. Set on every
 * write of the part, like its price; null while it has no geometry.
 */
import { Effect } from "effect"
import type { TicketModel } from "../../domain/resources/orders.ts"
import { Machine } from "../../domain/resources/production.ts"
import { manufacturabilityVerdict, type MeasuredGeometry } from "../geometry/dfm/verdict.ts"
import type { OperationContext } from "../Operation.ts"
import { MANUFACTURABILITY_LIMITS } from "../referenceData.ts"
import { listRecords, type StoredFields } from "../typedRecords.ts"

export const manufacturabilityOf = Effect.fnUntraced(function*(
  context: OperationContext,
  technologyId: string,
  geometry: StoredFields<typeof TicketModel>["geometry"] | undefined
) {
  if (geometry === null || geometry === undefined) return null
  const machines = yield* listRecords(Machine, context.appId, { technologyId })
  // The stored geometry carries the measurements the API's schema leaves out.
  return manufacturabilityVerdict(technologyId, geometry as MeasuredGeometry, MANUFACTURABILITY_LIMITS[technologyId], machines)
})
