/**
 * Test mode and tenancy: every cross-space probe. A data space (an app's
 * live data, its test data, another app's) is filled with a record of every
 * resource (the demo data, a quoting flow to production, notes, a model file,
 * a webhook endpoint and its deliveries, an exchange rate), then probed from
 * another space: no list shows its records, every read of one of its ids is
 * the empty 200, every write to one is refused (404, or 409/422 naming what
 * it cannot see), every workflow operation on its ids too, its events are
 * not in the other's feed; and nothing of the owner changed. Run in both
 * directions between modes, and between apps.
 *
 * Beside it: `X-Mode: test` on every answer of a test secret, events with
 * their mode, webhooks delivered only to endpoints of their mode, numbers
 * counted per space, usage per mode, and emptying an app's test data.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import type { HttpApiEndpoint } from "effect/http-api"
import { groupsOf } from "../../src/contract/Operations.ts"
import { PublicApi } from "../../src/contract/PublicApi.ts"
import { dataSpaceOf, type Mode } from "../../src/domain/Grants.ts"
import { DEFAULT_MODEL_FETCH } from "../../src/domain/ModelSettings.ts"
import { DEFAULT_WEBHOOKS } from "../../src/domain/WebhookSettings.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { seedDemoData } from "../../src/engine/seed.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { ok } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"
import { WebhookReceiver, WebhookReceiverLive } from "../support/webhookReceiver.ts"

const admin = { "x-admin-token": ADMIN_TOKEN }

/** Every list of the API (a GET of a path without parameters, not a lookup) and the record read beside it. */
const LISTS = groupsOf(PublicApi).flatMap((group) =>
  Object.values(group.endpoints).filter((endpoint) =>
    endpoint.method === "GET" && !endpoint.path.includes(":") && endpoint.identifier !== "lookup" && endpoint.identifier !== "get"
  )
    .map((list: HttpApiEndpoint.Top) => {
      const item = (method: string) =>
        Object.values(group.endpoints).find((endpoint) => endpoint.method === method && new RegExp(`^${list.path}/:[^/]+$`).test(endpoint.path))
      return { id: `${group.identifier}.${list.identifier}`, path: list.path, get: item("GET"), put: item("PUT"), remove: item("DELETE") }
    })
)

/** The lists of global reference data (every app reads it), and the request log: no record of a space to probe. */
const GLOBAL_LISTS = [
  "requestLog.list",
  "colour.list",
  "currency.list",
  "technology.list",
  "productionParameterField.list",
  "quotationForm.list",
  "service.list"
]

/** A record's key in a list: its id (a request log row's request id; a row without one, the row itself). */
/**
 * A record's identity across data spaces: its id and when it was made, as two
 * spaces may each hold a record of one id (the demo material series that
 * every space's seed makes, `demo-filaments`): each its own.
 */
const keyOf = (record: any): string => record.id !== undefined ? `${record.id}@${record.createdAt ?? ""}` : record.requestId ?? JSON.stringify(record)

/** One data space, seen through one secret. */
interface Space {
  readonly label: string
  readonly appId: string
  readonly mode: Mode
  readonly secret: string
  readonly call: (method: string, path: string, body?: unknown) => Effect.Effect<Reply>
}

/** The ids each of its lists shows, and the records as read. */
type Snapshot = ReadonlyMap<string, ReadonlyArray<any>>

const CUBE = binaryStl(box(10, 10, 10))

for (const backend of backends) {
  const app = TestApp(backend, {
    modelFetch: { ...DEFAULT_MODEL_FETCH, allowPrivate: true },
    webhooks: { ...DEFAULT_WEBHOOKS, timeout: Duration.seconds(2) }
  })
  layer(Layer.merge(app, WebhookReceiverLive), { timeout: 300_000, excludeTestServices: true })(`Test mode and tenancy (${backend})`, (it) => {
    const space = (label: string, appId: string, mode: Mode) =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value } = yield* client.createSecret(appId, undefined, { mode })
        const call = (method: string, path: string, body?: unknown) => client.call(method, path, { secret: value, body })
        return { label, appId, mode, secret: value, call } satisfies Space
      })

    /** A record of every resource in `space`, with webhook deliveries to `hooks`. */
    const populate = (owner: Space, hooks: string, usdRate: number) =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const receiver = yield* WebhookReceiver
        const done = (method: string, path: string, body?: unknown) =>
          Effect.map(owner.call(method, path, body), (reply) => ok(reply, `${owner.label} ${method} ${path}`))
        const endpoint = yield* done("POST", "/v1/webhook-endpoint", { url: receiver.url(hooks), events: ["*"] })
        yield* seedDemoData(dataSpaceOf(owner.appId, owner.mode))
        const [customer] = yield* done("GET", "/v1/customer?externalReference=demo-acme")
        const project = yield* done("POST", "/v1/project", { customerId: customer.id, name: "Order" })
        const ticket = yield* done("POST", "/v1/ticket", { projectId: project.id, name: "Run" })
        const parts = yield* done("POST", "/v1/ticket-model/from-catalogue", {
          ticketId: ticket.id,
          parts: [{ catalogueModelConfigurationId: "demo-bearing-block-fdm", quantity: 4 }, { catalogueModelConfigurationId: "demo-spacer-mjf", quantity: 8 }]
        })
        yield* done("POST", "/v1/item", { ticketId: ticket.id, name: "Packaging", quantity: 1, unitPrice: 5 })
        yield* done("POST", "/v1/meeting-note", { customerId: customer.id, projectId: project.id, title: "Kick-off", body: "Agreed the run" })
        const quote = yield* done("POST", `/v1/ticket/${ticket.id}/quote`, {})
        const { currencyId, lines, ticketId, validUntil } = quote
        yield* done("PUT", `/v1/ticket-quote/${quote.id}`, { ticketId, currencyId, validUntil, lines, state: "accepted" })
        const jobs = yield* done("PUT", `/v1/ticket/${ticket.id}/send-to-production`)
        yield* done("PUT", `/v1/service-job/${jobs[0].id}/timeline/start`)
        yield* done("POST", "/v1/production-note", { ticketId: ticket.id, serviceJobId: jobs[0].id, body: "Started" })
        const [form] = yield* done("GET", "/v1/quotation-form")
        yield* done("POST", "/v1/quotation-form-region", { quotationFormId: form.id, name: "DACH", countries: ["DE", "AT", "CH"] })
        yield* done("POST", "/v1/blank", { name: "Plate", dimensions: { x: 100, y: 100, z: 10 } })
        yield* done("POST", "/v1/catalogue", { name: "Spare parts", customerId: customer.id })
        const series = yield* owner.call("PUT", `/v1/material-series/series-${owner.mode}-${owner.appId}`, { name: "Own series", technologyId: "fdm" })
        assert.strictEqual(series.status, 201, `${owner.label} PUT a new material series: ${series.text}`)
        yield* done("PUT", "/v1/currency/USD/exchange-rate", { exchangeRate: usdRate })
        const uploaded = yield* Effect.promise(() =>
          fetch(`${client.baseUrl}/v1/model-file?fileName=cube.stl`, {
            method: "POST",
            headers: { authorization: owner.secret, "content-type": "model/stl" },
            body: CUBE
          })
        )
        assert.strictEqual(uploaded.status, 200)
        const file = yield* Effect.promise(() => uploaded.json() as Promise<any>)
        // The changes' events reach the owner's endpoint.
        yield* receiver.waitFor(hooks, 3)
        return { endpoint, ticket, parts, quote, jobs, file, usdRate }
      })

    /** What every list of `owner` shows (the request log aside, which grows with every call). */
    const snapshot = (owner: Space) =>
      Effect.gen(function*() {
        const lists = new Map<string, ReadonlyArray<any>>()
        for (const list of LISTS) {
          if (list.id === "requestLog.list") continue
          lists.set(list.id, ok(yield* owner.call("GET", `${list.path}?limit=1000`), `${owner.label} ${list.id}`))
        }
        return lists as Snapshot
      })

    /** Probes `owner`'s records from `other` (see the module's comment). */
    const probe = (owner: Space, other: Space, baseline: Snapshot, made: Effect.Success<ReturnType<typeof populate>>) =>
      Effect.gen(function*() {
        const before = yield* snapshot(owner)
        const where = (what: string) => `${other.label} probing ${owner.label}: ${what}`
        let records = 0
        for (const list of LISTS) {
          if (list.id === "requestLog.list") continue
          const global = new Set((baseline.get(list.id) ?? []).map(keyOf))
          const owned = before.get(list.id)!.filter((record) => !global.has(keyOf(record)))
          records += owned.length
          const listed: ReadonlyArray<any> = ok(yield* other.call("GET", `${list.path}?limit=1000`), where(list.id))
          const seen = new Set(listed.map(keyOf))
          // An id the other space holds a record of its own by: a read or write of it is of that record.
          const othersIds = new Set(listed.map((record) => record.id))
          for (const record of owned) {
            assert.isFalse(seen.has(keyOf(record)), where(`${list.id} lists ${keyOf(record)}`))
            if (othersIds.has(record.id)) continue
            if (list.get !== undefined) {
              const read = yield* other.call("GET", `${list.path}/${record.id}`)
              assert.deepStrictEqual([read.status, read.text], [200, ""], where(`GET ${list.path}/${record.id}`))
            }
            let createdOwn = false
            if (list.put !== undefined) {
              const write = yield* other.call("PUT", `${list.path}/${record.id}`, record)
              createdOwn = write.status === 201
              // A material series' PUT of an id the caller does not have creates it in the caller's own space (201),
              // beside the owner's, which stays as it was (checked below).
              const refusals = list.id === "materialSeries.list" ? [201, 404, 409, 422] : [404, 409, 422]
              assert.include(refusals, write.status, where(`PUT ${list.path}/${record.id}: ${write.text}`))
            }
            if (list.remove !== undefined) {
              const removal = yield* other.call("DELETE", `${list.path}/${record.id}`)
              // The series the PUT just made in the caller's own space is the one it removes.
              assert.include(createdOwn ? [200] : [404, 409, 422, 501], removal.status, where(`DELETE ${list.path}/${record.id}: ${removal.text}`))
            }
          }
        }
        // Every resource had records to probe.
        for (const id of LISTS.map((list) => list.id)) {
          if (GLOBAL_LISTS.includes(id)) continue
          const global = new Set((baseline.get(id) ?? []).map(keyOf))
          assert.isAbove(before.get(id)!.filter((record) => !global.has(keyOf(record))).length, 0, `${owner.label} has no ${id} to probe`)
        }
        assert.isAbove(records, 50)

        // The records whose id is in the body, and the workflow operations, on the owner's ids.
        const { endpoint, file, jobs, parts, quote, ticket } = made
        const [reel] = before.get("reel.list")!.filter((record) => !new Set((baseline.get("reel.list") ?? []).map(keyOf)).has(keyOf(record)))
        const [group] = before.get("reelGroup.list")!.filter((record) => !new Set((baseline.get("reelGroup.list") ?? []).map(keyOf)).has(keyOf(record)))
        const [machine] = before.get("machine.list")!.filter((record) => !new Set((baseline.get("machine.list") ?? []).map(keyOf)).has(keyOf(record)))
        const [version] = before.get("modelVersion.list")!
        const [pps] = before.get("pps.list")!
        const [delivery] = before.get("webhookDelivery.list")!
        // Reel group ids are numbers counted per data space: the caller's own group of the same number is its own.
        const othersGroups = new Set(
          (ok(yield* other.call("GET", "/v1/reel-group?limit=1000"), where("reelGroup.list")) as ReadonlyArray<any>).map((g) => g.id)
        )
        const groupProbes: ReadonlyArray<readonly [string, string, unknown?]> = othersGroups.has(group.id) ? [] : [
          ["PUT", "/v1/reel-group", group],
          ["POST", `/v1/inventory-product-location/${group.id}/reel`, { reels: [{ remainingWeight: 100 }] }]
        ]
        const refusals: ReadonlyArray<readonly [string, string, unknown?]> = [
          ...groupProbes,
          ["PUT", "/v1/reel", reel],
          ["POST", `/v1/ticket/${ticket.id}/quote`, {}],
          ["PUT", `/v1/ticket/${ticket.id}/cancel`],
          ["PUT", `/v1/ticket/${ticket.id}/send-to-production`],
          ["POST", `/v1/ticket-model/${parts[0].id}/similarity`, {}],
          ["POST", `/v1/ticket-model/${parts[0].id}/price-breaks`, { quantities: [1, 2] }],
          ["PUT", `/v1/ticket-model/${parts[0].id}/machining-strategy/fdm`, { strategy: "roughing", toolIds: [] }],
          ["PUT", `/v1/ticket-model/${parts[0].id}/post-processing`, { serviceIds: [] }],
          ["POST", "/v1/ticket-model/from-catalogue", {
            ticketId: ticket.id,
            parts: [{ catalogueModelConfigurationId: "demo-bearing-block-fdm", quantity: 1 }]
          }],
          ["POST", "/v1/ticket-model", {
            ticketId: ticket.id,
            quantity: 1,
            technologyId: parts[0].technologyId,
            materialId: parts[0].materialId,
            catalogueModelConfigurationId: parts[0].catalogueModelConfigurationId
          }],
          ["POST", "/v1/item", { ticketId: ticket.id, name: "Intruder", quantity: 1, unitPrice: 1 }],
          ["POST", `/v1/model-version/${version.id}/fields-resolve`, { fields: ["volume"] }],
          ["PUT", `/v1/service-job/${jobs[0].id}/production/${pps.id}`, { state: "in_production", producedQuantity: 0, scrappedQuantity: 0 }],
          ["PUT", `/v1/service-job/${jobs[0].id}/timeline/stop`],
          ["PUT", `/v1/service-job/${jobs[0].id}/timeline/start`],
          ["PUT", "/v1/service-job/merge", { targetServiceJobId: jobs[0].id, sourceServiceJobIds: [jobs[1].id] }],
          ["POST", "/v1/service-job/reassign-ticket-models", { fromServiceJobId: jobs[0].id, toServiceJobId: jobs[1].id, ticketModelIds: [parts[0].id] }],
          ["PUT", `/v1/machine/${machine.id}/reels`, { reelIds: [] }],
          ["POST", `/v1/webhook-endpoint/${endpoint.id}/test`],
          ["POST", `/v1/webhook-endpoint/${endpoint.id}/rotate-secret`],
          ["POST", `/v1/webhook-delivery/${delivery.id}/redeliver`],
          ["POST", "/v1/project", { customerId: before.get("customer.list")![0].id, name: "Intruder" }],
          ["PUT", `/v1/ticket-quote/${quote.id}`, { ...quote, state: "rejected" }]
        ]
        for (const [method, path, body] of refusals) {
          const reply = yield* other.call(method, path, body)
          assert.include([404, 409, 422], reply.status, where(`${method} ${path}: ${reply.status} ${reply.text}`))
        }
        const emptyReads = [
          `/v1/ticket-model/${parts[0].id}/machining-strategy/fdm`,
          `/v1/service-job/${jobs[0].id}/production`,
          `/v1/model-file/${file.id}`,
          `/v1/model-file/${file.id}/content`,
          `/v1/ticket/lookup?identifier=${ticket.id}`,
          `/v1/ticket/lookup?identifier=${ticket.number}`,
          `/v1/project/lookup?identifier=${ticket.projectId}`
        ]
        for (const path of emptyReads) {
          const reply = yield* other.call("GET", path)
          // A number the other space also has (T-000001) is its own ticket: never the owner's.
          if (reply.text !== "") assert.notStrictEqual(reply.json().id, ticket.id, where(path))
          else assert.strictEqual(reply.status, 200, where(path))
        }
        // The reels of the group's number: none of the owner's (the other's own group of that number has its own).
        const ownerReels = new Set(before.get("reel.list")!.map((each) => each.id))
        const groupReels: ReadonlyArray<any> = ok(yield* other.call("GET", `/v1/inventory-product-location/${group.id}/reel`), where("reels of a group"))
        assert.deepStrictEqual(groupReels.filter((each) => ownerReels.has(each.id)), [], where("reels of a group"))
        if (!othersGroups.has(group.id)) assert.deepStrictEqual(groupReels, [], where("reels of a group"))
        assert.notStrictEqual(ok(yield* other.call("GET", "/v1/currency/USD"), where("currency")).exchangeRate, made.usdRate)
        assert.strictEqual(ok(yield* owner.call("GET", "/v1/currency/USD"), "the owner's currency").exchangeRate, made.usdRate)
        // The owner's events are not in the other's feed, whose events are all the other's.
        const ownerEvents = new Set(before.get("event.list")!.map(keyOf))
        assert.isAbove(ownerEvents.size, 5)
        const feed = ok(yield* other.call("GET", "/v1/event?limit=1000"), where("event feed")) as Array<any>
        for (const event of feed) {
          assert.isFalse(ownerEvents.has(event.id), where(`event ${event.id}`))
          assert.deepStrictEqual([event.appId, event.mode], [other.appId, other.mode], where(`event ${event.id}`))
        }

        // Nothing of the owner changed.
        const after = yield* snapshot(owner)
        for (const [id, listed] of before) assert.deepStrictEqual(after.get(id), listed, `${owner.label}'s ${id} changed while ${other.label} probed it`)
      })

    it.effect(
      "live and test data, and two apps, are closed to each other in every direction, for every resource and the event feed",
      () =>
        Effect.gen(function*() {
          const receiver = yield* WebhookReceiver
          const appA = `mode-a-${Math.random().toString(36).slice(2)}`
          const appB = `mode-b-${Math.random().toString(36).slice(2)}`
          const liveA = yield* space("app A live", appA, "live")
          const testA = yield* space("app A test", appA, "test")
          const liveB = yield* space("app B live", appB, "live")
          const empty = yield* space("an empty app", `mode-empty-${Math.random().toString(36).slice(2)}`, "live")
          const baseline = yield* snapshot(empty)

          const madeLive = yield* populate(liveA, `/hooks/${appA}/live`, 1.25)
          const madeTest = yield* populate(testA, `/hooks/${appA}/test`, 1.5)
          const madeB = yield* populate(liveB, `/hooks/${appB}/live`, 1.75)

          // Webhooks: each endpoint received only the events of its own space, marked with their mode.
          for (
            const [path, mode, appId] of [[`/hooks/${appA}/live`, "live", appA], [`/hooks/${appA}/test`, "test", appA], [
              `/hooks/${appB}/live`,
              "live",
              appB
            ]] as const
          ) {
            for (const request of receiver.received(path)) {
              const event = JSON.parse(request.body)
              assert.deepStrictEqual([event.appId, event.mode], [appId, mode], `${path}: ${event.type}`)
            }
          }
          // Numbers are counted per space: the test data's first ticket is T-000001 too.
          assert.strictEqual(madeLive.ticket.number, "T-000001")
          assert.strictEqual(madeTest.ticket.number, "T-000001")

          yield* probe(liveA, testA, baseline, madeLive)
          yield* probe(testA, liveA, baseline, madeTest)
          yield* probe(liveA, liveB, baseline, madeLive)
          yield* probe(liveB, liveA, baseline, madeB)
          yield* probe(testA, liveB, baseline, madeTest)
        }),
      { timeout: 600_000 }
    )

    it.effect("a test secret's answers carry X-Mode: test (errors included, the 401 never), and GET /v1/app says the mode", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const appId = `xmode-${Math.random().toString(36).slice(2)}`
        const test = yield* space("test", appId, "test")
        const live = yield* space("live", appId, "live")
        const reader = yield* client.createSecret(appId, undefined, { mode: "test", scopes: ["read"] })
        const answers = [
          yield* test.call("GET", "/v1/customer"),
          yield* test.call("GET", "/v1/customer/missing"),
          yield* test.call("POST", "/v1/customer", { email: "no-name@example.com" }),
          yield* test.call("PUT", "/v1/customer/missing", { name: "A", email: "a@example.com" }),
          yield* client.call("POST", "/v1/customer", { secret: reader.value, body: { name: "A", email: "a@example.com" } })
        ]
        assert.deepStrictEqual(answers.map((reply) => reply.status), [200, 200, 400, 404, 403])
        for (const reply of answers) assert.strictEqual(reply.headers.get("x-mode"), "test", `${reply.status} ${reply.text}`)
        assert.isNull((yield* live.call("GET", "/v1/customer")).headers.get("x-mode"))
        const refused = yield* client.call("GET", "/v1/customer", { secret: `${test.secret.slice(0, -2)}xx` })
        assert.strictEqual(refused.status, 401)
        assert.isNull(refused.headers.get("x-mode"))

        assert.deepStrictEqual(ok(yield* test.call("GET", "/v1/app"), "app test"), {
          id: appId,
          name: appId,
          defaultCurrency: "EUR",
          measurementUnit: "mm",
          timeZone: "UTC",
          mode: "test"
        })
        assert.strictEqual(ok(yield* live.call("GET", "/v1/app"), "app live").mode, "live")

        // MCP answers say so too.
        const mcp = yield* client.call("POST", "/v1/mcp", {
          secret: test.secret,
          body: { jsonrpc: "2.0", id: 1, method: "ping", params: {} },
          headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" }
        })
        assert.strictEqual(mcp.headers.get("x-mode"), "test", mcp.text)
      }))

    it.effect("usage is counted per mode; emptying the test data removes it all, numbers restart, live data untouched", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const appId = `empty-${Math.random().toString(36).slice(2)}`
        const live = yield* space("live", appId, "live")
        const test = yield* space("test", appId, "test")
        const made = yield* populate(test, `/hooks/${appId}/test`, 1.5)
        const liveCustomer = ok(yield* live.call("POST", "/v1/customer", { name: "Live", email: "live@example.com" }), "live customer")
        const testEvents = (ok(yield* test.call("GET", "/v1/event?limit=1000"), "events") as Array<any>).length
        assert.isAbove(testEvents, 0)

        const usage = (mode?: Mode) =>
          Effect.map(client.call("GET", `/api/v1/usage?appId=${appId}${mode === undefined ? "" : `&mode=${mode}`}`, { headers: admin }), (reply) =>
            reply.json().total as number)
        const [all, liveCalls, testCalls] = [yield* usage(), yield* usage("live"), yield* usage("test")]
        assert.strictEqual(liveCalls, 1)
        assert.strictEqual(all, liveCalls + testCalls)
        assert.isAbove(testCalls, 10)

        // The same Idempotency-Key used in both modes: each space keeps its own answer.
        const key = `emptied-${appId}`
        const keyed = (owner: Space) =>
          client.call("POST", "/v1/customer", {
            secret: owner.secret,
            body: { name: "Keyed", email: "keyed@example.com" },
            headers: { "idempotency-key": key }
          })
        const testKeyed = ok(yield* keyed(test), "test keyed customer")
        const liveKeyed = ok(yield* keyed(live), "live keyed customer")

        const emptied = yield* client.call("DELETE", `/api/v1/app/${appId}/test-data`, { headers: admin })
        assert.strictEqual(emptied.status, 200, emptied.text)
        const removed = emptied.json()
        assert.deepStrictEqual([removed.appId, removed.mode], [appId, "test"])
        assert.isAbove(removed.records, 40)
        assert.strictEqual(removed.events, testEvents)
        assert.strictEqual(removed.modelFiles, 1)
        assert.isAbove(removed.webhookDeliveries, 0)

        for (const list of LISTS) {
          if (GLOBAL_LISTS.includes(list.id)) {
            continue
          }
          assert.deepStrictEqual(ok(yield* test.call("GET", list.path), list.id), [], list.id)
        }
        // The test space's keys are forgotten with its data: the key runs its create afresh there, and still replays in live.
        const again = yield* keyed(test)
        assert.strictEqual(again.status, 200, again.text)
        assert.notStrictEqual(again.json().id, testKeyed.id)
        assert.isNull(again.headers.get("idempotent-replayed"))
        const liveAgain = yield* keyed(live)
        assert.strictEqual(liveAgain.headers.get("idempotent-replayed"), "true")
        assert.strictEqual(liveAgain.json().id, liveKeyed.id)
        const content = yield* test.call("GET", `/v1/model-file/${made.file.id}/content`)
        assert.deepStrictEqual([content.status, content.text], [200, ""])
        // Live untouched; the test data starts again.
        assert.strictEqual(ok(yield* live.call("GET", `/v1/customer/${liveCustomer.id}`), "live customer").name, "Live")
        // The meter's rows stay: they are the app's usage.
        assert.isAbove(yield* usage("test"), testCalls)
        const customer = ok(yield* test.call("POST", "/v1/customer", { name: "Again", email: "again@example.com" }), "customer")
        const project = ok(yield* test.call("POST", "/v1/project", { customerId: customer.id, name: "Again" }), "project")
        assert.strictEqual(ok(yield* test.call("POST", "/v1/ticket", { projectId: project.id, name: "Again" }), "ticket").number, "T-000001")

        // Another app's test data, or an app id no app has, is emptied alike (nothing there: zeros); a bad id is a 400.
        const nothing = (yield* client.call("DELETE", `/api/v1/app/no-such-app/test-data`, { headers: admin })).json()
        assert.deepStrictEqual(nothing, { appId: "no-such-app", mode: "test", records: 0, events: 0, webhookDeliveries: 0, modelFiles: 0 })
        assert.strictEqual((yield* client.call("DELETE", `/api/v1/app/${encodeURIComponent("a~test")}/test-data`, { headers: admin })).status, 400)
        assert.strictEqual((yield* client.call("DELETE", `/api/v1/app/${appId}/test-data`)).status, 401)
      }), { timeout: 300_000 })
  })
}
