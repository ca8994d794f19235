/**
 * The price calculation (docs/pricing.md) on parts whose figures can be
 * worked out by hand: a 20 mm cube and a 2×3×4 cm box; and money without
 * drift: unit price × quantity = total price, exactly, whatever the part.
 */
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { calculatePrice, cncFeatureCount, type PricingInput } from "../../src/engine/pricing/calculate.ts"
import { fromBase, isWholeMinor, sum, times, toBase, toMinor, unitAndTotal } from "../../src/engine/pricing/money.ts"

const cube = { volume: 8000, surfaceArea: 2400, boundingBox: { x: 20, y: 20, z: 20 } }
const boxPart = { volume: 24_000, surfaceArea: 5200, boundingBox: { x: 20, y: 30, z: 40 } }

const input = (overrides: Partial<PricingInput>): PricingInput => ({
  technologyId: "fdm",
  geometry: cube,
  material: { density: 1.24, pricePerKg: 25 },
  parameters: undefined,
  machineRate: 4,
  services: [],
  quantity: 1,
  ...overrides
})

const priced = (overrides: Partial<PricingInput>) => {
  const result = calculatePrice(input(overrides))
  assert.isDefined(result)
  return result!
}

const near = (actual: number, expected: number, what: string, tolerance = 0.051) =>
  assert.isAtMost(Math.abs(actual - expected), tolerance, `${what}: ${actual} vs ${expected}`)

describe("price calculation", () => {
  it("FDM: shells and infill at the volumetric flow, a per-layer overhead, setup amortised over the quantity", () => {
    // Shell 2400 mm² × 2 walls × 0.45 mm = 2160 mm³; infill 30 % of the other 5840 mm³ = 1752 mm³.
    const extruded = 2160 + 1752
    // Flow 0.2 mm × 0.45 mm × 60 mm/s = 5.4 mm³/s; 100 layers × 3 s.
    const cycle = extruded / 5.4 + 100 * 3
    const one = priced({})
    assert.deepStrictEqual(one.productionTimes.services, [
      { serviceId: "fdm", cycleTime: Math.round(cycle * 10) / 10, programmingTime: 300, setupTime: 600 }
    ])
    assert.strictEqual(one.productionTimes.cycleTime, Math.round(cycle * 10) / 10)
    const perPart = (extruded / 1000) * 1.24 / 1000 * 25 + (cycle / 3600) * 4
    const perBatch = (600 / 3600) * 4 + (300 / 3600) * 60
    near(one.totalPrice, perPart + perBatch, "total of 1", 0.006)
    const ten = priced({ quantity: 10 })
    // The unit price is the cost of ten over ten, rounded to the cent; the total is exactly ten of them.
    near(ten.unitPrice, (10 * perPart + perBatch) / 10, "unit of 10", 0.006)
    assert.strictEqual(toMinor(ten.totalPrice, 2), toMinor(ten.unitPrice, 2) * 10)
    near(ten.totalPrice, 10 * perPart + perBatch, "total of 10", 10 * 0.006)
    assert.isBelow(ten.unitPrice, one.unitPrice, "setup is amortised")
    assert.deepStrictEqual(ten.productionTimes, one.productionTimes, "times are per part and per batch, not per quantity")
  })

  it("the worked example of docs/pricing.md: one 6.93; ten 1.83 each, 18.30; a hundred 1.32 each, 132.00", () => {
    assert.deepStrictEqual([priced({}).unitPrice, priced({}).totalPrice], [6.93, 6.93])
    assert.deepStrictEqual([priced({ quantity: 10 }).unitPrice, priced({ quantity: 10 }).totalPrice], [1.83, 18.3])
    assert.deepStrictEqual([priced({ quantity: 100 }).unitPrice, priced({ quantity: 100 }).totalPrice], [1.32, 132])
  })

  it("FDM: the production parameters change times and material", () => {
    const standard = priced({})
    const fine = priced({ parameters: { layerHeight: "fdm-lh-0.1" } })
    const solid = priced({ parameters: { infill: "fdm-infill-100" } })
    assert.isAbove(fine.productionTimes.cycleTime, standard.productionTimes.cycleTime * 1.9)
    assert.isAbove(solid.productionTimes.cycleTime, standard.productionTimes.cycleTime)
    assert.isAbove(solid.totalPrice, standard.totalPrice)
    // The default value of a field is used when the part chooses none.
    assert.deepStrictEqual(priced({ parameters: { layerHeight: "fdm-lh-0.2", infill: "fdm-infill-30" } }), standard)
  })

  it("SLA: layer count of the height, shared with the parts nested on the platform; polishing per cm²", () => {
    const sla = priced({ technologyId: "sla", material: { density: 1.15, pricePerKg: 120 }, machineRate: 12 })
    // 20 mm at 50 µm = 400 layers × 9 s × (400 mm² of 145² × 0.6).
    near(sla.productionTimes.cycleTime, 400 * 9 * (400 / (145 * 145 * 0.6)), "cycle")
    const polished = priced({ technologyId: "sla", parameters: { surfaceFinish: "sla-finish-polished" } })
    near(polished.productionTimes.cycleTime - sla.productionTimes.cycleTime, 3 * 24, "polishing 24 cm² at 3 s/cm²")
  })

  it("SLS and MJF: build height and packing share of the chamber", () => {
    const sls = priced({ technologyId: "sls", material: { density: 1.01, pricePerKg: 70 }, machineRate: 40 })
    near(sls.productionTimes.cycleTime, 200 * 12 * (400 / (340 * 340 * 0.5)), "SLS cycle")
    const mjf = priced({ technologyId: "mjf", material: { density: 1.01, pricePerKg: 60 }, machineRate: 45 })
    near(mjf.productionTimes.cycleTime, 250 * 7 * (400 / (380 * 284 * 0.5)), "MJF cycle")
    const taller = priced({ technologyId: "mjf", geometry: { ...cube, boundingBox: { x: 20, y: 20, z: 40 } } })
    assert.isAbove(taller.productionTimes.cycleTime, mjf.productionTimes.cycleTime * 1.9, "twice the build height")
  })

  it("CNC: removed volume over the removal rate, finishing over the surface, setup and programming per feature", () => {
    assert.strictEqual(cncFeatureCount(cube), 6)
    assert.isAbove(cncFeatureCount({ ...cube, surfaceArea: 3000 }), 6)
    const cnc = priced({ technologyId: "cnc-milling", geometry: boxPart, material: { density: 2.7, pricePerKg: 8 }, machineRate: 70 })
    const removed = 26 * 36 * 46 - 24_000
    near(cnc.productionTimes.cycleTime, removed / 333 + 5200 / 15, "cycle")
    assert.strictEqual(cnc.productionTimes.setupTime, 1200 + 120 * 6)
    assert.strictEqual(cnc.productionTimes.programmingTime, 1800 + 600 * 6)
    const tight = priced({
      technologyId: "cnc-milling",
      geometry: boxPart,
      material: { density: 2.7, pricePerKg: 8 },
      parameters: { tolerance: "cnc-tol-0.01" }
    })
    near(tight.productionTimes.cycleTime - cnc.productionTimes.cycleTime, 2 * 5200 / 15, "finishing three times as slow")
    const steel = priced({ technologyId: "cnc-milling", geometry: boxPart, material: { density: 7.85, pricePerKg: 3 } })
    assert.isAbove(steel.productionTimes.cycleTime, cnc.productionTimes.cycleTime, "denser stock is removed more slowly")
  })

  it("post-processing services: one entry each, per-area cycle, setup per batch, per-part and per-area price", () => {
    const sanding = { id: "sanding", pricePerPart: 4, pricePerSquareCentimetre: 0.05, setupTime: 300, cycleTimePerSquareCentimetre: 6 }
    const bare = priced({})
    const sanded = priced({ services: [sanding], quantity: 2 })
    assert.deepStrictEqual(sanded.productionTimes.services[1], { serviceId: "sanding", cycleTime: 144, programmingTime: 0, setupTime: 300 })
    assert.strictEqual(sanded.productionTimes.setupTime, 900)
    near(sanded.productionTimes.cycleTime, bare.productionTimes.cycleTime + 144, "cycle sums the services", 0.11)
    const bareTwo = priced({ quantity: 2 })
    near(sanded.totalPrice - bareTwo.totalPrice, 2 * (4 + 0.05 * 24) + (300 / 3600) * 35, "service price", 0.011)
  })

  it("a technology without a model has no price", () => {
    assert.isUndefined(calculatePrice(input({ technologyId: "waterjet" })))
  })
  it("unit price × quantity is the total price, to the cent, for any part and quantity", () => {
    const side = fc.double({ min: 1, max: 200, noNaN: true })
    fc.assert(
      fc.property(
        side,
        side,
        side,
        fc.integer({ min: 1, max: 10_000 }),
        fc.constantFrom("fdm", "sla", "sls", "mjf", "cnc-milling"),
        (x, y, z, quantity, technologyId) => {
          const geometry = { volume: x * y * z * 0.6, surfaceArea: 2 * (x * y + y * z + z * x), boundingBox: { x, y, z } }
          const result = priced({ technologyId, geometry, quantity })
          assert.isTrue(isWholeMinor(result.unitPrice, 2), `unit ${result.unitPrice}`)
          assert.strictEqual(toMinor(result.totalPrice, 2), toMinor(result.unitPrice, 2) * quantity)
        }
      )
    )
  })
})

describe("money in minor units", () => {
  it("rounds half up to the minor unit as the decimal reads, and knows a whole number of minor units", () => {
    assert.strictEqual(toMinor(1.005, 2), 101)
    assert.strictEqual(toMinor(1.885, 2), 189)
    assert.strictEqual(toMinor(162.5, 0), 163)
    assert.isTrue(isWholeMinor(1.1, 2))
    assert.isTrue(isWholeMinor(18.3, 2))
    assert.isFalse(isWholeMinor(1.005, 2))
    assert.isFalse(isWholeMinor(0.5, 0))
  })

  it("the issue's case: 1.89 × 100 is 189.00, never 188.87", () => {
    assert.strictEqual(times(1.89, 100, 2), 189)
    // A batch costing 188.87 for 100 parts: 1.89 each, so 189.00 for the hundred.
    assert.deepStrictEqual(unitAndTotal(188.87, 100, 2), { unitPrice: 1.89, totalPrice: 189 })
  })

  it("sums exactly where floating point would drift", () => {
    assert.strictEqual(0.1 + 0.2, 0.30000000000000004)
    assert.strictEqual(sum([0.1, 0.2], 2), 0.3)
    assert.strictEqual(sum(Array.from({ length: 1000 }, () => 0.07), 2), 70)
  })

  it("converts from and to the base currency at a rate, rounded to each currency's minor unit", () => {
    assert.strictEqual(fromBase(1.89, 1.08, 2), 2.04)
    assert.strictEqual(fromBase(1.89, 162, 0), 306)
    assert.strictEqual(toBase(204, 1.08), 188.89)
    assert.strictEqual(toBase(306, 162), 1.89)
  })
})
