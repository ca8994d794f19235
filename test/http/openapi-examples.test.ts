/**
 * Every example of the OpenAPI document at /openapi.json is one the service
 * accepts: each request body example (`example`, and each of `examples`)
 * and each parameter example is sent to its operation over HTTP, against an
 * app with `cli seed`'s demo data and an order taken through production,
 * and the answer must not be a 400 (nor a 500).
 *
 * The examples name records by id, and the service only accepts the ids of
 * records the app can see, so ids are substituted by this rule:
 * - a field or parameter named `id`, `ids`, `<x>Id` or `<x>Ids` (in a body,
 *   at any depth, and in the path and query) takes the id of a record of the
 *   resource it names: the longest tail of `<x>` that is a list path of the
 *   API (`targetServiceJobId` → `/service-job`, `partItemId` → `/item`), or,
 *   for the two ids that name no list, the first configuration of a
 *   catalogue model (`catalogueModelConfigurationId`) and a reel group's
 *   number (`inventoryProductLocationId`);
 * - `id` and `ids` take the id of the path's own resource (`/customer/{id}`
 *   → a customer), except an `id` inside a body's nested object or array (a
 *   new configuration's own id), which is kept;
 * - a name with no such resource, or whose resource has no record in the
 *   app (`toolIds`), keeps the example's value.
 * Everything else (names, numbers, enums, dates, URLs, nested objects) is
 * sent exactly as the document gives it. Deletions go last, so that every
 * other operation finds its records.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { seedDemoData } from "../../src/engine/seed.ts"
import { backends } from "../support/backends.ts"
import { ok } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

type Json = Record<string, any>

const METHODS = ["get", "put", "post", "delete", "patch"] as const

/** `ticketModel` → `ticket-model`. */
const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase()

/** The tails of a camelCase name, longest first: `targetServiceJob` → targetServiceJob, serviceJob, job. */
const tails = (name: string) => {
  const words = kebab(name).split("-")
  return words.map((_, index) => words.slice(index).join("-"))
}

/** One request the document's examples make. */
interface Example {
  readonly what: string
  readonly method: string
  readonly path: string
  /** The path parameters' examples. */
  readonly params: Readonly<Record<string, unknown>>
  readonly query: ReadonlyArray<readonly [string, unknown]>
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

/**
 * The requests of one operation: each body example (or none), with the
 * required query parameters; then each optional query parameter's example
 * alone.
 */
const examplesOf = (path: string, method: string, operation: Json): ReadonlyArray<Example> => {
  const parameters = (operation.parameters ?? []) as ReadonlyArray<Json>
  const exemplified = (where: string) => parameters.filter((p) => p.in === where && p.example !== undefined)
  const headers = Object.fromEntries(exemplified("header").map((p) => [p.name, String(p.example)]))
  const params = Object.fromEntries(exemplified("path").map((p) => [p.name, p.example]))
  const required = exemplified("query").filter((p) => p.required === true).map((p) => [p.name as string, p.example] as const)
  const media = operation.requestBody?.content?.["application/json"] as Json | undefined
  const bodies: ReadonlyArray<readonly [string, unknown]> = media === undefined
    ? [["no body", undefined]]
    : media.examples !== undefined
    ? Object.entries(media.examples as Json).map(([name, example]) => [`example "${name}"`, (example as Json).value])
    : media.example !== undefined
    ? [["example", media.example]]
    : []
  const base = { method: method.toUpperCase(), path, params, headers }
  return [
    ...bodies.map(([what, body]) => ({ ...base, what, query: required, body })),
    ...exemplified("query").filter((p) => p.required !== true).map((p) => ({
      ...base,
      what: `query ${p.name}`,
      query: [...required, [p.name as string, p.example] as const],
      body: bodies[0]?.[1]
    }))
  ]
}

const MODEL_SOURCES = ["modelEndpoint", "catalogueModelConfigurationId"]

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 120_000, excludeTestServices: true })(`OpenAPI examples (${backend})`, (it) => {
    it.effect("documents the model source as a oneOf, the item read under the spec's name, and every date and paging parameter", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const document = (yield* client.call("GET", "/openapi.json")).json() as Json
        const part = document.components.schemas.TicketModel
        const bodies = [
          document.paths["/v1/ticket-model"].post.requestBody.content["application/json"],
          document.paths["/v1/ticket-model/{id}"].put.requestBody.content["application/json"]
        ]
        for (const schema of [part, ...bodies.map((media) => media.schema)]) {
          // With a model file the part's technology and material are required; a catalogue configuration supplies them.
          assert.deepStrictEqual(schema.oneOf.map((branch: Json) => branch.required), [[MODEL_SOURCES[0], "technologyId", "materialId"], [MODEL_SOURCES[1]]])
          // Each branch's field is the field's own schema, not null.
          assert.strictEqual(schema.oneOf[0].properties.modelEndpoint.required[0], "url")
          assert.strictEqual(schema.oneOf[1].properties.catalogueModelConfigurationId.type, "string")
        }
        for (const media of bodies) {
          const examples = Object.values(media.examples as Json).map((example) => (example as Json).value as Json)
          assert.deepStrictEqual(examples.map((example) => MODEL_SOURCES.filter((field) => field in example)), MODEL_SOURCES.map((field) => [field]))
        }
        assert.deepStrictEqual(MODEL_SOURCES.filter((field) => field in part.examples[0]), ["modelEndpoint"])

        // GET /item/{partItemId} as the spec writes it; PUT and DELETE share the path.
        assert.containsAllKeys(document.paths["/v1/item/{partItemId}"], ["get", "put", "delete"])
        assert.include(document.paths["/v1/item/{partItemId}"].put.parameters[0].description, "`/v1/item/{id}`")

        for (const [path, item] of Object.entries(document.paths as Json)) {
          for (const parameter of ((item as Json).get?.parameters ?? []) as ReadonlyArray<Json>) {
            if (!/^(limit|offset|\w+At(\[(from|to)\])?)$/.test(parameter.name)) continue
            assert.match(parameter.description, /^(Only the records whose|The page size|How many records to skip)/, `${path} ${parameter.name}`)
            assert.isDefined(parameter.example, `${path} ${parameter.name}`)
          }
        }
        const limit = (document.paths["/v1/customer"].get.parameters as Array<Json>).find((parameter) => parameter.name === "limit")!
        assert.include(limit.description, "default 100")
      }))

    it.effect("every request body and parameter example of the document is accepted (no 400)", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const document = (yield* client.call("GET", "/openapi.json")).json() as Json
        const appId = `examples-${Math.random().toString(36).slice(2)}`
        yield* seedDemoData(appId)
        const { value: secret } = yield* client.createSecret(appId)
        const call = (method: string, path: string, body?: unknown) =>
          Effect.map(client.call(method, `/v1${path}`, { secret, body }), (reply) => ok(reply, `${method} ${path}`))

        // An order through production, so that every resource has a record.
        const [customer] = (yield* call("GET", "/customer?externalReference=demo-acme")) as Array<Json>
        const project = yield* call("POST", "/project", { customerId: customer!.id, name: "Examples order" })
        const ticket = yield* call("POST", "/ticket", { projectId: project.id, name: "Examples ticket" })
        yield* call("POST", "/ticket-model/from-catalogue", {
          ticketId: ticket.id,
          parts: [{ catalogueModelConfigurationId: "demo-bearing-block-fdm", quantity: 2 }]
        })
        yield* call("POST", "/item", { ticketId: ticket.id, name: "Packaging", quantity: 1, unitPrice: 5 })
        const quote = yield* call("POST", `/ticket/${ticket.id}/quote`, {})
        const { id: _id, number: _n, exchangeRate: _e, total: _t, createdAt: _c, updatedAt: _u, ...quoteBody } = quote
        yield* call("PUT", `/ticket-quote/${quote.id}`, { ...quoteBody, state: "accepted" })
        yield* call("PUT", `/ticket/${ticket.id}/send-to-production`)
        yield* call("POST", "/meeting-note", { customerId: customer!.id, title: "Kick-off", body: "Notes" })
        yield* call("POST", "/production-note", { ticketId: ticket.id, body: "Handle with care" })
        // A second ticket, still a draft, for the operations that need one.
        const draft = yield* call("POST", "/ticket", { projectId: project.id, name: "Draft ticket" })
        yield* call("POST", "/ticket-model/from-catalogue", {
          ticketId: draft.id,
          parts: [{ catalogueModelConfigurationId: "demo-bearing-block-fdm", quantity: 1 }]
        })

        // Resource list path → the id of one of its records (the first the list answers).
        const lists = Object.keys(document.paths).filter((path) => /^\/v1\/[a-z-]+$/.test(path) && document.paths[path].get !== undefined)
        const ids = new Map<string, unknown>()
        for (const list of lists) {
          const reply = yield* client.call("GET", list, { secret })
          const records = reply.status === 200 ? reply.json() : []
          if (Array.isArray(records) && records.length > 0) ids.set(list.slice("/v1/".length), records.at(-1).id)
        }
        const models = (yield* call("GET", "/catalogue-model")) as Array<Json>
        ids.set("catalogue-model-configuration", models[0]!.configurations[0].id)
        ids.set("inventory-product-location", ids.get("reel-group"))
        ids.set("part-item", ids.get("item"))
        // The operations on a ticket's parts and items need it open: the draft's.
        ids.set("ticket", draft.id)
        const [draftPart] = (yield* call("GET", `/ticket-model?ticketId=${draft.id}`)) as Array<Json>
        ids.set("ticket-model", draftPart!.id)

        /** The id for a field or parameter `name` (see the rule above); undefined: keep the example. */
        const idFor = (name: string, resource: string): unknown => {
          if (name === "id" || name === "ids") return ids.get(resource)
          const match = /^(\w+?)Ids?$/.exec(name)
          if (match === null) return undefined
          for (const tail of tails(match[1]!)) if (ids.has(tail)) return ids.get(tail)
          return undefined
        }
        const substitute = (value: unknown, name: string, resource: string, depth: number): unknown => {
          if (Array.isArray(value)) {
            const id = idFor(name, resource)
            return id !== undefined && value.every((item) => typeof item !== "object") ? [id] : value.map((item) => substitute(item, name, resource, depth + 1))
          }
          if (typeof value === "object" && value !== null) {
            return Object.fromEntries(
              Object.entries(value).map(([key, item]) => [key, key === "id" && depth > 0 ? item : substitute(item, key, resource, depth + 1)])
            )
          }
          if (name === "") return value
          return idFor(name, resource) ?? value
        }

        const requests = Object.entries(document.paths as Json)
          .filter(([path]) => path !== "/v1/mcp")
          .flatMap(([path, item]) => METHODS.filter((method) => item[method] !== undefined).flatMap((method) => examplesOf(path, method, item[method])))
          .sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"))
        assert.isAbove(requests.length, 150)

        const refused: Array<string> = []
        let keyed = 0
        for (const request of requests) {
          const resource = request.path.split("/")[2]!
          const url = request.path.replace(/\{(\w+)\}/g, (_, name: string) => String(idFor(name, resource) ?? request.params[name]))
          const search = new URLSearchParams(
            request.query.map(([name, value]): [string, string] => [name, String(substitute(value, name.replace(/\[.*$/, ""), resource, 1))])
          )
          const headers = Object.fromEntries(
            Object.entries(request.headers).map(([name, value]) =>
              // A key is single-use: every request after the first that sends the example gets a key of its own.
              name.toLowerCase() === "idempotency-key" && keyed++ > 0 ? [name, randomUUID()] : [name, value]
            )
          )
          const body = request.body === undefined ? undefined : substitute(request.body, "", resource, 0)
          const reply: Reply = yield* client.call(request.method, `${url}${search.size > 0 ? `?${search}` : ""}`, { secret, headers, body })
          if (reply.status === 400 || reply.status === 500) {
            refused.push(`${request.method} ${request.path} (${request.what}) → ${reply.status} ${reply.text}\n  sent ${url}?${search} ${JSON.stringify(body)}`)
          }
        }
        assert.deepStrictEqual(refused, [])
      }))
  })
}
