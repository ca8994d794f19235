/**
 * Demo records for one app, for the README walkthrough: customers,
 * suppliers, users, materials, machine groups and machines with locations.
 * Idempotent: each record carries a fixed `externalReference`, so running it
 * twice adds nothing. Resources whose schema has no such field keep it in
 * storage only, as the seed's key; reads do not show it.
 */
import { Effect } from "effect"
import { DEFAULT_PAGE_SIZE } from "../domain/Resource.ts"
import { RecordRepository, type StoredRecord } from "./RecordRepository.ts"

const CUSTOMERS = [
  { name: "Acme Robotics", email: "purchasing@acme-robotics.example", company: "Acme Robotics GmbH", externalReference: "demo-acme", address: { city: "Munich", country: "DE" } },
  { name: "Northwind Drones", email: "parts@northwind.example", company: "Northwind Drones Ltd", externalReference: "demo-northwind", address: { city: "Leeds", country: "GB" } },
  { name: "Globex Medical", email: "supply@globex.example", company: "Globex Medical BV", externalReference: "demo-globex", address: { city: "Eindhoven", country: "NL" } }
]

const SUPPLIERS = [
  { externalReference: "demo-polymers", name: "Polymer Supply Co", email: "orders@polymers.example", website: "https://polymers.example" },
  { externalReference: "demo-metals", name: "Metal Stock AG", email: "sales@metalstock.example" }
]

const USERS = [
  { externalReference: "demo-sales", name: "Sam Sales", email: "sam@demo.example", role: "sales" },
  { externalReference: "demo-production", name: "Pat Production", email: "pat@demo.example", role: "production" }
]

const MATERIALS = [
  { externalReference: "demo-pla", name: "PLA", technologyId: "fdm", density: 1.24, pricePerKg: 25, colourIds: ["black", "white", "red"] },
  { externalReference: "demo-resin", name: "Standard resin", technologyId: "sla", density: 1.15, pricePerKg: 120, colourIds: ["grey"] },
  { externalReference: "demo-pa12-sls", name: "PA12", technologyId: "sls", density: 1.01, pricePerKg: 70, colourIds: ["white", "black"] },
  { externalReference: "demo-pa12-mjf", name: "PA12", technologyId: "mjf", density: 1.01, pricePerKg: 60, colourIds: ["grey", "black"] },
  { externalReference: "demo-alu", name: "Aluminium 6061", technologyId: "cnc-milling", density: 2.7, pricePerKg: 8, colourIds: ["natural"] }
]

const MACHINE_GROUPS = [
  { externalReference: "demo-fdm-farm", name: "FDM farm", technologyId: "fdm", hourlyRate: 6 },
  { externalReference: "demo-mjf-line", name: "MJF line", technologyId: "mjf", hourlyRate: 45 },
  { externalReference: "demo-cnc-cell", name: "CNC cell", technologyId: "cnc-milling", hourlyRate: 70 }
]

const MACHINES = [
  { externalReference: "demo-fdm-1", name: "Prusa XL #1", technologyId: "fdm", group: "demo-fdm-farm", location: { latitude: 48.1374, longitude: 11.5755 }, buildVolume: { x: 360, y: 360, z: 360 } },
  { externalReference: "demo-fdm-2", name: "Prusa XL #2", technologyId: "fdm", group: "demo-fdm-farm", location: { latitude: 52.52, longitude: 13.405 }, buildVolume: { x: 360, y: 360, z: 360 } },
  { externalReference: "demo-mjf-1", name: "HP 5200", technologyId: "mjf", group: "demo-mjf-line", location: { latitude: 51.4416, longitude: 5.4697 }, buildVolume: { x: 380, y: 284, z: 380 } },
  { externalReference: "demo-cnc-1", name: "DMG Mori CMX 50", technologyId: "cnc-milling", group: "demo-cnc-cell", location: { latitude: 48.7758, longitude: 9.1829 }, buildVolume: { x: 500, y: 450, z: 400 } }
]

export const seedDemoData = (appId: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository

    /** Inserts the records whose external reference the app does not have yet; answers all, by reference. */
    const ensure = Effect.fnUntraced(function*(resource: string, wanted: ReadonlyArray<StoredRecord & { externalReference: string }>) {
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
        byReference.set(record.externalReference, yield* records.insert(resource, appId, record))
        added++
      }
      return { byReference, added }
    })

    const customers = yield* ensure("customer", CUSTOMERS)
    const suppliers = yield* ensure("supplier", SUPPLIERS)
    const users = yield* ensure("user", USERS)
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
    const summary = { customers, suppliers, users, materials, machineGroups: groups, machines }
    return {
      appId,
      added: Object.fromEntries(Object.entries(summary).map(([name, result]) => [name, result.added])),
      present: Object.fromEntries(Object.entries(summary).map(([name, result]) => [name, result.byReference.size]))
    }
  }).pipe(Effect.provide(RecordRepository.layer))
