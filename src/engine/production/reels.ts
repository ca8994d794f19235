/**
 * Reel groups (numeric ids, the name read back as `inventoryProductName`)
 * and their reels. A reel group is stored as the `reelGroup` resource under
 * the text form of its number, taken from the engine's `engine_number`
 * sequence, and answered with the number.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { toDateFilters } from "../../domain/Resource.ts"
import { Reel } from "../../domain/resources/production.ts"
import { checkReferences, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { Operation, OperationContext } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { ALL, listAll, strings } from "./store.ts"

export const REEL_GROUP = "reelGroup"

/** A stored reel group as read: its id a number. */
const toReelGroup = (record: StoredRecord): StoredRecord => ({ ...record, id: Number(record.id) })

interface ReelGroupPayload {
  readonly id?: number
  readonly name: string
  readonly materialId: string
  readonly colourId?: string
  readonly reelWeight?: number
  readonly supplierId?: string
}

/** The stored document of a reel group from a create or update body; its references checked. */
const reelGroupDocument = (context: OperationContext, payload: ReelGroupPayload) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const references = [["materialId", "material"], ["colourId", "colour"], ["supplierId", "supplier"]] as const
    for (const [field, resource] of references) {
      const value = payload[field]
      if (value === undefined) continue
      if ((yield* records.find(resource, context.appId, value)) === undefined) {
        return yield* EngineError.unknownReference(field, resource, value)
      }
    }
    const { id: _id, name, ...fields } = payload
    return { inventoryProductName: name, ...fields } as StoredRecord
  })

const reelGroupNumber = (value: unknown) => {
  const number = Number(String(value))
  return Number.isInteger(number) && number >= 1 ? String(number) : String(value)
}

const createReelGroup: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const sql = yield* SqlClient.SqlClient
    const document = yield* reelGroupDocument(context, request.payload as ReelGroupPayload)
    const [row] = yield* sql<{ n: string }>`SELECT nextval('engine_number')::text AS n`
    const inserted = yield* records.insert(REEL_GROUP, context.appId, document, { id: row!.n })
    return toReelGroup(inserted)
  })

const listReelGroups: Operation = (context, request) =>
  Effect.gen(function*() {
    const query = request.query ?? {}
    const ids = query.ids === undefined ? undefined : strings(query.ids).map(reelGroupNumber)
    const materialIds = query.materialId === undefined ? {} : { materialId: strings(query.materialId) }
    const groups = yield* listAll(REEL_GROUP, context.appId, materialIds, {
      ...(ids === undefined ? {} : { ids }),
      dates: toDateFilters(query)
    })
    return groups.map(toReelGroup)
  })

const getReelGroup: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const found = yield* records.find(REEL_GROUP, context.appId, reelGroupNumber(request.params?.id))
    return found === undefined ? null : toReelGroup(found)
  })

const replaceReelGroup: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const payload = request.payload as ReelGroupPayload
    const id = reelGroupNumber(payload.id)
    const previous = yield* records.find(REEL_GROUP, context.appId, id)
    if (previous === undefined) return yield* EngineError.notFound(REEL_GROUP, id)
    const document = yield* reelGroupDocument(context, payload)
    const replaced = yield* records.replace(REEL_GROUP, context.appId, id, document)
    return replaced === undefined ? yield* EngineError.notFound(REEL_GROUP, id) : toReelGroup(replaced)
  })

/** Keeps a machine's `reelIds` in step when a reel moves on or off it. */
export const moveReel = (context: OperationContext, reelId: string, from: unknown, to: unknown) =>
  Effect.gen(function*() {
    if (from === to) return
    const records = yield* RecordRepository
    if (typeof from === "string") {
      const machine = yield* records.find("machine", context.appId, from)
      if (machine !== undefined) {
        yield* records.replace("machine", context.appId, from, {
          ...machine,
          reelIds: strings(machine.reelIds).filter((id) => id !== reelId)
        })
      }
    }
    if (typeof to === "string") {
      const machine = yield* records.find("machine", context.appId, to)
      if (machine !== undefined && !strings(machine.reelIds).includes(reelId)) {
        yield* records.replace("machine", context.appId, to, { ...machine, reelIds: [...strings(machine.reelIds), reelId] })
      }
    }
  })

/** PUT /reel: whole-record replacement, the id in the body. */
const replaceReel: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const { id, ...input } = request.payload as StoredRecord & { readonly id: string }
    const previous = yield* records.find("reel", context.appId, id)
    if (previous === undefined) return yield* EngineError.notFound("reel", id)
    const groupId = reelGroupNumber(input.reelGroupId)
    if ((yield* records.find(REEL_GROUP, context.appId, groupId)) === undefined) {
      return yield* EngineError.unknownReference("reelGroupId", REEL_GROUP, groupId)
    }
    yield* checkReferences(Reel, context, input)
    const replaced = yield* records.replace("reel", context.appId, id, input)
    if (replaced === undefined) return yield* EngineError.notFound("reel", id)
    yield* moveReel(context, id, previous.machineId ?? null, input.machineId ?? null)
    return replaced
  })

const listReelsInGroup: Operation = (context, request) =>
  Effect.gen(function*() {
    const groupId = reelGroupNumber(request.params?.inventoryProductLocationId)
    return yield* listAll("reel", context.appId, { reelGroupId: [groupId] }, { limit: ALL })
  })

interface NewReels {
  readonly reels: ReadonlyArray<{ readonly remainingWeight: number; readonly lotNumber?: string }>
}

const createReelsInGroup: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const groupId = reelGroupNumber(request.params?.inventoryProductLocationId)
    if ((yield* records.find(REEL_GROUP, context.appId, groupId)) === undefined) {
      return yield* EngineError.notFound(REEL_GROUP, groupId)
    }
    const created: Array<StoredRecord> = []
    for (const reel of (request.payload as NewReels).reels) {
      created.push(yield* records.insert("reel", context.appId, { ...reel, reelGroupId: Number(groupId), machineId: null }))
    }
    return created
  })

export const reelWorkflows = {
  "reelGroup.create": createReelGroup,
  "reelGroup.list": listReelGroups,
  "reelGroup.get": getReelGroup,
  "reelGroup.replace": replaceReelGroup,
  // A reel moving between machines changes both; a group's reels are created all or none.
  "reel.replace": transactional(replaceReel),
  "reel.listInGroup": listReelsInGroup,
  "reel.createInGroup": transactional(createReelsInGroup)
} as const

/** Used by machine deletion: the reels it held are released. */
export const releaseReelsOf = (context: OperationContext, machineId: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    for (const reel of yield* listAll("reel", context.appId, { machineId: [machineId] })) {
      yield* records.replace("reel", context.appId, String(reel.id), { ...reel, machineId: null })
    }
  })
