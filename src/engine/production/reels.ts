/**
 * Reel groups (numeric ids, the name read back as `inventoryProductName`)
 * and their reels. A reel group is stored as the `reelGroup` resource under
 * the text form of its number, counted per app (the app's first group is 1:
 * reelRules.ts), and answered with the number. A path's id that is no number is
 * a group that does not exist. What reels keep to is in reelRules.ts; when
 * a write makes a reel low, reelLow.ts.
 */
import { Effect } from "effect"
import { DEFAULT_PAGE_SIZE, toDateFilters } from "../../domain/Resource.ts"
import { Machine, Reel, type ReelGroup, type ReelGroupInput } from "../../domain/resources/production.ts"
import { Colour, Material, Supplier } from "../../domain/resources/reference.ts"
import { recordHandlers, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import type { StoredRecord } from "../RecordRepository.ts"
import { checkReferences, findRecord, listRecords, type RecordOf } from "../typedRecords.ts"
import { insertLocked, replaceLocked } from "../writes.ts"
import { announceLowReel, lowWeightThreshold } from "./reelLow.ts"
import { checkLoadable, checkWeight, findReelGroup, nextReelGroupId, REEL_GROUP, technologyOfMaterial } from "./reelRules.ts"
import { insertRecord, pageStored, replaceRecord } from "./store.ts"

export { nextReelGroupId, REEL_GROUP } from "./reelRules.ts"

type ReelGroupHandlers = GroupHandlers<"reelGroup">
type ReelHandlers = GroupHandlers<"reel">

/**
 * A stored reel group as read, its id a number. Reel groups are no resource
 * definition: storage holds what `ReelGroupInput` accepted (the name as
 * `inventoryProductName`) under the text of the number, and the answer is
 * checked against `ReelGroup` when it is encoded.
 */
const toReelGroup = (record: StoredRecord) => ({ ...record, id: Number(record.id) }) as typeof ReelGroup.Type

/** The stored document of a reel group from a create or update body; its references checked. */
const reelGroupDocument = Effect.fnUntraced(function*(context: OperationContext, { name, ...fields }: typeof ReelGroupInput.Type) {
  const references = [["materialId", Material], ["colourId", Colour], ["supplierId", Supplier]] as const
  for (const [field, resource] of references) {
    const value = fields[field]
    if (value === undefined) continue
    if ((yield* findRecord(resource, context.appId, value)) === undefined) {
      return yield* EngineError.unknownReference(field, resource.name, value)
    }
  }
  return { inventoryProductName: name, ...fields }
})

const DIGITS = /^[0-9]{1,15}$/

/** The number a path or filter gives for a reel group (`007` is group 7), or undefined for text that is none. */
const reelGroupNumber = (text: string): number | undefined => {
  const number = DIGITS.test(text) ? Number(text) : 0
  return number >= 1 ? number : undefined
}

/** The stored reel group a path names, if the app has it: text that is no number names none. */
const groupAt = (appId: string, text: string) => {
  const number = reelGroupNumber(text)
  return number === undefined ? Effect.succeed(undefined) : findReelGroup(appId, String(number))
}

const createReelGroup: ReelGroupHandlers["create"] = Effect.fnUntraced(function*(context, { payload }) {
  const document = yield* reelGroupDocument(context, payload)
  const inserted = yield* insertLocked(REEL_GROUP, context.appId, document, { id: yield* nextReelGroupId(context.appId) })
  return toReelGroup(inserted)
})

const listReelGroups: ReelGroupHandlers["list"] = Effect.fnUntraced(function*(context, { query }) {
  const { records: groups, total } = yield* pageStored(REEL_GROUP, context.appId, {
    // An id that is no number matches no group.
    ids: query.ids?.flatMap((text) => {
      const number = reelGroupNumber(text)
      return number === undefined ? [] : [String(number)]
    }),
    equals: query.materialId === undefined ? {} : { materialId: query.materialId },
    dates: toDateFilters(query),
    limit: query.limit ?? DEFAULT_PAGE_SIZE,
    offset: query.offset ?? 0
  })
  return { items: groups.map(toReelGroup), total }
})

const getReelGroup: ReelGroupHandlers["get"] = (context, { params }) =>
  Effect.map(groupAt(context.appId, params.id), (found) => found === undefined ? null : toReelGroup(found))

/**
 * What a new version of a reel group must keep true of its reels: each holds
 * at most the reel weight, and each loaded one stays on a machine of its
 * material's technology.
 */
const checkGroupReels = Effect.fnUntraced(function*(context: OperationContext, id: number, group: typeof ReelGroupInput.Type) {
  const technologyId = yield* technologyOfMaterial(context, group.materialId)
  for (const reel of yield* listRecords(Reel, context.appId, { reelGroupId: String(id) })) {
    if (group.reelWeight !== undefined && reel.remainingWeight > group.reelWeight) {
      return yield* EngineError.invalid(`reelWeight: reel ${reel.id} holds ${reel.remainingWeight} g, more than ${group.reelWeight} g`)
    }
    if (typeof reel.machineId !== "string") continue
    const machine = yield* findRecord(Machine, context.appId, reel.machineId)
    if (machine !== undefined && machine.technologyId !== technologyId) {
      return yield* EngineError.invalid(
        `materialId: reel ${reel.id} is loaded on machine ${machine.id} (${machine.technologyId}), the material is ${technologyId}`
      )
    }
  }
})

/** A new threshold of a group makes low the reels under it that were not under the one before. */
const announceLowReelsOf = Effect.fnUntraced(function*(context: OperationContext, id: number, threshold: number | undefined, before: number | undefined) {
  if (threshold === before) return
  for (const reel of yield* listRecords(Reel, context.appId, { reelGroupId: String(id) })) {
    yield* announceLowReel(context, reel, threshold, { remainingWeight: reel.remainingWeight, threshold: before })
  }
})

const replaceReelGroup: ReelGroupHandlers["replace"] = Effect.fnUntraced(function*(context, { payload: { id: number, ...group } }) {
  const id = String(number)
  const previous = yield* findReelGroup(context.appId, id)
  if (previous === undefined) return yield* EngineError.notFound(REEL_GROUP, id)
  const document = yield* reelGroupDocument(context, group)
  yield* checkGroupReels(context, number, group)
  const replaced = yield* replaceLocked(REEL_GROUP, context.appId, id, document)
  if (replaced === undefined) return yield* EngineError.notFound(REEL_GROUP, id)
  yield* announceLowReelsOf(context, number, lowWeightThreshold(replaced), lowWeightThreshold(previous))
  return toReelGroup(replaced)
})

export const reelGroupHandlers: ReelGroupHandlers = {
  // Each writes the group with its material locked (writes.ts): a transaction, which the lock lasts until.
  create: transactional(createReelGroup),
  list: listReelGroups,
  get: getReelGroup,
  replace: transactional(replaceReelGroup)
}

/** Keeps a machine's `reelIds` in step when a reel moves on or off it. */
export const moveReel = Effect.fnUntraced(function*(context: OperationContext, reelId: string, from: string | null, to: string | null) {
  if (from === to) return
  if (from !== null) {
    const machine = yield* findRecord(Machine, context.appId, from)
    if (machine !== undefined) {
      yield* replaceRecord(Machine, context.appId, from, { ...machine, reelIds: machine.reelIds.filter((id) => id !== reelId) })
    }
  }
  if (to !== null) {
    const machine = yield* findRecord(Machine, context.appId, to)
    if (machine !== undefined && !machine.reelIds.includes(reelId)) {
      yield* replaceRecord(Machine, context.appId, to, { ...machine, reelIds: [...machine.reelIds, reelId] })
    }
  }
})

/** PUT /reel: whole-record replacement, the id in the body; a reel it makes low is announced. */
const replaceReel: ReelHandlers["replace"] = Effect.fnUntraced(function*(context, { payload: { id, ...reel } }) {
  const previous = yield* findRecord(Reel, context.appId, id)
  if (previous === undefined) return yield* EngineError.notFound("reel", id)
  const groupId = String(reel.reelGroupId)
  const group = yield* findReelGroup(context.appId, groupId)
  if (group === undefined) return yield* EngineError.unknownReference("reelGroupId", REEL_GROUP, groupId)
  yield* checkReferences(Reel, context, reel)
  yield* checkWeight("remainingWeight", reel.remainingWeight, group)
  if (typeof reel.machineId === "string") {
    const machine = yield* findRecord(Machine, context.appId, reel.machineId)
    if (machine !== undefined) yield* checkLoadable(context, "machineId", { id, reelGroupId: reel.reelGroupId }, machine)
  }
  // The machines' rows first, then the reel's: a machine's delete locks them in that order (writes.ts).
  yield* moveReel(context, id, previous.machineId ?? null, reel.machineId ?? null)
  const replaced = yield* replaceRecord(Reel, context.appId, id, reel)
  if (replaced === undefined) return yield* EngineError.notFound("reel", id)
  const previousGroup = previous.reelGroupId === reel.reelGroupId ? group : yield* findReelGroup(context.appId, String(previous.reelGroupId))
  yield* announceLowReel(context, replaced, lowWeightThreshold(group), {
    remainingWeight: previous.remainingWeight,
    threshold: lowWeightThreshold(previousGroup)
  })
  return replaced
})

/** The reels of a group; a group that does not exist (or text that is no number) has none. */
const listReelsInGroup: ReelHandlers["listInGroup"] = (context, { params }) => {
  const number = reelGroupNumber(params.inventoryProductLocationId)
  return number === undefined ? Effect.succeed([]) : listRecords(Reel, context.appId, { reelGroupId: String(number) })
}

const createReelsInGroup: ReelHandlers["createInGroup"] = Effect.fnUntraced(function*(context, { params, payload }) {
  const text = params.inventoryProductLocationId
  const group = yield* groupAt(context.appId, text)
  if (group === undefined) return yield* EngineError.notFound(REEL_GROUP, text)
  const reelGroupId = Number(group.id)
  for (const [index, reel] of payload.reels.entries()) yield* checkWeight(`reels.${index}.remainingWeight`, reel.remainingWeight, group)
  const created: Array<RecordOf<typeof Reel>> = []
  for (const reel of payload.reels) {
    const stored = yield* insertRecord(Reel, context.appId, { ...reel, reelGroupId, machineId: null })
    yield* announceLowReel(context, stored, lowWeightThreshold(group), undefined)
    created.push(stored)
  }
  return created
})

export const reelHandlers: ReelHandlers = {
  list: recordHandlers(Reel).list,
  // A reel moving between machines changes both; a group's reels are created all or none.
  replace: transactional(replaceReel),
  listInGroup: listReelsInGroup,
  createInGroup: transactional(createReelsInGroup)
}

/** Used by machine deletion: the reels it held are released. */
export const releaseReelsOf = Effect.fnUntraced(function*(context: OperationContext, machineId: string) {
  for (const reel of yield* listRecords(Reel, context.appId, { machineId })) {
    yield* replaceRecord(Reel, context.appId, reel.id, { ...reel, machineId: null })
  }
})
