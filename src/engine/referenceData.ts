/**
 * Global reference data, readable by every app from its first call:
 * technologies with their quotation forms and production parameter fields,
 * currencies, colours and post-processing services. Stable ids, so parts and
 * machines can refer to them; written at engine start (upsert), so instances
 * and versions agree.
 */
import { Effect } from "effect"
import { RecordRepository } from "./RecordRepository.ts"

/** A parameter value: its id, its label, and the magnitude the price calculation uses (docs/pricing.md). */
type Values = ReadonlyArray<readonly [id: string, label: string, magnitude: number]>

const field = (technologyId: string, name: string, label: string, values: Values, defaultValueId = values[0]![0]) => ({
  id: `${technologyId}-${name}`,
  technologyId,
  name,
  label,
  values,
  defaultValueId
})

const TECHNOLOGIES = [
  { id: "fdm", name: "FDM", description: "Fused deposition modelling" },
  { id: "sla", name: "SLA", description: "Stereolithography" },
  { id: "sls", name: "SLS", description: "Selective laser sintering" },
  { id: "mjf", name: "MJF", description: "Multi Jet Fusion" },
  { id: "cnc-milling", name: "CNC milling", description: "Subtractive 3-axis and 5-axis milling" }
] as const

/**
 * Magnitudes: layer heights in mm, infill as a share, wall counts; surface
 * finishes as seconds of finishing per cm² (additive) or a factor on the
 * finishing passes (CNC); tolerances as a factor on the finishing passes.
 */
const PARAMETER_FIELDS = [
  field("fdm", "layerHeight", "Layer height", [["fdm-lh-0.1", "0.1 mm", 0.1], ["fdm-lh-0.2", "0.2 mm", 0.2], ["fdm-lh-0.3", "0.3 mm", 0.3]], "fdm-lh-0.2"),
  field("fdm", "infill", "Infill", [["fdm-infill-15", "15 %", 0.15], ["fdm-infill-30", "30 %", 0.3], ["fdm-infill-60", "60 %", 0.6], [
    "fdm-infill-100",
    "100 %",
    1
  ]], "fdm-infill-30"),
  field("fdm", "walls", "Wall count", [["fdm-walls-2", "2", 2], ["fdm-walls-3", "3", 3], ["fdm-walls-4", "4", 4]]),
  field("sla", "layerHeight", "Layer height", [["sla-lh-0.025", "25 µm", 0.025], ["sla-lh-0.05", "50 µm", 0.05], ["sla-lh-0.1", "100 µm", 0.1]], "sla-lh-0.05"),
  field("sla", "surfaceFinish", "Surface finish", [["sla-finish-standard", "Standard", 0], ["sla-finish-polished", "Polished", 3]]),
  field("sls", "layerHeight", "Layer height", [["sls-lh-0.1", "0.1 mm", 0.1], ["sls-lh-0.12", "0.12 mm", 0.12]]),
  field("sls", "surfaceFinish", "Surface finish", [["sls-finish-raw", "Raw", 0], ["sls-finish-blasted", "Bead blasted", 0.3]]),
  field("mjf", "surfaceFinish", "Surface finish", [["mjf-finish-raw", "Raw", 0], ["mjf-finish-blasted", "Bead blasted", 0.3], [
    "mjf-finish-dyed",
    "Dyed black",
    1
  ]]),
  field("cnc-milling", "tolerance", "Tolerance", [["cnc-tol-0.1", "±0.1 mm", 1], ["cnc-tol-0.05", "±0.05 mm", 1.5], ["cnc-tol-0.01", "±0.01 mm", 3]]),
  field("cnc-milling", "surfaceFinish", "Surface finish", [["cnc-finish-as-machined", "As machined (Ra 3.2)", 1], ["cnc-finish-fine", "Fine (Ra 1.6)", 1.6], [
    "cnc-finish-polished",
    "Polished (Ra 0.8)",
    3
  ]])
]

/** The fields as records: values as `{id, label}` (magnitudes are the engine's own). */
const FIELDS = PARAMETER_FIELDS.map(({ values, ...rest }) => ({ ...rest, values: values.map(([id, label]) => ({ id, label })) }))

/**
 * The magnitude of a part's production parameter: the chosen value's, or
 * the field's default when the part chose none (or a value the field does
 * not have: writes check values, so this is only a stored record's past).
 * Undefined when the technology has no such field.
 */
export const parameterMagnitude = (
  technologyId: string,
  name: string,
  chosen: Readonly<Record<string, unknown>> | undefined
): number | undefined => {
  const found = PARAMETER_FIELDS.find((candidate) => candidate.technologyId === technologyId && candidate.name === name)
  if (found === undefined) return undefined
  const byId = (id: unknown) => found.values.find(([valueId]) => valueId === id)?.[2]
  return byId(chosen?.[name]) ?? byId(found.defaultValueId)
}

/**
 * Every production parameter of the technology with the value a part is
 * priced with: the chosen one (writes check it is one of the field's), else
 * the field's default. What a part shows as its `productionParameterIds`.
 */
export const pricedParameters = (technologyId: string, chosen: Readonly<Record<string, string>> | undefined): Record<string, string> =>
  Object.fromEntries(
    PARAMETER_FIELDS.filter((candidate) => candidate.technologyId === technologyId).map((found) => {
      const value = chosen?.[found.name]
      return [found.name, found.values.some(([id]) => id === value) ? value! : found.defaultValueId]
    })
  )

const QUOTATION_FORMS = TECHNOLOGIES.map((technology) => ({
  id: `form-${technology.id}`,
  technologyId: technology.id,
  name: `${technology.name} quotation form`,
  parameterFieldIds: FIELDS.filter((f) => f.technologyId === technology.id).map((f) => f.id)
}))

/**
 * Currencies with their minor unit (ISO 4217 exponent) and a reference rate
 * to the base currency, EUR: units per 1 EUR. The rates are the engine's
 * reference data, rewritten at every start; an app replaces a rate with its
 * own (PUT /currency/{id}/exchange-rate, pricing/exchangeRates.ts) or gives
 * one per quote (`exchangeRate` of POST /ticket/{ticketId}/quote), and every
 * quote records the rate it used (docs/pricing.md).
 */
const CURRENCIES = [
  { id: "EUR", code: "EUR", name: "Euro", symbol: "€", minorUnits: 2, exchangeRate: 1 },
  { id: "USD", code: "USD", name: "US dollar", symbol: "$", minorUnits: 2, exchangeRate: 1.08 },
  { id: "GBP", code: "GBP", name: "Pound sterling", symbol: "£", minorUnits: 2, exchangeRate: 0.85 },
  { id: "CHF", code: "CHF", name: "Swiss franc", symbol: "CHF", minorUnits: 2, exchangeRate: 0.94 },
  { id: "JPY", code: "JPY", name: "Japanese yen", symbol: "¥", minorUnits: 0, exchangeRate: 162 }
]

const COLOURS = [
  { id: "black", name: "Black", hex: "#000000" },
  { id: "white", name: "White", hex: "#ffffff" },
  { id: "grey", name: "Grey", hex: "#808080" },
  { id: "red", name: "Red", hex: "#c62828" },
  { id: "blue", name: "Blue", hex: "#1565c0" },
  { id: "natural", name: "Natural", hex: "#e8e0d0" }
]

const ADDITIVE = ["fdm", "sla", "sls", "mjf"]
const SERVICES = [
  { id: "sanding", name: "Sanding", technologyIds: ADDITIVE, pricePerPart: 4, pricePerSquareCentimetre: 0.05, setupTime: 300, cycleTimePerSquareCentimetre: 6 },
  {
    id: "painting",
    name: "Painting",
    technologyIds: [...ADDITIVE, "cnc-milling"],
    pricePerPart: 8,
    pricePerSquareCentimetre: 0.12,
    setupTime: 900,
    cycleTimePerSquareCentimetre: 4
  },
  {
    id: "dyeing",
    name: "Dyeing",
    technologyIds: ["sls", "mjf"],
    pricePerPart: 2,
    pricePerSquareCentimetre: 0.02,
    setupTime: 1200,
    cycleTimePerSquareCentimetre: 0.5
  },
  {
    id: "vapor-smoothing",
    name: "Vapor smoothing",
    technologyIds: ["sls", "mjf"],
    pricePerPart: 6,
    pricePerSquareCentimetre: 0.04,
    setupTime: 1800,
    cycleTimePerSquareCentimetre: 1
  },
  {
    id: "bead-blasting",
    name: "Bead blasting",
    technologyIds: ["sls", "mjf", "cnc-milling"],
    pricePerPart: 1.5,
    pricePerSquareCentimetre: 0.01,
    setupTime: 600,
    cycleTimePerSquareCentimetre: 1.5
  },
  {
    id: "anodizing",
    name: "Anodizing",
    technologyIds: ["cnc-milling"],
    pricePerPart: 5,
    pricePerSquareCentimetre: 0.08,
    setupTime: 3600,
    cycleTimePerSquareCentimetre: 2
  }
]

/** What a technology's manufacturability verdict holds a part's geometry to (docs/geometry.md, "Manufacturability"). */
export interface ManufacturabilityLimits {
  /** mm: a wall thinner than this is a warning … */
  readonly wallWarning: number
  /** … and thinner than this, blocked. */
  readonly wallBlocked: number
  /** The build volume (mm) of a machine that has none of its own, and of the technology when the app has no machine of it. */
  readonly defaultBuildVolume: { readonly x: number; readonly y: number; readonly z: number }
  /** Downward faces beyond 45° need support (FDM, SLA). */
  readonly overhang: boolean
  /** Closed voids trap powder (SLS, MJF). */
  readonly enclosedCavities: boolean
  /** Milled from stock: undercuts, and the stock (the bounding box plus this allowance a side, mm). */
  readonly stockAllowance?: number
}

/**
 * The limits per technology: wall thicknesses after the usual design guides
 * (FDM: two 0.4 mm perimeters; SLA 0.5 mm supported walls; SLS and MJF
 * 0.8 mm; CNC 1 mm in metal), default build volumes of a common machine of
 * each (Prusa MK4, Form 3, EOS P 396, HP Jet Fusion 5200, a 3-axis VMC).
 */
export const MANUFACTURABILITY_LIMITS: Readonly<Record<string, ManufacturabilityLimits>> = {
  fdm: { wallWarning: 0.8, wallBlocked: 0.4, defaultBuildVolume: { x: 250, y: 210, z: 220 }, overhang: true, enclosedCavities: false },
  sla: { wallWarning: 0.5, wallBlocked: 0.2, defaultBuildVolume: { x: 145, y: 145, z: 185 }, overhang: true, enclosedCavities: false },
  sls: { wallWarning: 0.8, wallBlocked: 0.5, defaultBuildVolume: { x: 340, y: 340, z: 600 }, overhang: false, enclosedCavities: true },
  mjf: { wallWarning: 0.8, wallBlocked: 0.5, defaultBuildVolume: { x: 380, y: 284, z: 380 }, overhang: false, enclosedCavities: true },
  "cnc-milling": {
    wallWarning: 1,
    wallBlocked: 0.5,
    defaultBuildVolume: { x: 600, y: 400, z: 400 },
    overhang: false,
    enclosedCavities: false,
    stockAllowance: 2
  }
}

/** Records by resource name. */
export const REFERENCE_DATA: ReadonlyArray<readonly [resource: string, records: ReadonlyArray<{ readonly id: string }>]> = [
  ["technology", TECHNOLOGIES],
  ["productionParameterField", FIELDS],
  ["quotationForm", QUOTATION_FORMS],
  ["currency", CURRENCIES],
  ["colour", COLOURS],
  ["service", SERVICES]
]

/** Writes the reference data (insert or update), leaving createdAt of existing records. */
export const writeReferenceData = Effect.gen(function*() {
  const epoch = "2026-11-01T00:00:00.000Z"
  const rows = REFERENCE_DATA.flatMap(([resource, records]) =>
    records.map((record) => ({ resource, id: record.id, data: JSON.stringify({ ...record, createdAt: epoch, updatedAt: epoch }) }))
  )
  yield* (yield* RecordRepository).writeReferenceData(rows, epoch)
})
