/**
 * The reference data through HTTP: global technologies, parameter fields,
 * forms, currencies, colours and services readable by a new app at once;
 * the app's own materials, series, regions, blanks, suppliers and users; the
 * app settings. One happy path per operation, with the spec's conventions.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  AppGroup,
  BlankGroup,
  ColourGroup,
  CurrencyGroup,
  MaterialGroup,
  MaterialSeriesGroup,
  ProductionParameterFieldGroup,
  QuotationFormGroup,
  QuotationFormRegionGroup,
  ServiceGroup,
  SupplierGroup,
  TechnologyGroup,
  UserGroup
} from "../../src/contract/groups/reference.ts"
import { GLOBAL_APP, RecordRepository, type StoredRecord } from "../../src/engine/RecordRepository.ts"
import { backends } from "../support/backends.ts"
import { coverage, ok } from "../support/http.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

/** Inserts a record straight into the engine's store (resources without a create endpoint). */
const insert = (resource: string, appId: string, data: StoredRecord, id?: string) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    return yield* records.insert(resource, appId, data, { id })
  }).pipe(Effect.provide(RecordRepository.layer))

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Reference data over HTTP (${backend})`, (it) => {
    const covered = coverage(
      [
        AppGroup,
        BlankGroup,
        ColourGroup,
        CurrencyGroup,
        MaterialGroup,
        MaterialSeriesGroup,
        ProductionParameterFieldGroup,
        QuotationFormGroup,
        QuotationFormRegionGroup,
        ServiceGroup,
        SupplierGroup,
        TechnologyGroup,
        UserGroup
      ],
      // An app's own exchange rate is tested by exchange-rates.test.ts.
      ["currency.setExchangeRate"]
    )
    const setup = Effect.gen(function*() {
      const client = yield* TestClient
      const appId = `reference-${Math.random().toString(36).slice(2)}`
      const { value } = yield* client.createSecret(appId)
      const call = (method: string, path: string, body?: unknown) =>
        client.call(method, `/v1${path}`, { secret: value, body }).pipe(Effect.tap((reply) => Effect.sync(() => covered.record(method, `/v1${path}`, reply))))
      return { appId, call }
    })

    it.effect("answers the app settings of the caller's app", () =>
      Effect.gen(function*() {
        const { appId, call } = yield* setup
        assert.deepStrictEqual(ok(yield* call("GET", "/app"), "app.get"), {
          id: appId,
          name: appId,
          defaultCurrency: "EUR",
          measurementUnit: "mm",
          timeZone: "UTC",
          mode: "live"
        })
      }))

    it.effect("reads the global reference data from the first call (list and get of each)", () =>
      Effect.gen(function*() {
        const { call } = yield* setup
        const table: ReadonlyArray<readonly [path: string, id: string, check: (record: any) => void]> = [
          ["/technology", "fdm", (r) => assert.strictEqual(r.name, "FDM")],
          ["/currency", "EUR", (r) => assert.strictEqual(r.code, "EUR")],
          ["/colour", "black", (r) => assert.strictEqual(r.hex, "#000000")],
          ["/service", "sanding", (r) => assert.include(r.technologyIds, "fdm")],
          ["/quotation-form", "form-fdm", (r) => assert.include(r.parameterFieldIds, "fdm-layerHeight")]
        ]
        for (const [path, id, check] of table) {
          const listed = ok(yield* call("GET", path), `${path} list`) as Array<{ id: string }>
          assert.isTrue(listed.some((record) => record.id === id), `${path} lists ${id}`)
          const record = ok(yield* call("GET", `${path}/${id}`), `${path} get`)
          assert.strictEqual(record.id, id)
          check(record)
          const missing = yield* call("GET", `${path}/no-such-id`)
          assert.strictEqual(missing.status, 200)
          assert.strictEqual(missing.text, "", `${path}: a missing id is an empty 200`)
        }
        const names = (ok(yield* call("GET", "/technology"), "technologies") as Array<{ name: string }>).map((t) => t.name)
        for (const name of ["FDM", "SLA", "SLS", "MJF", "CNC milling"]) assert.include(names, name)
        const forms = ok(yield* call("GET", "/quotation-form?technologyId=sla"), "forms by technology") as Array<{ technologyId: string }>
        assert.deepStrictEqual(forms.map((form) => form.technologyId), ["sla"])
      }))

    it.effect("lists the production parameter fields of a technology with their values", () =>
      Effect.gen(function*() {
        const { call } = yield* setup
        const fields = ok(yield* call("GET", "/production-parameter-field?technologyId=fdm"), "fields") as Array<any>
        assert.deepStrictEqual(fields.map((field) => field.name).sort(), ["infill", "layerHeight", "walls"])
        for (const field of fields) {
          assert.strictEqual(field.technologyId, "fdm")
          assert.isAbove(field.values.length, 0)
          for (const value of field.values) assert.hasAllKeys(value, ["id", "label"])
        }
        const layerHeight = fields.find((field) => field.name === "layerHeight")
        assert.strictEqual(layerHeight.id, "fdm-layerHeight")
        assert.include(layerHeight.values.map((value: { id: string }) => value.id), "fdm-lh-0.2")
        const none = ok(yield* call("GET", "/production-parameter-field?technologyId=nope"), "unknown technology")
        assert.deepStrictEqual(none, [])
      }))

    it.effect("creates, reads, replaces and deletes a material", () =>
      Effect.gen(function*() {
        const { call } = yield* setup
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material.create")
        assert.strictEqual(material.name, "PLA")
        assert.deepStrictEqual(ok(yield* call("GET", `/material/${material.id}`), "material.get"), material)
        assert.deepStrictEqual(ok(yield* call("GET", "/material?technologyId=fdm"), "material.list"), [material])
        const replaced = ok(yield* call("PUT", `/material/${material.id}`, { name: "PLA+", technologyId: "fdm", colourIds: ["black"] }), "material.replace")
        assert.strictEqual(replaced.name, "PLA+")
        assert.strictEqual(replaced.createdAt, material.createdAt)
        assert.strictEqual(ok(yield* call("DELETE", `/material/${material.id}`), "material.remove").id, material.id)
        assert.strictEqual((yield* call("GET", `/material/${material.id}`)).text, "")

        const badTechnology = yield* call("POST", "/material", { name: "X", technologyId: "laser-cutting" })
        assert.strictEqual(badTechnology.status, 422)
        assert.include(badTechnology.json().message, "technologyId")
        assert.strictEqual(badTechnology.headers.get("x-error-source"), "engine")
      }))

    it.effect("reads, replaces and deletes the app's material series; a global one is a 404; a PUT to a new id creates one (201)", () =>
      Effect.gen(function*() {
        const { appId, call } = yield* setup
        const own = yield* insert("materialSeries", appId, { technologyId: "fdm", name: "Standard filaments" })
        const global = yield* insert("materialSeries", GLOBAL_APP, { technologyId: "sla", name: `Resins ${appId}` })

        const listed = ok(yield* call("GET", `/material-series?ids=${own.id}&ids=${global.id}`), "materialSeries.list") as Array<{ id: string }>
        assert.deepStrictEqual(listed.map((r) => r.id).sort(), [own.id, global.id].sort() as Array<string>)
        assert.strictEqual(ok(yield* call("GET", `/material-series/${global.id}`), "materialSeries.get global").name, `Resins ${appId}`)
        assert.strictEqual(ok(yield* call("GET", `/material-series/${own.id}`), "materialSeries.get").name, "Standard filaments")

        const body = { technologyId: "fdm", name: "Engineering filaments" }
        const replaced = ok(yield* call("PUT", `/material-series/${own.id}`, body), "materialSeries.replace")
        assert.strictEqual(replaced.name, "Engineering filaments")
        const put = yield* call("PUT", `/material-series/${global.id}`, body)
        assert.strictEqual(put.status, 404, "replace the global one")
        assert.strictEqual(put.headers.get("x-error-source"), "engine")
        assert.strictEqual((yield* call("DELETE", `/material-series/${global.id}`)).status, 404, "delete the global one")
        assert.strictEqual((yield* call("DELETE", "/material-series/missing-series")).status, 404, "delete a missing one")
        // Nothing else creates a series (test/http/material-series.test.ts).
        const created = yield* call("PUT", "/material-series/new-series", body)
        assert.strictEqual(created.status, 201, created.text)
        assert.strictEqual(ok(yield* call("DELETE", "/material-series/new-series"), "remove the new one").id, "new-series")
        assert.strictEqual(ok(yield* call("DELETE", `/material-series/${own.id}`), "materialSeries.remove").id, own.id)
        assert.strictEqual((yield* call("GET", `/material-series/${own.id}`)).text, "")
      }))

    it.effect("creates, reads, replaces and deletes a quotation form region", () =>
      Effect.gen(function*() {
        const { call } = yield* setup
        const region = ok(
          yield* call("POST", "/quotation-form-region", { quotationFormId: "form-fdm", name: "DACH", countries: ["DE", "AT", "CH"] }),
          "quotationFormRegion.create"
        )
        assert.deepStrictEqual(region.countries, ["DE", "AT", "CH"])
        assert.deepStrictEqual(ok(yield* call("GET", `/quotation-form-region/${region.id}`), "get"), region)
        assert.deepStrictEqual(ok(yield* call("GET", "/quotation-form-region?quotationFormId=form-fdm"), "list"), [region])
        const replaced = ok(
          yield* call("PUT", `/quotation-form-region/${region.id}`, {
            quotationFormId: "form-fdm",
            name: "Switzerland",
            countries: ["CH"],
            currencyId: "CHF",
            priceFactor: 1.2
          }),
          "quotationFormRegion.replace"
        )
        assert.strictEqual(replaced.currencyId, "CHF")
        assert.strictEqual(ok(yield* call("DELETE", `/quotation-form-region/${region.id}`), "remove").id, region.id)
        const unknownForm = yield* call("POST", "/quotation-form-region", { quotationFormId: "nope", name: "X", countries: [] })
        assert.strictEqual(unknownForm.status, 422)
        assert.include(unknownForm.json().message, "quotationFormId")
      }))

    it.effect("creates, lists and reads a blank", () =>
      Effect.gen(function*() {
        const { call } = yield* setup
        const blank = ok(yield* call("POST", "/blank", { name: "Alu block", dimensions: { x: 100, y: 50, z: 20 }, price: 12.5 }), "blank.create")
        assert.deepStrictEqual(blank.dimensions, { x: 100, y: 50, z: 20 })
        assert.deepStrictEqual(ok(yield* call("GET", `/blank/${blank.id}`), "blank.get"), blank)
        assert.deepStrictEqual(ok(yield* call("GET", "/blank?name=Alu%20block"), "blank.list"), [blank])
      }))

    it.effect("lists and reads suppliers and users (inserted in the store: they have no create endpoint)", () =>
      Effect.gen(function*() {
        const { appId, call } = yield* setup
        const supplier = yield* insert("supplier", appId, { name: "Filament Co", email: "sales@filament.example" })
        const user = yield* insert("user", appId, { name: "Ada", email: "ada@shop.example", role: "sales" })
        assert.deepStrictEqual(ok(yield* call("GET", "/supplier"), "supplier.list"), [supplier])
        assert.deepStrictEqual(ok(yield* call("GET", `/supplier/${supplier.id}`), "supplier.get"), supplier)
        assert.deepStrictEqual(ok(yield* call("GET", "/user?role=sales"), "user.list"), [user])
        assert.deepStrictEqual(ok(yield* call("GET", "/user?role=admin"), "user.list by role"), [])
        assert.deepStrictEqual(ok(yield* call("GET", `/user/${user.id}`), "user.get"), user)
        assert.strictEqual((yield* call("GET", "/user/nobody")).text, "")
      }))

    it.effect("had a successful call of every operation of its groups (runs last)", () => Effect.sync(() => assert.deepStrictEqual(covered.missing(), [])))
  })
}
