/**
 * `POST /ticket-model/{id}/price-breaks` through HTTP (issue 22), on a part
 * made from a real model file (a 20 mm cube, docs/pricing.md's worked
 * example): a break's price is the part's price at that quantity (the part
 * written at it answers the same), the call changes nothing; lead times
 * follow the app's capacity (longer behind a queue of open service jobs,
 * shorter once part of it is made, with more machines, longer on a working
 * calendar) by the documented formula; expedite is sooner and dearer; an
 * unpriced part is a 409, bad quantities a 400, another app's part a 404
 * and another app's machines and jobs count for nothing here. A catalogue
 * configuration's breaks are the prices of a part made from it (404 for
 * another app's, 409 without geometry).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { cubeApp, cubeAppLayer, MUNICH } from "../support/cubeApp.ts"
import { FileHost } from "../support/fileHost.ts"
import { ok } from "../support/http.ts"
import { type Reply, TestClient } from "../support/TestApp.ts"

/** The engine's defaults (src/engine/pricing/leadTime.ts, docs/pricing.md). */
const MARGIN_DAYS = 2
const SURCHARGE_PERCENT = 30

interface Times {
  readonly cycleTime: number
  readonly setupTime: number
  readonly programmingTime: number
}
interface Break {
  readonly quantity: number
  readonly unitPrice: number
  readonly totalPrice: number
  readonly productionTimes: Times & { readonly services: ReadonlyArray<unknown> }
  readonly leadTimeDays: number | null
  readonly expedite?: { readonly leadTimeDays: number; readonly unitPrice: number; readonly totalPrice: number }
}
interface Basis {
  readonly machineCount: number
  readonly workingDaysPerWeek: number
  readonly capacityHoursPerWorkingDay: number
  readonly backlogHours: number
  readonly marginDays: number
  readonly expediteSurchargePercent: number
}
interface Answer {
  readonly ticketModelId: string
  readonly technologyId: string
  readonly currencyId: string
  readonly breaks: ReadonlyArray<Break>
  readonly leadTimeBasis: Basis | null
}

const cents = (amount: number) => Math.round(amount * 100)

/** A 400 of the request's schema, naming the field (or one of its entries, `"quantities.0"`); the engine never saw it. */
const badRequest = (reply: Reply, field: string) => {
  assert.strictEqual(reply.status, 400, reply.text)
  assert.match(reply.json().message, new RegExp(`"${field}(\\.\\d+)?"`))
  assert.isNull(reply.headers.get("x-error-source"))
}

/** The documented lead time: ceil((backlog + the batch's hours) / capacity per working day) + margin. */
const formula = (basis: Basis, times: Times, quantity: number, backlogHours = basis.backlogHours) => {
  const own = (times.cycleTime * quantity + times.setupTime + times.programmingTime) / 3600
  return Math.ceil((backlogHours + own) / basis.capacityHoursPerWorkingDay) + basis.marginDays
}

for (const backend of backends) {
  layer(cubeAppLayer(backend), { timeout: 60_000, excludeTestServices: true })(
    `Price breaks over HTTP (${backend})`,
    (it) => {
      /** A fresh app (cubeApp.ts) and its part's price breaks. */
      const newApp = (prefix: string) =>
        Effect.map(cubeApp(prefix), (app) => ({
          ...app,
          breaks: (id: string, quantities: ReadonlyArray<number>) =>
            Effect.map(app.call("POST", `/ticket-model/${id}/price-breaks`, { quantities }), (reply) => ok(reply, `breaks of ${id}`) as Answer)
        }))

      it.effect("a break's price is the part's price at that quantity, in the order asked; the call changes nothing and writes no event", () =>
        Effect.gen(function*() {
          const { call, part, partBody, breaks } = yield* newApp("breaks-price")
          const cube = yield* part(1)
          const quantities = [100, 1, 1000, 10]
          const answer = yield* breaks(cube.id, quantities)
          assert.deepStrictEqual([answer.ticketModelId, answer.technologyId, answer.currencyId], [cube.id, "fdm", "EUR"])
          assert.deepStrictEqual(answer.breaks.map((b) => b.quantity), quantities)
          // docs/pricing.md's worked example: 6.93 for one, 1.83 each for ten, 1.32 each for a hundred.
          const byQuantity = new Map(answer.breaks.map((b) => [b.quantity, b]))
          assert.deepStrictEqual([1, 10, 100].map((q) => [byQuantity.get(q)!.unitPrice, byQuantity.get(q)!.totalPrice]), [
            [6.93, 6.93],
            [1.83, 18.3],
            [1.32, 132]
          ])
          for (const b of answer.breaks) assert.strictEqual(cents(b.totalPrice), b.quantity * cents(b.unitPrice), `total of ${b.quantity}`)
          // The call wrote nothing: the part reads as it was, and the request left no event.
          const reply = yield* call("POST", `/ticket-model/${cube.id}/price-breaks`, { quantities: [5] })
          assert.strictEqual(reply.status, 200, reply.text)
          assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model/${cube.id}`), "part after"), cube)
          assert.deepStrictEqual(ok(yield* call("GET", `/event?requestId=${reply.headers.get("x-request-id")}`), "events of the call"), [])

          // The part written at each quantity answers the break's price and times; so does a new part at it.
          for (const b of answer.breaks) {
            const written = ok(yield* call("PUT", `/ticket-model/${cube.id}`, partBody(b.quantity)), `put ${b.quantity}`)
            assert.deepStrictEqual(
              [written.unitPrice, written.totalPrice, written.productionTimes],
              [b.unitPrice, b.totalPrice, b.productionTimes],
              `the part at ${b.quantity}`
            )
          }
          const fresh = yield* part(10)
          const ten = byQuantity.get(10)!
          assert.deepStrictEqual([fresh.unitPrice, fresh.totalPrice, fresh.productionTimes], [ten.unitPrice, ten.totalPrice, ten.productionTimes])
          // A later change of the machine rate shows in the breaks at once, as in the next write of the part.
          ok(yield* call("POST", "/machine-group", { name: "Dear printers", technologyId: "fdm", hourlyRate: 8 }), "group with a rate")
          const dearer = (yield* breaks(fresh.id, [10])).breaks[0]!
          assert.isAbove(dearer.unitPrice, ten.unitPrice)
          const rewritten = ok(yield* call("PUT", `/ticket-model/${fresh.id}`, partBody(10)), "rewrite at the new rate")
          assert.strictEqual(rewritten.unitPrice, dearer.unitPrice)
        }))

      it.effect("lead times: none without machines; longer behind open service jobs, shorter as they are made and with more machines", () =>
        Effect.gen(function*() {
          const { call, part, breaks, machines } = yield* newApp("breaks-capacity")
          const cube = yield* part(1)
          const bare = yield* breaks(cube.id, [10])
          assert.isNull(bare.leadTimeBasis)
          assert.isNull(bare.breaks[0]!.leadTimeDays)
          assert.isUndefined(bare.breaks[0]!.expedite)

          // One machine around the clock, nothing queued: the batch's own hours and the margin.
          yield* machines(1)
          const idle = yield* breaks(cube.id, [10])
          assert.deepStrictEqual(idle.leadTimeBasis, {
            machineCount: 1,
            workingDaysPerWeek: 7,
            capacityHoursPerWorkingDay: 24,
            backlogHours: 0,
            marginDays: MARGIN_DAYS,
            expediteSurchargePercent: SURCHARGE_PERCENT
          })
          const idleBreak = idle.breaks[0]!
          assert.strictEqual(idleBreak.leadTimeDays, formula(idle.leadTimeBasis!, idleBreak.productionTimes, 10))
          assert.strictEqual(idleBreak.leadTimeDays, 1 + MARGIN_DAYS)
          // Expedite would not be sooner with nothing to jump: it is not offered.
          assert.isUndefined(idleBreak.expedite)

          // A queued job of a thousand cubes: about 285 machine hours ahead of the break.
          const queuedPart = yield* part(1000)
          const job = ok(yield* call("POST", "/service-job", { name: "Big run", technologyId: "fdm", ticketModelIds: [queuedPart.id] }), "job")
          const queued = yield* breaks(cube.id, [10])
          const backlog = queued.leadTimeBasis!.backlogHours
          const expectedBacklog = (queuedPart.productionTimes.cycleTime * 1000 + queuedPart.productionTimes.setupTime +
            queuedPart.productionTimes.programmingTime) / 3600
          assert.closeTo(backlog, expectedBacklog, 0.01)
          const behind = queued.breaks[0]!
          assert.strictEqual(behind.leadTimeDays, formula(queued.leadTimeBasis!, behind.productionTimes, 10))
          assert.isAbove(behind.leadTimeDays!, idleBreak.leadTimeDays!)

          // Half of the job made: half of its pieces (and no setup) left.
          ok(yield* call("PUT", `/service-job/${job.id}/timeline/start`), "start")
          const [record] = ok(yield* call("GET", `/pps?serviceJobId=${job.id}`), "pps") as Array<any>
          ok(
            yield* call("PUT", `/service-job/${job.id}/production/${record.id}`, { state: "in_production", producedQuantity: 500, scrappedQuantity: 0 }),
            "progress"
          )
          const halfway = yield* breaks(cube.id, [10])
          assert.closeTo(halfway.leadTimeBasis!.backlogHours, queuedPart.productionTimes.cycleTime * 500 / 3600, 0.01)
          const sooner = halfway.breaks[0]!
          assert.strictEqual(sooner.leadTimeDays, formula(halfway.leadTimeBasis!, sooner.productionTimes, 10))
          assert.isBelow(sooner.leadTimeDays!, behind.leadTimeDays!)

          // Three more machines: the same queue is worked off four times as fast.
          yield* machines(3)
          const more = yield* breaks(cube.id, [10])
          assert.deepInclude(more.leadTimeBasis, { machineCount: 4, capacityHoursPerWorkingDay: 96 })
          assert.strictEqual(more.breaks[0]!.leadTimeDays, formula(more.leadTimeBasis!, more.breaks[0]!.productionTimes, 10))
          assert.isBelow(more.breaks[0]!.leadTimeDays!, sooner.leadTimeDays!)

          // A done job is no longer in the queue.
          ok(
            yield* call("PUT", `/service-job/${job.id}/production/${record.id}`, { state: "done", producedQuantity: 1000, scrappedQuantity: 0 }),
            "done"
          )
          assert.strictEqual((yield* breaks(cube.id, [10])).leadTimeBasis!.backlogHours, 0)
        }))

      it.effect("a machine group's working hours: kept as written, and fewer hours make longer lead times in working days", () =>
        Effect.gen(function*() {
          const { call, part, breaks, machines } = yield* newApp("breaks-calendar")
          const cube = yield* part(1)
          const group = yield* machines(2)
          const aroundTheClock = (yield* breaks(cube.id, [1000])).breaks[0]!
          const workingHours = { days: [1, 2, 3, 4, 5], from: "08:00", to: "18:00" }
          const body = { name: group.name, technologyId: "fdm", workingHours }
          const replaced = ok(yield* call("PUT", `/machine-group/${group.id}`, body), "working hours")
          assert.deepStrictEqual(replaced.workingHours, workingHours)
          assert.deepStrictEqual(ok(yield* call("GET", `/machine-group/${group.id}`), "read").workingHours, workingHours)
          // Read, modified, written back: the record as read is accepted.
          ok(yield* call("PUT", `/machine-group/${group.id}`, { ...replaced, description: "Day shift" }), "read-modify-write")

          const dayShift = yield* breaks(cube.id, [1000])
          assert.deepInclude(dayShift.leadTimeBasis, { machineCount: 2, workingDaysPerWeek: 5, capacityHoursPerWorkingDay: 20 })
          const shift = dayShift.breaks[0]!
          assert.strictEqual(shift.leadTimeDays, formula(dayShift.leadTimeBasis!, shift.productionTimes, 1000))
          assert.isAbove(shift.leadTimeDays!, aroundTheClock.leadTimeDays!)

          // A machine in no group works around the clock: its days join the week.
          ok(yield* call("POST", "/machine", { name: "Loose", technologyId: "fdm", location: MUNICH }), "machine without group")
          const mixed = yield* breaks(cube.id, [1000])
          assert.deepInclude(mixed.leadTimeBasis, { machineCount: 3, workingDaysPerWeek: 7 })
          assert.closeTo(mixed.leadTimeBasis!.capacityHoursPerWorkingDay, (2 * 5 * 10 + 7 * 24) / 7, 0.005)

          // Working hours that are not a day's are a 400 naming the field; nothing changed.
          for (
            const wrong of [
              { days: [], from: "08:00", to: "18:00" },
              { days: [0], from: "08:00", to: "18:00" },
              { days: [1, 1], from: "08:00", to: "18:00" },
              { days: [1], from: "8:00", to: "18:00" },
              { days: [1], from: "18:00", to: "08:00" },
              { days: [1], from: "08:00", to: "24:30" }
            ]
          ) {
            const reply = yield* call("PUT", `/machine-group/${group.id}`, { ...body, workingHours: wrong })
            assert.strictEqual(reply.status, 400, `${JSON.stringify(wrong)}: ${reply.text}`)
            assert.include(reply.json().message, "workingHours", JSON.stringify(wrong))
          }
          assert.strictEqual(ok(yield* call("GET", `/machine-group/${group.id}`), "unchanged").description, "Day shift")
          // Until 24:00 is the whole rest of the day.
          const late = ok(yield* call("PUT", `/machine-group/${group.id}`, { ...body, workingHours: { days: [6], from: "12:00", to: "24:00" } }), "to 24:00")
          assert.deepStrictEqual(late.workingHours.to, "24:00")
        }))

      it.effect("expedite: ahead of the queue, sooner and dearer, by the surcharge on the unit price", () =>
        Effect.gen(function*() {
          const { call, part, breaks, machines } = yield* newApp("breaks-expedite")
          const cube = yield* part(1)
          yield* machines(1)
          const queuedPart = yield* part(1000)
          ok(yield* call("POST", "/service-job", { name: "Big run", technologyId: "fdm", ticketModelIds: [queuedPart.id] }), "job")
          const answer = yield* breaks(cube.id, [1, 10, 100, 1000])
          const basis = answer.leadTimeBasis!
          assert.isAbove(basis.backlogHours, 0)
          for (const b of answer.breaks) {
            const expedite = b.expedite
            assert.isDefined(expedite, `expedite of ${b.quantity}`)
            assert.isBelow(expedite!.leadTimeDays, b.leadTimeDays!, `sooner at ${b.quantity}`)
            assert.strictEqual(expedite!.leadTimeDays, formula(basis, b.productionTimes, b.quantity, 0), `ahead of the queue at ${b.quantity}`)
            assert.isAbove(expedite!.totalPrice, b.totalPrice, `dearer at ${b.quantity}`)
            assert.strictEqual(cents(expedite!.unitPrice), Math.round(cents(b.unitPrice) * (100 + SURCHARGE_PERCENT) / 100), `surcharge at ${b.quantity}`)
            assert.strictEqual(cents(expedite!.totalPrice), b.quantity * cents(expedite!.unitPrice), `expedite total at ${b.quantity}`)
          }
        }))

      it.effect("docs/pricing.md's worked example: three day-shift printers, a queued and a running job", () =>
        Effect.gen(function*() {
          const { call, part, breaks, machines } = yield* newApp("breaks-example")
          const cube = yield* part(1)
          yield* machines(3, { days: [1, 2, 3, 4, 5], from: "08:00", to: "18:00" })
          const queuedPart = yield* part(500)
          ok(yield* call("POST", "/service-job", { name: "Queued", technologyId: "fdm", ticketModelIds: [queuedPart.id] }), "queued job")
          const runningPart = yield* part(200)
          const running = ok(yield* call("POST", "/service-job", { name: "Running", technologyId: "fdm", ticketModelIds: [runningPart.id] }), "job")
          ok(yield* call("PUT", `/service-job/${running.id}/timeline/start`), "start")
          const [record] = ok(yield* call("GET", `/pps?serviceJobId=${running.id}`), "pps") as Array<any>
          ok(
            yield* call("PUT", `/service-job/${running.id}/production/${record.id}`, { state: "in_production", producedQuantity: 50, scrappedQuantity: 0 }),
            "50 made"
          )

          const answer = yield* breaks(cube.id, [1, 10, 100, 1000])
          assert.deepStrictEqual(answer.leadTimeBasis, {
            machineCount: 3,
            workingDaysPerWeek: 5,
            capacityHoursPerWorkingDay: 30,
            backlogHours: 185.21,
            marginDays: MARGIN_DAYS,
            expediteSurchargePercent: SURCHARGE_PERCENT
          })
          assert.deepStrictEqual(
            answer.breaks.map((b) => [b.quantity, b.unitPrice, b.totalPrice, b.leadTimeDays, b.expedite]),
            [
              [1, 6.93, 6.93, 9, { leadTimeDays: 3, unitPrice: 9.01, totalPrice: 9.01 }],
              [10, 1.83, 18.3, 9, { leadTimeDays: 3, unitPrice: 2.38, totalPrice: 23.8 }],
              [100, 1.32, 132, 10, { leadTimeDays: 3, unitPrice: 1.72, totalPrice: 172 }],
              [1000, 1.27, 1270, 18, { leadTimeDays: 12, unitPrice: 1.65, totalPrice: 1650 }]
            ]
          )
        }))

      it.effect("a part without a price yet is a 409 naming it; bad quantities are a 400; an unknown part a 404", () =>
        Effect.gen(function*() {
          const { call, part, partBody } = yield* newApp("breaks-refused")
          const placeholder = ok(
            yield* call("POST", "/ticket-model", { ...partBody(1, { url: "https://files.example/bracket.stl" }), name: "Bracket" }),
            "unpriced"
          )
          assert.isNull(placeholder.unitPrice)
          const unpriced = yield* call("POST", `/ticket-model/${placeholder.id}/price-breaks`, { quantities: [1, 10] })
          assert.strictEqual(unpriced.status, 409, unpriced.text)
          assert.include(unpriced.json().message, "part Bracket has no price yet")
          assert.strictEqual(unpriced.headers.get("x-error-source"), "engine")

          const cube = yield* part(1)
          const path = `/ticket-model/${cube.id}/price-breaks`
          for (
            const quantities of [[], [0], [10, 10], Array.from({ length: 21 }, (_, i) => i + 1), [1.5], [-1], [1_000_001], ["10"], 10]
          ) {
            badRequest(yield* call("POST", path, { quantities }), "quantities")
          }
          badRequest(yield* call("POST", path, {}), "quantities")
          // Twenty distinct quantities are fine, the largest a part may have included.
          const twenty = [...Array.from({ length: 19 }, (_, i) => i + 1), 1_000_000]
          assert.deepStrictEqual((yield* Effect.map(call("POST", path, { quantities: twenty }), (r) => ok(r, "twenty"))).breaks.length, 20)

          const missing = yield* call("POST", "/ticket-model/missing/price-breaks", { quantities: [1] })
          assert.strictEqual(missing.status, 404, missing.text)
          assert.include(missing.json().message, "missing")
        }))

      it.effect("tenancy: another app's part is a 404, and its machines and service jobs count for nothing here", () =>
        Effect.gen(function*() {
          const mine = yield* newApp("breaks-mine")
          const theirs = yield* newApp("breaks-theirs")
          const cube = yield* mine.part(1)
          yield* mine.machines(1)
          const before = yield* mine.breaks(cube.id, [100])

          const reply = yield* theirs.call("POST", `/ticket-model/${cube.id}/price-breaks`, { quantities: [1] })
          assert.strictEqual(reply.status, 404, reply.text)
          assert.include(reply.json().message, cube.id)

          // Their machines and their queue change nothing of my lead times.
          yield* theirs.machines(5)
          const theirPart = yield* theirs.part(1000)
          ok(yield* theirs.call("POST", "/service-job", { name: "Their run", technologyId: "fdm", ticketModelIds: [theirPart.id] }), "their job")
          assert.deepStrictEqual(yield* mine.breaks(cube.id, [100]), before)
          assert.deepInclude((yield* theirs.breaks(theirPart.id, [100])).leadTimeBasis, { machineCount: 5 })
        }))

      it.effect("a catalogue configuration's breaks are the prices a part made from it has at each quantity, with the same lead times", () =>
        Effect.gen(function*() {
          const host = (yield* FileHost).url
          const { call, breaks, machines, material, ticket } = yield* newApp("breaks-catalogue")
          yield* machines(1)
          const catalogue = ok(yield* call("POST", "/catalogue", { name: "Standard parts" }), "catalogue")
          const model = ok(
            yield* call("POST", "/catalogue-model", {
              catalogueId: catalogue.id,
              name: "Cube",
              modelEndpoint: { url: `${host}/cube.stl` },
              configurations: [
                { name: "Fine", technologyId: "fdm", materialId: material.id, productionParameterIds: { layerHeight: "fdm-lh-0.1" } },
                { name: "Standard", technologyId: "fdm", materialId: material.id }
              ]
            }),
            "catalogue model"
          )
          const quantities = [100, 1, 10]
          for (const configuration of model.configurations) {
            const answer = ok(
              yield* call("POST", `/catalogue-model-configuration/${configuration.id}/price-breaks`, { quantities }),
              `breaks of ${configuration.name}`
            ) as Omit<Answer, "ticketModelId"> & { catalogueModelConfigurationId: string; catalogueModelId: string }
            assert.deepStrictEqual(
              [answer.catalogueModelConfigurationId, answer.catalogueModelId, answer.technologyId, answer.currencyId],
              [configuration.id, model.id, "fdm", "EUR"]
            )
            assert.deepStrictEqual(answer.breaks.map((b) => b.quantity), quantities)
            // A part made from the configuration at each quantity reads the break's figures, and its own breaks say the same.
            for (const b of answer.breaks) {
              const [part] = ok(
                yield* call("POST", "/ticket-model/from-catalogue", {
                  ticketId: ticket.id,
                  parts: [{ catalogueModelConfigurationId: configuration.id, quantity: b.quantity }]
                }),
                `part of ${b.quantity}`
              ) as Array<any>
              assert.deepStrictEqual(
                [part.unitPrice, part.totalPrice, part.productionTimes],
                [b.unitPrice, b.totalPrice, b.productionTimes],
                `${configuration.name} at ${b.quantity}`
              )
              assert.deepStrictEqual((yield* breaks(part.id, [b.quantity])).breaks[0], b)
            }
          }
          // The production parameters count: the finer layers cost more than the standard ones.
          const [fine, standard] = yield* Effect.forEach(model.configurations as Array<{ id: string }>, (configuration) =>
            Effect.map(
              call("POST", `/catalogue-model-configuration/${configuration.id}/price-breaks`, { quantities: [10] }),
              (reply) => (ok(reply, "ten") as Answer).breaks[0]!.unitPrice
            ))
          assert.isAbove(fine!, standard!)
        }))

      it.effect("a catalogue configuration: 404 when missing or another app's, 409 without geometry, 400 for bad quantities; metered", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const host = (yield* FileHost).url
          const mine = yield* newApp("breaks-catalogue-mine")
          const theirs = yield* newApp("breaks-catalogue-theirs")
          const catalogue = ok(yield* mine.call("POST", "/catalogue", { name: "Standard parts" }), "catalogue")
          const modelOf = (name: string, url: string) =>
            Effect.map(
              mine.call("POST", "/catalogue-model", {
                catalogueId: catalogue.id,
                name,
                modelEndpoint: { url },
                configurations: [{ technologyId: "fdm", materialId: mine.material.id }]
              }),
              (reply) => ok(reply, name).configurations[0].id as string
            )
          const priced = yield* modelOf("Cube", `${host}/cube.stl`)
          const placeholder = yield* modelOf("Knob", "https://files.example/knob.stl")
          const path = (id: string) => `/catalogue-model-configuration/${id}/price-breaks`

          const foreign = yield* theirs.call("POST", path(priced), { quantities: [1] })
          assert.strictEqual(foreign.status, 404, foreign.text)
          assert.include(foreign.json().message, priced)
          assert.strictEqual(foreign.headers.get("x-error-source"), "engine")
          const missing = yield* mine.call("POST", path("missing"), { quantities: [1] })
          assert.strictEqual(missing.status, 404, missing.text)

          const unpriced = yield* mine.call("POST", path(placeholder), { quantities: [1] })
          assert.strictEqual(unpriced.status, 409, unpriced.text)
          assert.include(unpriced.json().message, "catalogue model Knob")
          assert.include(unpriced.json().message, "has no price yet")

          for (const quantities of [[], [0], [10, 10], Array.from({ length: 21 }, (_, i) => i + 1)]) {
            badRequest(yield* mine.call("POST", path(priced), { quantities }), "quantities")
          }
          ok(yield* mine.call("POST", path(priced), { quantities: [1, 10] }), "breaks")
          const usage = (yield* client.call("GET", `/api/v1/usage?appId=${mine.appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } })).json()
          // Every call of mine is metered, refused or not: the missing one (404), the 409, the four 400s and the answered one.
          assert.deepInclude(usage.byOperation, { operation: "catalogueModel.configurationPriceBreaks", calls: 7, outcomeUnknown: 0 })
        }))

      it.effect("each call is metered as ticketModel.priceBreaks", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const { appId, part, breaks } = yield* newApp("breaks-metered")
          const cube = yield* part(1)
          yield* breaks(cube.id, [1, 10])
          yield* breaks(cube.id, [100])
          const usage = (yield* client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } })).json()
          assert.deepInclude(usage.byOperation, { operation: "ticketModel.priceBreaks", calls: 2, outcomeUnknown: 0 })
        }))
    }
  )
}
