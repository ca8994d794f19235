/**
 * Machine groups and machines (the reels they hold, all of its technology,
 * the technology of its group) and the proximity search. A machine's
 * technology is its group's and its service jobs': neither changes while the
 * other names it.
 */
import { Effect } from "effect"
import { Machine, MachineGroup, Reel, ServiceJob } from "../../domain/resources/production.ts"
import { recordHandlers, type RecordHooks, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import { usedBy } from "../integrity.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import { findRecord, getRecord, listRecords, type PrepareInput, type RecordOf } from "../typedRecords.ts"
import { checkHeldReels, checkLoadable } from "./reelRules.ts"
import { releaseReelsOf } from "./reels.ts"
import { replaceRecord, unique } from "./store.ts"

type MachineHandlers = GroupHandlers<"machine">

/**
 * A machine is of its group's technology, and of that of every reel it
 * holds. A new machine holds no reels; a replace keeps the ones it holds
 * (PUT /machine/{id}/reels changes them).
 */
const prepareMachine = Effect.fnUntraced(
  function*(context: OperationContext, input: PrepareInput<typeof Machine>, previous: RecordOf<typeof Machine> | undefined) {
    if (input.machineGroupId !== undefined) {
      const group = yield* findRecord(MachineGroup, context.appId, input.machineGroupId)
      if (group !== undefined && group.technologyId !== input.technologyId) {
        return yield* EngineError.invalid(
          `technologyId: ${input.technologyId} is not the technology of machine group ${group.id} (${group.technologyId})`
        )
      }
    }
    if (previous !== undefined && previous.technologyId !== input.technologyId) {
      const jobs = yield* usedBy(Machine.name, context.appId, previous, [ServiceJob.name])
      if (jobs !== undefined) {
        return yield* EngineError.invalid(
          `technologyId: machine ${previous.id} is used by ${jobs} of ${previous.technologyId}: its technology cannot change to ${input.technologyId}`
        )
      }
      yield* checkHeldReels(context, { id: previous.id, technologyId: input.technologyId })
    }
    return { ...input, reelIds: input.reelIds ?? [] }
  }
)

const machineHooks: RecordHooks<typeof Machine> = { prepare: prepareMachine }

/**
 * A machine's technology is its group's, and a service job's machine group
 * is of the job's technology: a group's technology changes only while no
 * machine and no service job names the group (422 naming `technologyId`).
 */
const machineGroupHooks: RecordHooks<typeof MachineGroup> = {
  prepare: Effect.fnUntraced(function*(context, input, previous) {
    if (previous === undefined || previous.technologyId === input.technologyId) return input
    const users = yield* usedBy(MachineGroup.name, context.appId, previous, [Machine.name, ServiceJob.name])
    if (users !== undefined) {
      return yield* EngineError.invalid(
        `technologyId: machine group ${previous.id} is used by ${users} of ${previous.technologyId}: ` +
          `a machine's technology is its group's, so the group's cannot change to ${input.technologyId}`
      )
    }
    return input
  })
}

export const machineGroupHandlers: GroupHandlers<"machineGroup"> = recordHandlers(MachineGroup, machineGroupHooks)

/** Mean Earth radius (IUGG), km. */
export const EARTH_RADIUS_KM = 6371.0088

const radians = (degrees: number) => (degrees * Math.PI) / 180

/** Great-circle distance between two points, by the haversine formula. */
export const haversineKm = (
  a: { readonly latitude: number; readonly longitude: number },
  b: { readonly latitude: number; readonly longitude: number }
) => {
  const dLat = radians(b.latitude - a.latitude)
  const dLon = radians(b.longitude - a.longitude)
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.latitude)) * Math.cos(radians(b.latitude)) * Math.sin(dLon / 2) ** 2
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)))
}

const byProximity: MachineHandlers["byProximity"] = Effect.fnUntraced(function*(context, { payload }) {
  const machines = yield* listRecords(Machine, context.appId, payload.technologyId === undefined ? {} : { technologyId: payload.technologyId })
  const point = { latitude: payload.latitude, longitude: payload.longitude }
  return machines
    .map((machine) => ({ ...machine, distanceKm: haversineKm(point, machine.location) }))
    .sort((a, b) => a.distanceKm - b.distanceKm)
    .slice(0, payload.limit ?? 10)
})

/** The reels of `reelIds`, or the 422 naming the first the app does not have. */
const reelsOf = Effect.fnUntraced(function*(appId: string, reelIds: ReadonlyArray<string>) {
  const reels: Array<RecordOf<typeof Reel>> = []
  for (const reelId of reelIds) {
    const reel = yield* findRecord(Reel, appId, reelId)
    if (reel === undefined) return yield* EngineError.unknownReference("reelIds", "reel", reelId)
    reels.push(reel)
  }
  return reels
})

/**
 * PUT /machine/{machineId}/reels: the machine holds exactly the given reels,
 * each of a material of its technology. Each reel's `machineId` follows; a reel taken from another machine leaves
 * that machine's `reelIds`; reels no longer listed are released. A machine's row is written before its reels' rows,
 * the order its delete locks them in (writes.ts): a delete running meanwhile waits, or has gone and this is its 404.
 */
const assignReels: MachineHandlers["assignReels"] = Effect.fnUntraced(function*(context, { params: { machineId }, payload }) {
  const machine = yield* getRecord(Machine, context.appId, machineId)
  const reelIds = unique(payload.reelIds)
  const reels = yield* reelsOf(context.appId, reelIds)
  for (const reel of reels) yield* checkLoadable(context, "reelIds", reel, machine)
  const updated = yield* replaceRecord(Machine, context.appId, machineId, { ...machine, reelIds })
  if (updated === undefined) return yield* EngineError.notFound("machine", machineId)
  // Released: reels this machine held that are not listed any more.
  for (const reel of yield* listRecords(Reel, context.appId, { machineId })) {
    if (!reelIds.includes(reel.id)) yield* replaceRecord(Reel, context.appId, reel.id, { ...reel, machineId: null })
  }
  for (const reel of reels) {
    const previousMachineId = reel.machineId
    if (typeof previousMachineId === "string" && previousMachineId !== machineId) {
      const other = yield* findRecord(Machine, context.appId, previousMachineId)
      if (other !== undefined) {
        yield* replaceRecord(Machine, context.appId, previousMachineId, { ...other, reelIds: other.reelIds.filter((id) => id !== reel.id) })
      }
    }
    if (previousMachineId !== machineId) yield* replaceRecord(Reel, context.appId, reel.id, { ...reel, machineId })
  }
  return updated
})

const machineRecords = recordHandlers(Machine, machineHooks)

/** DELETE /machine/{id}: the generic delete, and the reels it held are released. */
const removeMachine: MachineHandlers["remove"] = Effect.fnUntraced(function*(context, input) {
  const removed = yield* machineRecords.remove(context, input)
  yield* releaseReelsOf(context, input.params.id)
  return removed
})

export const machineHandlers: MachineHandlers = {
  list: machineRecords.list,
  get: machineRecords.get,
  create: machineRecords.create,
  replace: machineRecords.replace,
  // Each moves reels between machines as well: all of it, or none.
  remove: transactional(removeMachine),
  byProximity,
  assignReels: transactional(assignReels)
}
