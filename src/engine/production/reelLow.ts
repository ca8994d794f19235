/**
 * Low reels: a reel is low while its `remainingWeight` is under its reel
 * group's `lowWeightThreshold` (a group without one has no low reels). A
 * write that makes a reel low (its weight falls under the threshold, a new
 * reel is created under it, the reel moves to a group whose threshold it is
 * under, or its group's threshold rises above its weight) writes one
 * `reel.low` event, in the write's transaction; a reel that stays low writes
 * none until it has been at or above the threshold again.
 */
import { Effect } from "effect"
import type { Reel } from "../../domain/resources/production.ts"
import { recordEvent } from "../events/outbox.ts"
import type { OperationContext, Step } from "../Operation.ts"
import type { StoredRecord } from "../RecordRepository.ts"
import type { RecordOf } from "../typedRecords.ts"

type ReelRecord = RecordOf<typeof Reel>

/** A reel group's threshold (grams), if it sets one. */
export const lowWeightThreshold = (group: StoredRecord | undefined): number | undefined =>
  typeof group?.lowWeightThreshold === "number" ? group.lowWeightThreshold : undefined

const isLow = (remainingWeight: number, threshold: number | undefined) => threshold !== undefined && remainingWeight < threshold

/** A reel as the rule sees it: its weight, and its group's threshold. */
export interface ReelWeight {
  readonly remainingWeight: number
  readonly threshold: number | undefined
}

/**
 * Writes `reel.low` when `reel` (as stored), with its group's `threshold`,
 * is low and `before` (the reel's weight and threshold before the write;
 * undefined for a new reel) was not.
 */
export const announceLowReel = (
  context: OperationContext,
  reel: ReelRecord,
  threshold: number | undefined,
  before: ReelWeight | undefined
): Step<void> =>
  threshold !== undefined && isLow(reel.remainingWeight, threshold) && (before === undefined || !isLow(before.remainingWeight, before.threshold))
    ? recordEvent(context.appId, "reel.low", { object: reel, threshold })
    : Effect.void
