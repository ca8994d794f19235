/**
 * Materials (defaults per technology), machines (the reels they hold) and
 * the proximity search.
 */
import { Effect } from "effect"
import { Machine } from "../../domain/resources/production.ts"
import { crudOperations, type RecordHooks, transactional } from "../crud.ts"
import { EngineError } from "../EngineError.ts"
import type { Operation } from "../Operation.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { releaseReelsOf } from "./reels.ts"
import { listAll, param, strings, unique } from "./store.ts"

/** Density (g/cm³) and price per kg of a material when its record gives none. */
export const MATERIAL_DEFAULTS: Readonly<Record<string, { readonly density: number; readonly pricePerKg: number }>> = {
  fdm: { density: 1.24, pricePerKg: 25 },
  sla: { density: 1.15, pricePerKg: 120 },
  sls: { density: 1.01, pricePerKg: 70 },
  mjf: { density: 1.01, pricePerKg: 60 },
  "cnc-milling": { density: 2.7, pricePerKg: 8 }
}

export const materialHooks: RecordHooks = {
  prepare: (_context, input) => {
    const defaults = MATERIAL_DEFAULTS[String(input.technologyId)]
    if (defaults === undefined) return Effect.succeed(input)
    return Effect.succeed({
      ...input,
      density: input.density ?? defaults.density,
      pricePerKg: input.pricePerKg ?? defaults.pricePerKg
    })
  }
}

/** A new machine holds no reels; a replace keeps the ones it holds (PUT /machine/{id}/reels changes them). */
export const machineHooks: RecordHooks = {
  prepare: (_context, input) => Effect.succeed({ ...input, reelIds: strings(input.reelIds) })
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

interface ProximityPayload {
  readonly latitude: number
  readonly longitude: number
  readonly technologyId?: string
  readonly limit?: number
}

const byProximity: Operation = (context, request) =>
  Effect.gen(function*() {
    const payload = request.payload as ProximityPayload
    const machines = yield* listAll(
      "machine",
      context.appId,
      payload.technologyId === undefined ? {} : { technologyId: [payload.technologyId] }
    )
    const point = { latitude: payload.latitude, longitude: payload.longitude }
    return machines
      .flatMap((machine) => {
        const location = machine.location as { latitude?: unknown; longitude?: unknown } | undefined
        if (typeof location?.latitude !== "number" || typeof location.longitude !== "number") return []
        const distanceKm = haversineKm(point, { latitude: location.latitude, longitude: location.longitude })
        return [{ ...machine, distanceKm }]
      })
      .sort((a, b) => a.distanceKm - b.distanceKm)
      .slice(0, payload.limit ?? 10)
  })

/**
 * PUT /machine/{machineId}/reels: the machine holds exactly the given reels.
 * Each reel's `machineId` follows; a reel taken from another machine leaves
 * that machine's `reelIds`; reels no longer listed are released.
 */
const assignReels: Operation = (context, request) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const machineId = param(request, "machineId")
    const machine = yield* records.find("machine", context.appId, machineId)
    if (machine === undefined) return yield* EngineError.notFound("machine", machineId)
    const reelIds = unique(strings((request.payload as { reelIds?: unknown }).reelIds))
    const reels: Array<StoredRecord> = []
    for (const reelId of reelIds) {
      const reel = yield* records.find("reel", context.appId, reelId)
      if (reel === undefined) return yield* EngineError.unknownReference("reelIds", "reel", reelId)
      reels.push(reel)
    }
    // Released: reels this machine held that are not listed any more.
    const held = yield* listAll("reel", context.appId, { machineId: [machineId] })
    for (const reel of held) {
      if (!reelIds.includes(String(reel.id))) {
        yield* records.replace("reel", context.appId, String(reel.id), { ...reel, machineId: null })
      }
    }
    for (const reel of reels) {
      const previousMachineId = reel.machineId
      if (typeof previousMachineId === "string" && previousMachineId !== machineId) {
        const other = yield* records.find("machine", context.appId, previousMachineId)
        if (other !== undefined) {
          yield* records.replace("machine", context.appId, previousMachineId, {
            ...other,
            reelIds: strings(other.reelIds).filter((id) => id !== reel.id)
          })
        }
      }
      if (previousMachineId !== machineId) {
        yield* records.replace("reel", context.appId, String(reel.id), { ...reel, machineId })
      }
    }
    const updated = yield* records.replace("machine", context.appId, machineId, { ...machine, reelIds })
    return updated ?? (yield* EngineError.notFound("machine", machineId))
  })

const genericRemove = crudOperations(Machine, machineHooks)["machine.remove"]!

/** DELETE /machine/{id}: the generic delete, and the reels it held are released. */
const removeMachine: Operation = (context, request) =>
  Effect.gen(function*() {
    const removed = yield* genericRemove(context, request)
    yield* releaseReelsOf(context, param(request, "id"))
    return removed
  })

export const machineWorkflows = {
  // Each moves reels between machines as well: all of it, or none.
  "machine.remove": transactional(removeMachine),
  "machine.byProximity": byProximity,
  "machine.assignReels": transactional(assignReels)
} as const
