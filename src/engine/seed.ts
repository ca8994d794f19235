/**
 * Demo records for the README walkthrough. Idempotent: records are matched
 * by their external reference, so running it twice adds nothing.
 */
import { Effect } from "effect"
import { RecordRepository } from "./RecordRepository.ts"
import { DEFAULT_PAGE_SIZE } from "../domain/Resource.ts"

const DEMO_CUSTOMERS = [
  { name: "Acme Robotics", email: "purchasing@acme-robotics.example", company: "Acme Robotics GmbH", externalReference: "demo-acme", address: { city: "Munich", country: "DE" } },
  { name: "Northwind Drones", email: "parts@northwind.example", company: "Northwind Drones Ltd", externalReference: "demo-northwind", address: { city: "Leeds", country: "GB" } },
  { name: "Globex Medical", email: "supply@globex.example", company: "Globex Medical BV", externalReference: "demo-globex", address: { city: "Eindhoven", country: "NL" } }
] as const

export const seedDemoData = (appId: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const existing = yield* records.list("customer", appId, {
      equals: [{ field: "externalReference", values: DEMO_CUSTOMERS.map((c) => c.externalReference) }],
      dates: [],
      limit: DEFAULT_PAGE_SIZE,
      offset: 0
    })
    const present = new Set(existing.map((record) => record.externalReference))
    const added = yield* Effect.forEach(
      DEMO_CUSTOMERS.filter((customer) => !present.has(customer.externalReference)),
      (customer) => records.insert("customer", appId, customer)
    )
    return { appId, customers: { added: added.length, present: present.size } }
  }).pipe(Effect.provide(RecordRepository.layer))
