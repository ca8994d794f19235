/**
 * Prices a stored part: gathers what the calculation needs from the app's
 * records (material, machine rate, post-processing services) and sets the
 * part's `productionTimes`, `unitPrice` and `totalPrice`. A part without
 * geometry (its model not analysed) has none of them.
 */
import { Effect } from "effect"
import type { OperationContext } from "../Operation.ts"
import { arrayOf, listAll, numeric, objectOf, text } from "../orders/common.ts"
import { MATERIAL_DEFAULTS } from "../production/machines.ts"
import { RecordRepository, type StoredRecord } from "../RecordRepository.ts"
import { calculatePrice, type PartGeometry, type PostProcessing } from "./calculate.ts"
import { DEFAULT_MACHINE_RATES } from "./rates.ts"

const UNPRICED = { productionTimes: null, unitPrice: null, totalPrice: null } as const

const geometryOf = (part: StoredRecord): PartGeometry | undefined => {
  const geometry = objectOf(part.geometry)
  const box = objectOf(geometry?.boundingBox)
  if (geometry === undefined || box === undefined) return undefined
  return {
    volume: numeric(geometry, "volume") ?? 0,
    surfaceArea: numeric(geometry, "surfaceArea") ?? 0,
    boundingBox: { x: numeric(box, "x") ?? 0, y: numeric(box, "y") ?? 0, z: numeric(box, "z") ?? 0 }
  }
}

/**
 * The hourly rate the app charges for a technology: the lowest among its
 * machines of that technology (a machine's own rate, else its group's),
 * else the lowest of its machine groups, else the technology's default.
 */
export const machineRate = (context: OperationContext, technologyId: string) =>
  Effect.gen(function*() {
    const groups = yield* listAll("machineGroup", context.appId, { technologyId })
    const groupRate = new Map(groups.map((group) => [String(group.id), numeric(group, "hourlyRate")]))
    const machines = yield* listAll("machine", context.appId, { technologyId })
    const rates = machines.map((machine) => numeric(machine, "hourlyRate") ?? groupRate.get(String(machine.machineGroupId)))
    const known = (values: ReadonlyArray<number | undefined>) => values.filter((rate): rate is number => rate !== undefined)
    const candidates = known(rates).length > 0 ? known(rates) : known([...groupRate.values()])
    return candidates.length > 0 ? Math.min(...candidates) : DEFAULT_MACHINE_RATES[technologyId] ?? 0
  })

const postProcessingOf = (service: StoredRecord): PostProcessing => ({
  id: String(service.id),
  pricePerPart: numeric(service, "pricePerPart") ?? 0,
  pricePerSquareCentimetre: numeric(service, "pricePerSquareCentimetre") ?? 0,
  setupTime: numeric(service, "setupTime") ?? 0,
  cycleTimePerSquareCentimetre: numeric(service, "cycleTimePerSquareCentimetre") ?? 0
})

/** The part with its price calculation (writes check references, so missing ones only leave defaults). */
export const pricePart = (context: OperationContext, part: StoredRecord) =>
  Effect.gen(function*() {
    const geometry = geometryOf(part)
    if (geometry === undefined) return { ...part, ...UNPRICED }
    const records = yield* RecordRepository
    const technologyId = text(part, "technologyId") ?? ""
    const material = yield* records.find("material", context.appId, text(part, "materialId") ?? "")
    const defaults = MATERIAL_DEFAULTS[technologyId] ?? { density: 1, pricePerKg: 0 }
    const services = yield* Effect.forEach(
      arrayOf(part.serviceIds),
      (serviceId) => records.find("service", context.appId, String(serviceId))
    )
    const calculation = calculatePrice({
      technologyId,
      geometry,
      material: {
        density: (material === undefined ? undefined : numeric(material, "density")) ?? defaults.density,
        pricePerKg: (material === undefined ? undefined : numeric(material, "pricePerKg")) ?? defaults.pricePerKg
      },
      parameters: objectOf(part.productionParameterIds),
      machineRate: yield* machineRate(context, technologyId),
      services: services.flatMap((service) => (service === undefined ? [] : [postProcessingOf(service)])),
      quantity: numeric(part, "quantity") ?? 1
    })
    return calculation === undefined ? { ...part, ...UNPRICED } : { ...part, ...calculation }
  })
