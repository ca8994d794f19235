/**
 * Reel groups (numeric ids, the name read back as `inventoryProductName`)
 * and their reels. A reel group is stored as the `reelGroup` resource under
 * the text form of its number, taken from the engine's `engine_number`
 * sequence, and answered with the number.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { toDateFilters } from "../../domain/Resource.ts"
import { Machine, Reel, type ReelGroup, type ReelGroupInput } from "../../domain/resources/production.ts"
import { Colour, Material, Supplier } from "../../domain/resources/reference.ts"
import { checkReferences, findRecord, listRecords, recordHandlers, type RecordOf, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext, Step } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { insertRecord, listStored, replaceRecord } from "./store.ts"

export const REEL_GROUP = "reelGroup"

type ReelGroupHandlers = GroupHandlers<"reelGroup">
type ReelHandlers = GroupHandlers<"reel">

/**
 * A stored reel group as read, its id a number. Reel groups are no resource
 * definition: storage holds what `ReelGroupInput` accepted (the name as
 * `inventoryProductName`) under the text of the number, and the answer is
 * checked against `ReelGroup` when it is encoded.
 */
const toReelGroup = (record: StoredRecord) => ({ ...record, id: Number(record.id) }) as typeof ReelGroup.Type

/** The stored reel group with this number, if the app has it. */
const findReelGroup = (appId: string, id: string): Step<StoredRecord | undefined> =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    return yield* records.find(REEL_GROUP, appId, id)
  })

/** The stored document of a reel group from a create or update body; its references checked. */
const reelGroupDocument = (context: OperationContext, { name, ...fields }: typeof ReelGroupInput.Type) =>
  Effect.gen(function*() {
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

/** The stored id of a reel group: the text of its number (`007` is group 7); any other text as given. */
const reelGroupNumber = (text: string) => {
  const number = Number(text)
  return Number.isInteger(number) && number >= 1 ? String(number) : text
}

const createReelGroup: ReelGroupHandlers["create"] = (context, { payload }) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const sql = yield* SqlClient.SqlClient
    const document = yield* reelGroupDocument(context, payload)
    const [row] = yield* sql<{ n: string }>`SELECT nextval('engine_number')::text AS n`
    const inserted = yield* records.insert(REEL_GROUP, context.appId, document, { id: row!.n })
    return toReelGroup(inserted)
  })

const listReelGroups: ReelGroupHandlers["list"] = (context, { query }) =>
  Effect.gen(function*() {
    const groups = yield* listStored(REEL_GROUP, context.appId, {
      ids: query.ids?.map(reelGroupNumber),
      equals: query.materialId === undefined ? {} : { materialId: query.materialId },
      dates: toDateFilters(query)
    })
    return groups.map(toReelGroup)
  })

const getReelGroup: ReelGroupHandlers["get"] = (context, { params }) =>
  Effect.map(findReelGroup(context.appId, String(params.id)), (found) => found === undefined ? null : toReelGroup(found))

const replaceReelGroup: ReelGroupHandlers["replace"] = (context, { payload: { id: number, ...group } }) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const id = String(number)
    if ((yield* findReelGroup(context.appId, id)) === undefined) return yield* EngineError.notFound(REEL_GROUP, id)
    const document = yield* reelGroupDocument(context, group)
    const replaced = yield* records.replace(REEL_GROUP, context.appId, id, document)
    return replaced === undefined ? yield* EngineError.notFound(REEL_GROUP, id) : toReelGroup(replaced)
  })

export const reelGroupHandlers: ReelGroupHandlers = {
  create: createReelGroup,
  list: listReelGroups,
  get: getReelGroup,
  replace: replaceReelGroup
}

/** Keeps a machine's `reelIds` in step when a reel moves on or off it. */
export const moveReel = (context: OperationContext, reelId: string, from: string | null, to: string | null) =>
  Effect.gen(function*() {
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

/** PUT /reel: whole-record replacement, the id in the body. */
const replaceReel: ReelHandlers["replace"] = (context, { payload: { id, ...reel } }) =>
  Effect.gen(function*() {
    const previous = yield* findRecord(Reel, context.appId, id)
    if (previous === undefined) return yield* EngineError.notFound("reel", id)
    const groupId = String(reel.reelGroupId)
    if ((yield* findReelGroup(context.appId, groupId)) === undefined) {
      return yield* EngineError.unknownReference("reelGroupId", REEL_GROUP, groupId)
    }
    yield* checkReferences(Reel, context, reel)
    const replaced = yield* replaceRecord(Reel, context.appId, id, reel)
    if (replaced === undefined) return yield* EngineError.notFound("reel", id)
    yield* moveReel(context, id, previous.machineId ?? null, reel.machineId ?? null)
    return replaced
  })

const listReelsInGroup: ReelHandlers["listInGroup"] = (context, { params }) =>
  listRecords(Reel, context.appId, { reelGroupId: String(params.inventoryProductLocationId) })

const createReelsInGroup: ReelHandlers["createInGroup"] = (context, { params, payload }) =>
  Effect.gen(function*() {
    const reelGroupId = params.inventoryProductLocationId
    if ((yield* findReelGroup(context.appId, String(reelGroupId))) === undefined) {
      return yield* EngineError.notFound(REEL_GROUP, String(reelGroupId))
    }
    const created: Array<RecordOf<typeof Reel>> = []
    for (const reel of payload.reels) created.push(yield* insertRecord(Reel, context.appId, { ...reel, reelGroupId, machineId: null }))
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
export const releaseReelsOf = (context: OperationContext, machineId: string) =>
  Effect.gen(function*() {
    for (const reel of yield* listRecords(Reel, context.appId, { machineId })) {
      yield* replaceRecord(Reel, context.appId, reel.id, { ...reel, machineId: null })
    }
  })
