/**
 * The constants of the price calculation, per technology: machine
 * behaviour (flow, layer times, build chambers, removal rates), batch times
 * and default hourly rates. Every number here is explained in
 * docs/pricing.md; change both together.
 */

/** Hourly rate of a technology's machines when the app has none with a rate (per hour, in the app's currency). */
export const DEFAULT_MACHINE_RATES: Readonly<Record<string, number>> = {
  fdm: 4,
  sla: 12,
  sls: 40,
  mjf: 45,
  "cnc-milling": 70
}

/** Hourly rate of programming (slicing, support generation, nesting, CAM): an engineer's time, not a machine's. */
export const ENGINEERING_RATE = 60
/** Hourly rate of post-processing setup: a technician's time. */
export const LABOUR_RATE = 35

export const FDM = {
  /** Extrusion line width, mm. */
  lineWidth: 0.45,
  /** Print speed along the line, mm/s: volumetric flow = layer height × line width × speed. */
  printSpeed: 60,
  /** Travel, retraction and layer change per layer, s. */
  layerOverhead: 3,
  /** Bed preparation, filament load and first-layer check per batch, s. */
  setupTime: 600,
  /** Slicing and checking per batch, s. */
  programmingTime: 300
} as const

export const SLA = {
  /** Peel, recoat and exposure per layer, s. */
  layerTime: 9,
  /** Usable build platform, mm² (145 × 145). */
  platformArea: 145 * 145,
  /** Share of the platform that parts' footprints can fill. */
  packingShare: 0.6,
  /** Supports and rafts, as a share of the part's own resin. */
  supportShare: 0.1,
  /** Vat and platform preparation, washing and curing per batch, s. */
  setupTime: 900,
  /** Orientation and support generation per batch, s. */
  programmingTime: 600
} as const

/** Powder bed fusion (SLS, MJF): parts are nested in the build chamber. */
export interface PowderBed {
  /** Chamber footprint, mm². */
  readonly chamberArea: number
  /** Layer height when the part's parameters give none, mm. */
  readonly layerHeight: number
  /** Recoat and fusion per layer, s. */
  readonly layerTime: number
  /** Share of the chamber footprint that parts' footprints fill when nested. */
  readonly packingShare: number
  /** Powder that is not reused (refresh), as a share of the part's own material. */
  readonly wasteShare: number
  /** Unpacking and depowdering per batch, s. */
  readonly setupTime: number
  /** Nesting per batch, s. */
  readonly programmingTime: number
}

export const SLS: PowderBed = {
  chamberArea: 340 * 340,
  layerHeight: 0.1,
  layerTime: 12,
  packingShare: 0.5,
  wasteShare: 0.3,
  setupTime: 1800,
  programmingTime: 300
}

export const MJF: PowderBed = {
  chamberArea: 380 * 284,
  layerHeight: 0.08,
  layerTime: 7,
  packingShare: 0.5,
  wasteShare: 0.2,
  setupTime: 1200,
  programmingTime: 300
}

export const CNC = {
  /** Stock allowance on every side of the bounding box, mm. */
  stockAllowance: 3,
  /** Roughing removal rate in a material of density 2.7 g/cm³ (aluminium), mm³/s; it scales with 2.7 / density. */
  removalRate: 333,
  referenceDensity: 2.7,
  /** Finishing passes at ±0.1 mm, as machined, mm²/s. */
  finishingRate: 15,
  /** Fixturing and zeroing per batch, s, plus per feature. */
  setupBase: 1200,
  setupPerFeature: 120,
  /** CAM programming per batch, s, plus per feature. */
  programmingBase: 1800,
  programmingPerFeature: 600
} as const
