/**
 * Prices a stored part: gathers what the calculation needs from the app's
 * records (material, machine rate, post-processing services) and sets the
 * part's `productionTimes`, `unitPrice` and `totalPrice`. A part without
 * geometry (its model not analysed) has none of them.
 */
import { Effect } from "effect"
import type { TicketModel } from "../../domain/resources/orders.ts"
import { Machine, MachineGroup } from "../../domain/resources/production.ts"
import { Material, PostProcessingService } from "../../domain/resources/reference.ts"
import type { OperationContext, Step } from "../Operation.ts"
import { MATERIAL_DEFAULTS } from "../production/materials.ts"
import { findRecord, listRecords, type RecordOf, type StoredFields } from "../typedRecords.ts"
import { calculatePrice, type PostProcessing } from "./calculate.ts"
import { DEFAULT_MACHINE_RATES } from "./rates.ts"

type PartFields = StoredFields<typeof TicketModel>

/** What pricing reads of a part; `geometry` is absent on a part whose model has not been looked at yet. */
export type PricedPart =
  & Pick<PartFields, "technologyId" | "materialId" | "quantity" | "productionParameterIds" | "serviceIds">
  & { readonly geometry?: PartFields["geometry"] | undefined }

/** What pricing sets on a part. */
export type PartPrice = Pick<PartFields, "productionTimes" | "unitPrice" | "totalPrice">

const UNPRICED: PartPrice = { productionTimes: null, unitPrice: null, totalPrice: null }

/**
 * The hourly rate the app charges for a technology: the lowest among its
 * machines of that technology (a machine's own rate, else its group's),
 * else the lowest of its machine groups, else the technology's default.
 */
export const machineRate = Effect.fnUntraced(function*(context: OperationContext, technologyId: string) {
  const groups = yield* listRecords(MachineGroup, context.appId, { technologyId })
  const groupRate = new Map(groups.map((group) => [group.id, group.hourlyRate]))
  const machines = yield* listRecords(Machine, context.appId, { technologyId })
  const rates = machines.map((machine) => machine.hourlyRate ?? (machine.machineGroupId === undefined ? undefined : groupRate.get(machine.machineGroupId)))
  const known = (values: ReadonlyArray<number | undefined>) => values.filter((rate): rate is number => rate !== undefined)
  const candidates = known(rates).length > 0 ? known(rates) : known([...groupRate.values()])
  return candidates.length > 0 ? Math.min(...candidates) : DEFAULT_MACHINE_RATES[technologyId] ?? 0
})

const postProcessingOf = (service: RecordOf<typeof PostProcessingService>): PostProcessing => ({
  id: service.id,
  pricePerPart: service.pricePerPart,
  pricePerSquareCentimetre: service.pricePerSquareCentimetre,
  setupTime: service.setupTime,
  cycleTimePerSquareCentimetre: service.cycleTimePerSquareCentimetre
})

/**
 * The part's price calculation at any quantity, from what the app's records
 * say now (material, machine rate, services); undefined for a part without
 * geometry. A write of the part prices it at its quantity; price breaks
 * price it at several (orders/priceBreaks.ts), with this same calculation.
 */
export const partPricing = Effect.fnUntraced(function*(
  context: OperationContext,
  part: Omit<PricedPart, "quantity">
) {
  const geometry = part.geometry ?? undefined
  if (geometry === undefined) return undefined
  const technologyId = part.technologyId
  const material = yield* findRecord(Material, context.appId, part.materialId)
  const defaults = MATERIAL_DEFAULTS[technologyId] ?? { density: 1, pricePerKg: 0 }
  const services = yield* Effect.forEach(part.serviceIds ?? [], (serviceId) => findRecord(PostProcessingService, context.appId, serviceId))
  const input = {
    technologyId,
    geometry,
    material: { density: material?.density ?? defaults.density, pricePerKg: material?.pricePerKg ?? defaults.pricePerKg },
    parameters: part.productionParameterIds,
    machineRate: yield* machineRate(context, technologyId),
    services: services.flatMap((service) => (service === undefined ? [] : [postProcessingOf(service)]))
  }
  return (quantity: number) => calculatePrice({ ...input, quantity })
})

/** The part with its price calculation (writes check references, so missing ones only leave defaults). */
export const pricePart = <P extends PricedPart>(context: OperationContext, part: P): Step<P & PartPrice> =>
  Effect.map(partPricing(context, part), (priceAt) => {
    const calculation = priceAt?.(part.quantity)
    return calculation === undefined ? { ...part, ...UNPRICED } : { ...part, ...calculation }
  })
