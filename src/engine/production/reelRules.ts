/**
 * What reels keep to: a reel is of its reel group's material, is loaded only
 * on a machine of that material's technology, and holds at most its group's
 * `reelWeight`. Reel groups are stored as the `reelGroup` resource under the
 * text of their number, counted per app (reels.ts).
 */
import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { type Machine, Reel } from "../../domain/resources/production.ts"
import { Material } from "../../domain/resources/reference.ts"
import { EngineError } from "../EngineError.ts"
import type { OperationContext, Step } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { findRecord, listRecords, type RecordOf } from "../typedRecords.ts"

export const REEL_GROUP = "reelGroup"

/** Where an app's reel group ids are counted: its `engine_counter` row of this prefix (no record number uses it). */
const REEL_GROUP_COUNTER = "reel-group"

/**
 * The app's next reel group id: its first group is 1, whatever other apps
 * have done. The counter row's lock orders concurrent creates of the app
 * until their transactions end, and a create rolled back gives its id back.
 */
export const nextReelGroupId = (appId: string): Effect.Effect<string, SqlError, RecordRepository> =>
  Effect.flatMap(RecordRepository, (records) => records.nextCount(appId, REEL_GROUP_COUNTER))

type MachineRecord = RecordOf<typeof Machine>

/** The stored reel group with this number, if the app has it. */
export const findReelGroup = (appId: string, id: string): Step<StoredRecord | undefined> =>
  Effect.flatMap(RecordRepository, (records) => records.find(REEL_GROUP, appId, id))

/** The technology of a material, if the app has it. */
export const technologyOfMaterial = (context: OperationContext, materialId: unknown) =>
  typeof materialId === "string"
    ? Effect.map(findRecord(Material, context.appId, materialId), (material) => material?.technologyId)
    : Effect.succeed(undefined)

/** Refuses a remaining weight above the group's reel weight; `field` is where the body has it. */
export const checkWeight = (field: string, remainingWeight: number, group: StoredRecord) => {
  const reelWeight = group.reelWeight
  return typeof reelWeight === "number" && remainingWeight > reelWeight
    ? Effect.fail(EngineError.invalid(`${field}: ${remainingWeight} g is more than the reel weight ${reelWeight} g of reel group ${group.id}`))
    : Effect.void
}

/** Refuses loading the reel (of group `reelGroupId`) on a machine of another technology than its material's. */
export const checkLoadable = Effect.fnUntraced(function*(
  context: OperationContext,
  field: string,
  reel: { readonly id: string; readonly reelGroupId: number },
  machine: Pick<MachineRecord, "id" | "technologyId">
) {
  const group = yield* findReelGroup(context.appId, String(reel.reelGroupId))
  const technologyId = yield* technologyOfMaterial(context, group?.materialId)
  if (technologyId !== machine.technologyId) {
    return yield* EngineError.invalid(
      `${field}: reel ${reel.id} is of a ${technologyId ?? "unknown"} material, machine ${machine.id} is ${machine.technologyId}`
    )
  }
})

/** Refuses a technology for a machine that holds reels of another technology's material. */
export const checkHeldReels = Effect.fnUntraced(function*(context: OperationContext, machine: Pick<MachineRecord, "id" | "technologyId">) {
  for (const reel of yield* listRecords(Reel, context.appId, { machineId: machine.id })) {
    yield* checkLoadable(context, "technologyId", reel, machine)
  }
})
