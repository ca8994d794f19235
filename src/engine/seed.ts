/**
 * Demo records for one app, for the README walkthrough: customers and an
 * open project for two of them,
 * suppliers, users, material series and their materials, machine groups and
 * machines with locations,
 * reel groups with reels loaded on the FDM printers, and a catalogue whose
 * models are analysed here (their files are generated, so the demo needs no
 * download: parts made from them are priced at once).
 * Idempotent: each record carries a fixed `externalReference`, so running it
 * twice adds nothing. Resources whose schema has no such field keep it in
 * storage only, as the seed's key; reads do not show it.
 */
import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { appOfDataSpace, modeOfDataSpace } from "../domain/Grants.ts"
import { DEFAULT_PAGE_SIZE } from "../domain/Resource.ts"
import { Project } from "../domain/resources/orders.ts"
import type { Mesh } from "./geometry/mesh.ts"
import { analyseModelSync } from "./geometry/model.ts"
import { binaryStl, box, cubeWithHole, sphere } from "./geometry/writers.ts"
import { nextReelGroupId, REEL_GROUP } from "./production/reels.ts"
import { RecordRepository, type StoredRecord } from "./RecordRepository.ts"

const CUSTOMERS = [
  {
    name: "Acme Robotics",
    email: "purchasing@acme-robotics.example",
    company: "Acme Robotics GmbH",
    externalReference: "demo-acme",
    address: { city: "Munich", country: "DE" }
  },
  {
    name: "Northwind Drones",
    email: "parts@northwind.example",
    company: "Northwind Drones Ltd",
    externalReference: "demo-northwind",
    address: { city: "Leeds", country: "GB" }
  },
  {
    name: "Globex Medical",
    email: "supply@globex.example",
    company: "Globex Medical BV",
    externalReference: "demo-globex",
    address: { city: "Eindhoven", country: "NL" }
  }
]

/** An open order per demo customer, so that an agent can quote into it without creating one (no MCP tool creates projects). */
const PROJECTS = [
  { externalReference: "demo-acme-retrofit", customer: "demo-acme", name: "Gripper retrofit" },
  { externalReference: "demo-northwind-spares", customer: "demo-northwind", name: "Airframe spares" }
]

const SUPPLIERS = [
  { externalReference: "demo-polymers", name: "Polymer Supply Co", email: "orders@polymers.example", website: "https://polymers.example" },
  { externalReference: "demo-metals", name: "Metal Stock AG", email: "sales@metalstock.example" }
]

const USERS = [
  { externalReference: "demo-sales", name: "Sam Sales", email: "sam@demo.example", role: "sales" },
  { externalReference: "demo-production", name: "Pat Production", email: "pat@demo.example", role: "production" }
]

/** Material series under fixed ids, as `PUT /material-series/{id}` creates them. */
const MATERIAL_SERIES = [
  { id: "demo-filaments", technologyId: "fdm", name: "Filaments", description: "FDM filaments on 1 kg reels" },
  { id: "demo-resins", technologyId: "sla", name: "Photopolymer resins" },
  { id: "demo-sls-powders", technologyId: "sls", name: "SLS powders" },
  { id: "demo-mjf-powders", technologyId: "mjf", name: "MJF powders" },
  { id: "demo-aluminium", technologyId: "cnc-milling", name: "Aluminium alloys", description: "Bar and plate stock" }
]

const MATERIALS = [
  {
    externalReference: "demo-pla",
    name: "PLA",
    technologyId: "fdm",
    materialSeriesId: "demo-filaments",
    density: 1.24,
    pricePerKg: 25,
    colourIds: ["black", "white", "red"]
  },
  {
    externalReference: "demo-resin",
    name: "Standard resin",
    technologyId: "sla",
    materialSeriesId: "demo-resins",
    density: 1.15,
    pricePerKg: 120,
    colourIds: ["grey"]
  },
  {
    externalReference: "demo-pa12-sls",
    name: "PA12",
    technologyId: "sls",
    materialSeriesId: "demo-sls-powders",
    density: 1.01,
    pricePerKg: 70,
    colourIds: ["white", "black"]
  },
  {
    externalReference: "demo-pa12-mjf",
    name: "PA12",
    technologyId: "mjf",
    materialSeriesId: "demo-mjf-powders",
    density: 1.01,
    pricePerKg: 60,
    colourIds: ["grey", "black"]
  },
  {
    externalReference: "demo-alu",
    name: "Aluminium 6061",
    technologyId: "cnc-milling",
    materialSeriesId: "demo-aluminium",
    density: 2.7,
    pricePerKg: 8,
    colourIds: ["natural"]
  }
]

const MACHINE_GROUPS = [
  { externalReference: "demo-fdm-farm", name: "FDM farm", technologyId: "fdm", hourlyRate: 6 },
  { externalReference: "demo-mjf-line", name: "MJF line", technologyId: "mjf", hourlyRate: 45 },
  { externalReference: "demo-cnc-cell", name: "CNC cell", technologyId: "cnc-milling", hourlyRate: 70 }
]

const MACHINES = [
  {
    externalReference: "demo-fdm-1",
    name: "Prusa XL #1",
    technologyId: "fdm",
    group: "demo-fdm-farm",
    location: { latitude: 48.1374, longitude: 11.5755 },
    buildVolume: { x: 360, y: 360, z: 360 }
  },
  {
    externalReference: "demo-fdm-2",
    name: "Prusa XL #2",
    technologyId: "fdm",
    group: "demo-fdm-farm",
    location: { latitude: 52.52, longitude: 13.405 },
    buildVolume: { x: 360, y: 360, z: 360 }
  },
  {
    externalReference: "demo-mjf-1",
    name: "HP 5200",
    technologyId: "mjf",
    group: "demo-mjf-line",
    location: { latitude: 51.4416, longitude: 5.4697 },
    buildVolume: { x: 380, y: 284, z: 380 }
  },
  {
    externalReference: "demo-cnc-1",
    name: "DMG Mori CMX 50",
    technologyId: "cnc-milling",
    group: "demo-cnc-cell",
    location: { latitude: 48.7758, longitude: 9.1829 },
    buildVolume: { x: 500, y: 450, z: 400 }
  }
]

const REEL_GROUPS = [
  {
    externalReference: "demo-pla-black",
    inventoryProductName: "PLA black 1 kg",
    material: "demo-pla",
    colourId: "black",
    reelWeight: 1000,
    supplier: "demo-polymers"
  },
  {
    externalReference: "demo-pla-white",
    inventoryProductName: "PLA white 1 kg",
    material: "demo-pla",
    colourId: "white",
    reelWeight: 1000,
    supplier: "demo-polymers"
  }
]

/** Reels by group; the first of each group is loaded on a printer. */
const REELS = [
  { externalReference: "demo-reel-1", group: "demo-pla-black", remainingWeight: 820, lotNumber: "LOT-2026-11-A", machine: "demo-fdm-1" },
  { externalReference: "demo-reel-2", group: "demo-pla-black", remainingWeight: 1000, lotNumber: "LOT-2026-11-A", machine: undefined },
  { externalReference: "demo-reel-3", group: "demo-pla-white", remainingWeight: 430, lotNumber: "LOT-2026-10-C", machine: "demo-fdm-2" }
]

const CATALOGUES = [{ externalReference: "demo-catalogue", name: "Demo spare parts", description: "Generated models, analysed by the seed" }]

/** Catalogue models: a generated mesh, a file name on a placeholder host (never downloaded), and configurations with fixed ids. */
const CATALOGUE_MODELS: ReadonlyArray<{
  readonly externalReference: string
  readonly name: string
  readonly fileName: string
  readonly mesh: () => Mesh
  readonly configurations: ReadonlyArray<
    {
      readonly id: string
      readonly name: string
      readonly technologyId: string
      readonly material: string
      readonly productionParameterIds?: Readonly<Record<string, string>>
    }
  >
}> = [
  {
    externalReference: "demo-bearing-block",
    name: "Bearing block",
    fileName: "bearing-block.stl",
    mesh: () => cubeWithHole(40, 16),
    configurations: [
      {
        id: "demo-bearing-block-fdm",
        name: "Bearing block, PLA",
        technologyId: "fdm",
        material: "demo-pla",
        productionParameterIds: { layerHeight: "fdm-lh-0.2", infill: "fdm-infill-60" }
      },
      {
        id: "demo-bearing-block-cnc",
        name: "Bearing block, aluminium",
        technologyId: "cnc-milling",
        material: "demo-alu",
        productionParameterIds: { tolerance: "cnc-tol-0.05" }
      }
    ]
  },
  {
    externalReference: "demo-spacer",
    name: "Spacer plate",
    fileName: "spacer-plate.stl",
    mesh: () => box(60, 30, 4),
    configurations: [
      {
        id: "demo-spacer-mjf",
        name: "Spacer plate, PA12",
        technologyId: "mjf",
        material: "demo-pa12-mjf",
        productionParameterIds: { surfaceFinish: "mjf-finish-dyed" }
      }
    ]
  },
  {
    externalReference: "demo-knob",
    name: "Knob",
    fileName: "knob.stl",
    mesh: () => sphere(15, 48, 24),
    configurations: [
      {
        id: "demo-knob-sla",
        name: "Knob, resin",
        technologyId: "sla",
        material: "demo-resin",
        productionParameterIds: { surfaceFinish: "sla-finish-polished" }
      }
    ]
  }
]

/** Seeds the data space `appId` names: an app's live data, or its test data (`dataSpaceOf(app, "test")`). */
export const seedDemoData = (appId: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository

    /** Inserts the records whose external reference the app does not have yet; answers all, by reference. */
    const ensure = Effect.fnUntraced(function*(
      resource: string,
      wanted: ReadonlyArray<StoredRecord & { externalReference: string }>,
      newId?: () => Effect.Effect<string, SqlError, RecordRepository>,
      numberPrefix?: string
    ) {
      const existing = yield* records.list(resource, appId, {
        equals: [{ field: "externalReference", values: wanted.map((record) => record.externalReference) }],
        dates: [],
        limit: DEFAULT_PAGE_SIZE,
        offset: 0
      })
      const byReference = new Map(existing.map((record) => [String(record.externalReference), record]))
      let added = 0
      for (const record of wanted) {
        if (byReference.has(record.externalReference)) continue
        const options = { ...(newId === undefined ? {} : { id: yield* newId() }), ...(numberPrefix === undefined ? {} : { numberPrefix }) }
        byReference.set(record.externalReference, yield* records.insert(resource, appId, record, options))
        added++
      }
      return { byReference, added }
    })

    const customers = yield* ensure("customer", CUSTOMERS)
    const projects = yield* ensure(
      "project",
      PROJECTS.map(({ customer, ...project }) => ({ ...project, customerId: String(customers.byReference.get(customer)!.id) })),
      undefined,
      Project.storage.numberPrefix
    )
    const suppliers = yield* ensure("supplier", SUPPLIERS)
    const users = yield* ensure("user", USERS)
    // Series are keyed by their fixed ids (a replace keeps an id; a series deleted is made again).
    let seriesAdded = 0
    for (const { id, ...series } of MATERIAL_SERIES) {
      if ((yield* records.find("materialSeries", appId, id)) !== undefined) continue
      yield* records.insert("materialSeries", appId, series, { id })
      seriesAdded++
    }
    const materialSeries = { byReference: new Map(MATERIAL_SERIES.map((series) => [series.id, series])), added: seriesAdded }
    const materials = yield* ensure("material", MATERIALS)
    const groups = yield* ensure("machineGroup", MACHINE_GROUPS)
    const machines = yield* ensure(
      "machine",
      MACHINES.map(({ group, ...machine }) => ({
        ...machine,
        machineGroupId: String(groups.byReference.get(group)!.id),
        reelIds: []
      }))
    )
    const idOf = (found: { byReference: Map<string, StoredRecord> }, reference: string | undefined) =>
      reference === undefined ? null : String(found.byReference.get(reference)!.id)

    // Reel groups have numeric ids counted per app, as POST /reel-group gives them.
    const reelGroups = yield* ensure(
      REEL_GROUP,
      REEL_GROUPS.map(({ material, supplier, ...group }) => ({
        ...group,
        materialId: idOf(materials, material),
        supplierId: idOf(suppliers, supplier)
      })),
      () => nextReelGroupId(appId)
    )
    const reels = yield* ensure(
      "reel",
      REELS.map(({ group, machine, ...reel }) => ({
        ...reel,
        reelGroupId: Number(idOf(reelGroups, group)),
        machineId: idOf(machines, machine)
      }))
    )
    // A machine lists the reels it holds.
    for (const machine of machines.byReference.values()) {
      const held = [...reels.byReference.values()].filter((reel) => reel.machineId === machine.id).map((reel) => String(reel.id))
      if (held.length > 0 && held.some((id) => !(machine.reelIds as Array<string>).includes(id))) {
        yield* records.replace("machine", appId, String(machine.id), { ...machine, reelIds: held })
      }
    }

    const catalogues = yield* ensure("catalogue", CATALOGUES)
    const catalogueModels = yield* ensure(
      "catalogueModel",
      CATALOGUE_MODELS.map(({ configurations, fileName, mesh, ...model }) => ({
        ...model,
        catalogueId: idOf(catalogues, "demo-catalogue"),
        modelEndpoint: { url: `https://models.example/demo/${fileName}` },
        configurations: configurations.map(({ material, ...configuration }) => ({
          ...configuration,
          materialId: idOf(materials, material)
        })),
        geometry: analyseModelSync(binaryStl(mesh()), fileName)
      }))
    )

    const summary = {
      customers,
      projects,
      suppliers,
      users,
      materialSeries,
      materials,
      machineGroups: groups,
      machines,
      reelGroups,
      reels,
      catalogues,
      catalogueModels
    }
    return {
      appId: appOfDataSpace(appId),
      mode: modeOfDataSpace(appId),
      added: Object.fromEntries(Object.entries(summary).map(([name, result]) => [name, result.added])),
      present: Object.fromEntries(Object.entries(summary).map(([name, result]) => [name, result.byReference.size]))
    }
  }).pipe(Effect.provide(RecordRepository.layer))
