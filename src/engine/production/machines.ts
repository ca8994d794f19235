/**
 * Materials (defaults per technology), machines (the reels they hold) and
 * the proximity search.
 */
import { Effect } from "effect"
import { Machine, Reel } from "../../domain/resources/production.ts"
import { Material } from "../../domain/resources/reference.ts"
import { findRecord, getRecord, listRecords, recordHandlers, type RecordHooks, type RecordOf, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { GroupHandlers } from "../Operation.ts"
import { releaseReelsOf } from "./reels.ts"
import { replaceRecord, unique } from "./store.ts"

type MachineHandlers = GroupHandlers<"machine">

/** Density (g/cm³) and price per kg of a material when its record gives none. */
export const MATERIAL_DEFAULTS: Readonly<Record<string, { readonly density: number; readonly pricePerKg: number }>> = {
  fdm: { density: 1.24, pricePerKg: 25 },
  sla: { density: 1.15, pricePerKg: 120 },
  sls: { density: 1.01, pricePerKg: 70 },
  mjf: { density: 1.01, pricePerKg: 60 },
  "cnc-milling": { density: 2.7, pricePerKg: 8 }
}

const materialHooks: RecordHooks<typeof Material> = {
  prepare: (_context, input) => {
    const defaults = MATERIAL_DEFAULTS[input.technologyId]
    if (defaults === undefined) return Effect.succeed(input)
    return Effect.succeed({
      ...input,
      density: input.density ?? defaults.density,
      pricePerKg: input.pricePerKg ?? defaults.pricePerKg
    })
  }
}

export const materialHandlers: GroupHandlers<"material"> = recordHandlers(Material, materialHooks)

/** A new machine holds no reels; a replace keeps the ones it holds (PUT /machine/{id}/reels changes them). */
const machineHooks: RecordHooks<typeof Machine> = {
  prepare: (_context, input) => Effect.succeed({ ...input, reelIds: input.reelIds ?? [] })
}

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
 * PUT /machine/{machineId}/reels: the machine holds exactly the given reels.
 * Each reel's `machineId` follows; a reel taken from another machine leaves
 * that machine's `reelIds`; reels no longer listed are released.
 */
const assignReels: MachineHandlers["assignReels"] = (context, { params: { machineId }, payload }) =>
  Effect.gen(function*() {
    const machine = yield* getRecord(Machine, context.appId, machineId)
    const reelIds = unique(payload.reelIds)
    const reels = yield* reelsOf(context.appId, reelIds)
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
