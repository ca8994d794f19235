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

/**
 * A layered build that nests parts side by side (SLA on its platform, SLS
 * and MJF in their chambers): every layer takes the same time, shared by the
 * parts whose footprints fill the build area.
 */
export interface NestedBuild {
  /** Platform or chamber footprint, mm². */
  readonly buildArea: number
  /** Layer height when the part's parameters give none, mm. */
  readonly layerHeight: number
  /** Recoat and exposure (SLA) or fusion (SLS, MJF) per layer, s. */
  readonly layerTime: number
  /** Share of the build area that parts' footprints fill when nested. */
  readonly packingShare: number
  /** Material beyond the part's own, as a share of it: SLA supports, powder not refreshed. */
  readonly wasteShare: number
  /** SLA: vat and platform preparation, washing and curing; SLS, MJF: unpacking and depowdering; per batch, s. */
  readonly setupTime: number
  /** SLA: orientation and supports; SLS, MJF: nesting; per batch, s. */
  readonly programmingTime: number
}

export const SLA: NestedBuild = {
  buildArea: 145 * 145,
  layerHeight: 0.05,
  layerTime: 9,
  packingShare: 0.6,
  wasteShare: 0.1,
  setupTime: 900,
  programmingTime: 600
}

export const SLS: NestedBuild = {
  buildArea: 340 * 340,
  layerHeight: 0.1,
  layerTime: 12,
  packingShare: 0.5,
  wasteShare: 0.3,
  setupTime: 1800,
  programmingTime: 300
}

export const MJF: NestedBuild = {
  buildArea: 380 * 284,
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
