/**
 * The price calculation of a part, as a pure function: from its geometry,
 * technology, material, production parameters, machine rate and
 * post-processing services to production times (per service and in total)
 * and the unit and total price for its quantity, setup amortised, in EUR
 * rounded to the cent (the total exactly quantity × unit price).
 * docs/pricing.md writes the model down; `rates.ts` holds its constants.
 */
import { parameterMagnitude } from "../referenceData.ts"
import { BASE_MINOR_UNITS, unitAndTotal } from "./money.ts"
import { CNC, ENGINEERING_RATE, FDM, LABOUR_RATE, MJF, type NestedBuild, SLA, SLS } from "./rates.ts"

export interface PartGeometry {
  /** mm³ */
  readonly volume: number
  /** mm² */
  readonly surfaceArea: number
  /** mm */
  readonly boundingBox: { readonly x: number; readonly y: number; readonly z: number }
}

export interface PricedMaterial {
  /** g/cm³ */
  readonly density: number
  readonly pricePerKg: number
}

export interface PostProcessing {
  readonly id: string
  readonly pricePerPart: number
  readonly pricePerSquareCentimetre: number
  /** s per batch */
  readonly setupTime: number
  readonly cycleTimePerSquareCentimetre: number
}

export interface PricingInput {
  readonly technologyId: string
  readonly geometry: PartGeometry
  readonly material: PricedMaterial
  /** Production parameter field name → value id, as on the part. */
  readonly parameters: Readonly<Record<string, unknown>> | undefined
  /** Per hour. */
  readonly machineRate: number
  readonly services: ReadonlyArray<PostProcessing>
  readonly quantity: number
}

/** Times in seconds: cycle time per part, setup and programming per batch. */
export interface ServiceTimes {
  readonly serviceId: string
  readonly cycleTime: number
  readonly programmingTime: number
  readonly setupTime: number
}

export interface PriceCalculation {
  readonly productionTimes: {
    readonly cycleTime: number
    readonly programmingTime: number
    readonly setupTime: number
    readonly services: ReadonlyArray<ServiceTimes>
  }
  readonly unitPrice: number
  readonly totalPrice: number
}

/** The manufacturing step: its times and the material it consumes per part (g). */
interface Manufacturing {
  readonly cycleTime: number
  readonly setupTime: number
  readonly programmingTime: number
  readonly materialGrams: number
}

const MM3_PER_CM3 = 1000
const MM2_PER_CM2 = 100
const SECONDS_PER_HOUR = 3600

/** Number of layers of a part `height` mm tall (at least one). */
const layerCount = (height: number, layerHeight: number) => Math.max(1, Math.ceil(height / layerHeight - 1e-9))

const grams = (volumeMm3: number, density: number) => (volumeMm3 / MM3_PER_CM3) * density

const magnitude = (input: PricingInput, name: string, fallback: number) => parameterMagnitude(input.technologyId, name, input.parameters) ?? fallback

const areaCm2 = (geometry: PartGeometry) => geometry.surfaceArea / MM2_PER_CM2

/** FDM: material from shells (area × walls × line width) and infill; extrusion at the volumetric flow plus a per-layer overhead. */
const fdm = (input: PricingInput): Manufacturing => {
  const { geometry } = input
  const layerHeight = magnitude(input, "layerHeight", 0.2)
  const infill = magnitude(input, "infill", 0.3)
  const walls = magnitude(input, "walls", 2)
  const shell = Math.min(geometry.volume, geometry.surfaceArea * walls * FDM.lineWidth)
  const extruded = shell + (geometry.volume - shell) * infill
  const flow = layerHeight * FDM.lineWidth * FDM.printSpeed
  return {
    cycleTime: extruded / flow + layerCount(geometry.boundingBox.z, layerHeight) * FDM.layerOverhead,
    setupTime: FDM.setupTime,
    programmingTime: FDM.programmingTime,
    materialGrams: grams(extruded, input.material.density)
  }
}

/**
 * SLA, SLS and MJF: the layers of the part's height (its build height), each
 * shared with the parts nested beside it (its footprint's share of the packed
 * build area); plus finishing per cm² from the surface finish.
 */
const nestedBuild = (build: NestedBuild) => (input: PricingInput): Manufacturing => {
  const { geometry } = input
  const layerHeight = magnitude(input, "layerHeight", build.layerHeight)
  const footprint = geometry.boundingBox.x * geometry.boundingBox.y
  const share = Math.min(1, footprint / (build.buildArea * build.packingShare))
  const finishing = magnitude(input, "surfaceFinish", 0) * areaCm2(geometry)
  return {
    cycleTime: layerCount(geometry.boundingBox.z, layerHeight) * build.layerTime * share + finishing,
    setupTime: build.setupTime,
    programmingTime: build.programmingTime,
    materialGrams: grams(geometry.volume * (1 + build.wasteShare), input.material.density)
  }
}

/**
 * The features a CNC part has to machine, estimated from its geometry: six
 * for a box (its faces), more as its surface grows beyond its bounding box's.
 */
export const cncFeatureCount = (geometry: PartGeometry) => {
  const { x, y, z } = geometry.boundingBox
  const boxArea = 2 * (x * y + y * z + z * x)
  return boxArea > 0 ? Math.max(1, Math.ceil(6 * geometry.surfaceArea / boxArea - 1e-9)) : 1
}

/** CNC milling: roughing the stock down (removed volume over removal rate), finishing passes over the surface, setup and programming per feature. */
const cncMilling = (input: PricingInput): Manufacturing => {
  const { geometry, material } = input
  const { x, y, z } = geometry.boundingBox
  const allowance = 2 * CNC.stockAllowance
  const stock = (x + allowance) * (y + allowance) * (z + allowance)
  const removed = Math.max(0, stock - geometry.volume)
  const removalRate = CNC.removalRate * CNC.referenceDensity / material.density
  const finishing = magnitude(input, "tolerance", 1) * magnitude(input, "surfaceFinish", 1)
  const features = cncFeatureCount(geometry)
  return {
    cycleTime: removed / removalRate + geometry.surfaceArea * finishing / CNC.finishingRate,
    setupTime: CNC.setupBase + CNC.setupPerFeature * features,
    programmingTime: CNC.programmingBase + CNC.programmingPerFeature * features,
    materialGrams: grams(stock, material.density)
  }
}

const MANUFACTURING: Readonly<Record<string, (input: PricingInput) => Manufacturing>> = {
  fdm,
  sla: nestedBuild(SLA),
  sls: nestedBuild(SLS),
  mjf: nestedBuild(MJF),
  "cnc-milling": cncMilling
}

/** Seconds rounded to tenths: the model is not more precise than that. */
const seconds = (value: number) => Math.round(value * 10) / 10

/** The price calculation; undefined for a technology the engine has no model for. */
export const calculatePrice = (input: PricingInput): PriceCalculation | undefined => {
  const manufacture = MANUFACTURING[input.technologyId]
  if (manufacture === undefined) return undefined
  const step = manufacture(input)
  const area = areaCm2(input.geometry)
  const quantity = Math.max(1, input.quantity)

  const stepTimes: ServiceTimes = {
    serviceId: input.technologyId,
    cycleTime: seconds(step.cycleTime),
    programmingTime: seconds(step.programmingTime),
    setupTime: seconds(step.setupTime)
  }
  const serviceTimes = input.services.map((service): ServiceTimes => ({
    serviceId: service.id,
    cycleTime: seconds(service.cycleTimePerSquareCentimetre * area),
    programmingTime: 0,
    setupTime: seconds(service.setupTime)
  }))
  const all = [stepTimes, ...serviceTimes]
  const sum = (key: "cycleTime" | "programmingTime" | "setupTime") => seconds(all.reduce((total, times) => total + times[key], 0))

  const perHour = (time: number, rate: number) => (time / SECONDS_PER_HOUR) * rate
  const perPart = step.materialGrams / 1000 * input.material.pricePerKg
    + perHour(step.cycleTime, input.machineRate)
    + input.services.reduce((total, service) => total + service.pricePerPart + service.pricePerSquareCentimetre * area, 0)
  const perBatch = perHour(step.setupTime, input.machineRate)
    + perHour(step.programmingTime, ENGINEERING_RATE)
    + input.services.reduce((total, service) => total + perHour(service.setupTime, LABOUR_RATE), 0)
  const total = perPart * quantity + perBatch

  return {
    productionTimes: {
      cycleTime: sum("cycleTime"),
      programmingTime: sum("programmingTime"),
      setupTime: sum("setupTime"),
      services: all
    },
    // The unit price rounded to the cent, the total exactly quantity × unit price (docs/pricing.md).
    ...unitAndTotal(total, quantity, BASE_MINOR_UNITS)
  }
}
