/**
 * Materials (defaults per technology), machines (the reels they hold, all of
 * its technology, the technology of its group) and the proximity search.
 */
import { Effect } from "effect"
import { Machine, MachineGroup, Reel } from "../../domain/resources/production.ts"
import { Material } from "../../domain/resources/reference.ts"
import { findRecord, getRecord, listRecords, type PrepareInput, recordHandlers, type RecordHooks, type RecordOf, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers, OperationContext } from "../Operation.ts"
import { checkHeldReels, checkLoadable, REEL_GROUP } from "./reelRules.ts"
import { releaseReelsOf } from "./reels.ts"
import { listStored, replaceRecord, unique } from "./store.ts"

type MachineHandlers = GroupHandlers<"machine">

/** Density (g/cm³) and price per kg of a material when its record gives none. */
export const MATERIAL_DEFAULTS: Readonly<Record<string, { readonly density: number; readonly pricePerKg: number }>> = {
  fdm: { density: 1.24, pricePerKg: 25 },
  sla: { density: 1.15, pricePerKg: 120 },
  sls: { density: 1.01, pricePerKg: 70 },
  mjf: { density: 1.01, pricePerKg: 60 },
  "cnc-milling": { density: 2.7, pricePerKg: 8 }
}

/** A material that changes technology must leave no reel of it on a machine of the old one. */
const checkLoadedReels = (context: OperationContext, material: RecordOf<typeof Material>, technologyId: string) =>
  Effect.gen(function*() {
    for (const group of yield* listStored(REEL_GROUP, context.appId, { equals: { materialId: [material.id] } })) {
      for (const reel of yield* listRecords(Reel, context.appId, { reelGroupId: String(group.id) })) {
        if (typeof reel.machineId !== "string") continue
        const machine = yield* findRecord(Machine, context.appId, reel.machineId)
        if (machine !== undefined && machine.technologyId !== technologyId) {
          return yield* EngineError.invalid(
            `technologyId: reel ${reel.id} of material ${material.id} is loaded on machine ${machine.id} (${machine.technologyId})`
          )
        }
      }
    }
  })

const materialHooks: RecordHooks<typeof Material> = {
  prepare: (context, input, previous) =>
    Effect.gen(function*() {
      if (previous !== undefined && previous.technologyId !== input.technologyId) yield* checkLoadedReels(context, previous, input.technologyId)
      const defaults = MATERIAL_DEFAULTS[input.technologyId]
      if (defaults === undefined) return input
      return {
        ...input,
        density: input.density ?? defaults.density,
        pricePerKg: input.pricePerKg ?? defaults.pricePerKg
      }
    })
}

export const materialHandlers: GroupHandlers<"material"> = recordHandlers(Material, materialHooks)

/**
 * A machine is of its group's technology, and of that of every reel it
 * holds. A new machine holds no reels; a replace keeps the ones it holds
 * (PUT /machine/{id}/reels changes them).
 */
const prepareMachine = (context: OperationContext, input: PrepareInput<typeof Machine>, previous: RecordOf<typeof Machine> | undefined) =>
  Effect.gen(function*() {
    if (input.machineGroupId !== undefined) {
      const group = yield* findRecord(MachineGroup, context.appId, input.machineGroupId)
      if (group !== undefined && group.technologyId !== input.technologyId) {
        return yield* EngineError.invalid(
          `technologyId: ${input.technologyId} is not the technology of machine group ${group.id} (${group.technologyId})`
        )
      }
    }
    if (previous !== undefined && previous.technologyId !== input.technologyId) {
      yield* checkHeldReels(context, { id: previous.id, technologyId: input.technologyId })
    }
    return { ...input, reelIds: input.reelIds ?? [] }
  })

const machineHooks: RecordHooks<typeof Machine> = { prepare: prepareMachine }

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

const byProximity: MachineHandlers["byProximity"] = (context, { payload }) =>
  Effect.gen(function*() {
    const machines = yield* listRecords(Machine, context.appId, payload.technologyId === undefined ? {} : { technologyId: payload.technologyId })
    const point = { latitude: payload.latitude, longitude: payload.longitude }
    return machines
      .map((machine) => ({ ...machine, distanceKm: haversineKm(point, machine.location) }))
      .sort((a, b) => a.distanceKm - b.distanceKm)
      .slice(0, payload.limit ?? 10)
  })

/** The reels of `reelIds`, or the 422 naming the first the app does not have. */
const reelsOf = (appId: string, reelIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
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
 * that machine's `reelIds`; reels no longer listed are released.
 */
const assignReels: MachineHandlers["assignReels"] = (context, { params: { machineId }, payload }) =>
  Effect.gen(function*() {
    const machine = yield* getRecord(Machine, context.appId, machineId)
    const reelIds = unique(payload.reelIds)
    const reels = yield* reelsOf(context.appId, reelIds)
    for (const reel of reels) yield* checkLoadable(context, "reelIds", reel, machine)
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
    const updated = yield* replaceRecord(Machine, context.appId, machineId, { ...machine, reelIds })
    return updated ?? (yield* EngineError.notFound("machine", machineId))
  })

const machineRecords = recordHandlers(Machine, machineHooks)

/** DELETE /machine/{id}: the generic delete, and the reels it held are released. */
const removeMachine: MachineHandlers["remove"] = (context, input) =>
  Effect.gen(function*() {
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
