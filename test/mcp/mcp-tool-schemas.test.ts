/**
 * What an agent reads of the 9 tools in `tools/list` (raw 2026-07-28 HTTP),
 * and that it holds when the tools are called:
 *
 * - the annotations say what each tool does: a replace clears what it is not
 *   given (destructive), a second send to production changes nothing
 *   (idempotent), a part's model URL is downloaded (open world);
 * - the input schemas carry date-time formats, the states' enum, the
 *   quantity's bound, the model source's `oneOf`, examples that are real
 *   reference data, and a description of every id saying which MCP resource
 *   or tool gives it; no text names a REST path, and every `mfg://` resource
 *   named is one the server lists;
 * - the schema and the tool agree: what the official client's own validator
 *   (ajv, as `@modelcontextprotocol/client` validates) accepts, the tool
 *   accepts; the model source and the quantity are refused alike by both, and
 *   over REST with the same 400 naming the same fields;
 * - an update tool takes the record as a list answers it, changed, in one
 *   call; every invalid argument is named at once.
 */
import { assert, layer } from "@effect/vitest"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { ok, patch } from "../support/http.ts"
import { type Reply, TestApp, TestClient } from "../support/TestApp.ts"

type Json = Record<string, any>

const VERSION = "2026-07-28"
const META = { "io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {} }
const TOOL_NAMES = [
  "list_ticket_quotes",
  "create_ticket_quote",
  "update_ticket_quote",
  "lookup_ticket",
  "create_ticket",
  "send_ticket_to_production",
  "list_parts",
  "create_part",
  "update_part"
]
const MAX_QUANTITY = 1_000_000
const MODEL_SOURCES = ["modelEndpoint", "catalogueModelConfigurationId"] as const
/** With a model file the part says how it is made; a catalogue configuration says it itself. */
const SOURCE_REQUIRES = { modelEndpoint: ["technologyId", "materialId"], catalogueModelConfigurationId: [] }

/** What each tool tells a client of itself: read-only, destructive, idempotent, open world. */
const HINTS: Record<string, readonly [boolean, boolean, boolean, boolean]> = {
  list_ticket_quotes: [true, false, true, false],
  // Supersedes the ticket's open quote.
  create_ticket_quote: [false, true, false, false],
  // Clears omitted fields; accepted and rejected are final.
  update_ticket_quote: [false, true, true, false],
  lookup_ticket: [true, false, true, false],
  create_ticket: [false, false, false, false],
  // The ticket leaves the states it can change in; a second send is refused and changes nothing.
  send_ticket_to_production: [false, true, true, false],
  list_parts: [true, false, true, false],
  // Downloads the model URL; on a quoted ticket supersedes the open quote.
  create_part: [false, true, false, true],
  update_part: [false, true, true, true]
}

/** A 2026-07-28 request as the transport sends it. */
const request = (method: string, params: Json = {}) => ({
  body: { jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: META } },
  headers: {
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": method,
    ...(typeof params.name === "string" ? { "mcp-name": params.name } : {})
  }
})

/** The JSON-RPC message of a reply, plain JSON or the last SSE event. */
const message = (reply: Reply): Json => {
  const text = reply.text.trim()
  if (!text.startsWith("{")) {
    const data = text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).filter((line) => line !== "")
    return JSON.parse(data.at(-1)!)
  }
  return JSON.parse(text)
}

/** Where a JSON Schema holds the values an argument takes (not the rules across them, as a `oneOf`'s branches). */
const VALUE_KEYWORDS = ["items", "anyOf", "additionalProperties"]

/** Every property a caller gives, at any depth, with its name; what a read-only field holds is the engine's, not the caller's. */
const propertiesOf = (schema: unknown): ReadonlyArray<readonly [string, Json]> => {
  if (Array.isArray(schema)) return schema.flatMap(propertiesOf)
  if (typeof schema !== "object" || schema === null) return []
  const node = schema as Json
  const own: Array<readonly [string, Json]> = typeof node.properties === "object" ? Object.entries(node.properties as Json) : []
  const given = own.filter(([, value]) => !/^Read-only/.test(descriptionOf(value) ?? ""))
  return [...own, ...given.flatMap(([, value]) => propertiesOf(value)), ...VALUE_KEYWORDS.flatMap((key) => propertiesOf(node[key]))]
}

/** Every schema node of a JSON Schema that has `examples`. */
const exemplified = (schema: unknown): ReadonlyArray<Json> => {
  if (Array.isArray(schema)) return schema.flatMap(exemplified)
  if (typeof schema !== "object" || schema === null) return []
  const node = schema as Json
  return [...(Array.isArray(node.examples) ? [node] : []), ...Object.values(node).flatMap(exemplified)]
}

/** A property's description: its own, or its value's when it is `anyOf [value, null]`. */
const descriptionOf = (property: Json): string | undefined => property.description ?? valueOf(property).description

/** A property's value schema (without the `null` an optional property also takes, as a member of an `anyOf`). */
const valueOf = (property: Json): Json => {
  const members = property.anyOf as Array<Json> | undefined
  return members?.some((member) => member.type === "null") === true ? members.find((member) => member.type !== "null")! : property
}

/** A schema with its `$ref` to the tool's own `$defs` followed: the definition's keywords, and its own beside them. */
const resolved = (root: Json, schema: Json): Json => {
  const ref = schema.$ref as string | undefined
  if (ref === undefined) return schema
  assert.match(ref, /^#\/\$defs\//, "a tool's schema refers to its own definitions only")
  const { $ref: _, ...own } = schema
  return { ...root.$defs[ref.slice("#/$defs/".length)], ...own }
}

/** The formats a string schema states, directly or as alternatives. */
const formatsOf = (schema: Json): Array<string> => [
  ...(typeof schema.format === "string" ? [schema.format] : []),
  ...[...(schema.anyOf ?? []), ...(schema.allOf ?? [])].flatMap((member: Json) => formatsOf(member))
]

const isIdName = (name: string) => /^(id|ids|\w+Ids?)$/.test(name)

const validator = new AjvJsonSchemaValidator()

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`MCP tool metadata and schemas (${backend})`, (it) => {
    /** A fresh app with a customer, a project, a material and a ticket; raw calls to /v1/mcp and /v1. */
    const setup = Effect.gen(function*() {
      const client = yield* TestClient
      const appId = `tools-${Math.random().toString(36).slice(2)}`
      const { value: secret } = yield* client.createSecret(appId)
      const rest = (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret, body })
      const mcp = (method: string, params: Json = {}) =>
        Effect.map(client.call("POST", "/v1/mcp", { secret, ...request(method, params) }), (reply) => {
          assert.strictEqual(reply.status, 200, `${method}: ${reply.text}`)
          return message(reply)
        })
      const tools = (yield* mcp("tools/list")).result.tools as Array<Json>
      const toolNamed = (name: string) => tools.find((tool) => tool.name === name)!
      /** A tool call's result: its structured content, or the error body of a tool error. */
      const call = (name: string, args: Json) =>
        Effect.map(mcp("tools/call", { name, arguments: args }), (answer) => {
          const result = answer.result as Json
          const text = (result.content as Array<Json>).find((block) => block.type === "text")?.text
          return result.isError === true
            ? { error: JSON.parse(text) as Json, value: undefined }
            : { error: undefined, value: result.structuredContent as any }
        })
      const succeed = (name: string, args: Json) =>
        Effect.map(call(name, args), ({ error, value }) => {
          assert.isUndefined(error, `${name}: ${JSON.stringify(error)}`)
          return value
        })
      const customer = ok(yield* rest("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
      const project = ok(yield* rest("POST", "/project", { customerId: customer.id, name: "Gearbox" }), "project")
      const material = ok(yield* rest("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
      const ticket = yield* succeed("create_ticket", { projectId: project.id, name: "Schemas" })
      const part = (extra: Json = {}) => ({
        ticketId: ticket.id,
        modelEndpoint: { url: "https://files.example/models/bracket.stl" },
        technologyId: "fdm",
        materialId: material.id,
        quantity: 2,
        ...extra
      })
      return { appId, call, client, mcp, part, rest, secret, succeed, ticket, toolNamed, tools }
    })

    it.effect("annotations say what each tool does, and the calls bear them out", () =>
      Effect.gen(function*() {
        const { appId, call, part, rest, succeed, ticket, tools } = yield* setup
        assert.deepStrictEqual(tools.map((tool) => tool.name), TOOL_NAMES)
        for (const tool of tools) {
          const [readOnlyHint, destructiveHint, idempotentHint, openWorldHint] = HINTS[tool.name]!
          assert.deepStrictEqual(
            { ...tool.annotations, title: undefined },
            { title: undefined, readOnlyHint, destructiveHint, idempotentHint, openWorldHint },
            tool.name
          )
          assert.isString(tool.annotations.title, tool.name)
        }

        // update_part replaces the part: a field it is not given is cleared.
        const named = yield* succeed("create_part", part({ name: "Bracket" }))
        const replaced = yield* succeed("update_part", { id: named.id, ...part() })
        assert.notProperty(replaced, "name")

        // create_part and update_part reach the URL given: a download the fence refuses is the fetcher's error.
        const fetched = yield* call("create_part", part({ modelEndpoint: { url: "http://10.0.0.1/models/bracket.stl" } }))
        assert.deepInclude(fetched.error, { code: 422, type: "ModelUrlRefused" }, JSON.stringify(fetched.error))
        assert.match(fetched.error?.message, /^model-fetcher: http:\/\/10\.0\.0\.1\/models\/bracket\.stl is not fetched/)
        yield* rest("DELETE", `/ticket-model/${named.id}`)

        // update_ticket_quote replaces the quote: its notes go when they are not given.
        const priced = yield* succeed("create_part", part())
        yield* patch("ticketModel", appId, priced.id, { unitPrice: 12.5, totalPrice: 25 })
        const quote = yield* succeed("create_ticket_quote", { ticketId: ticket.id, notes: "Valid with drawing rev B" })
        const { notes: _notes, ...withoutNotes } = quote
        const accepted = yield* succeed("update_ticket_quote", { ...withoutNotes, state: "accepted" })
        assert.notProperty(accepted, "notes")

        // send_ticket_to_production again is refused and changes nothing.
        const jobs = yield* succeed("send_ticket_to_production", { id: ticket.id })
        assert.isAbove(jobs.length, 0)
        const again = yield* call("send_ticket_to_production", { id: ticket.id })
        assert.strictEqual(again.error?.code, 409)
        const stored = ok(yield* rest("GET", `/service-job?ticketId=${ticket.id}`), "jobs") as Array<Json>
        assert.sameMembers(stored.map((job) => job.id), jobs.map((job: Json) => job.id))
      }))

    it.effect("input schemas: date-time formats, enums, the quantity's bound, the model source's oneOf, ids described by their MCP source", () =>
      Effect.gen(function*() {
        const { mcp, toolNamed, tools } = yield* setup
        const input = (name: string) => toolNamed(name).inputSchema as Json
        const argument = (name: string, key: string) => resolved(input(name), input(name).properties[key])
        const property = (name: string, key: string) => valueOf(argument(name, key))

        for (const name of ["list_ticket_quotes", "list_parts"]) {
          for (const key of ["createdAt", "createdAt[from]", "createdAt[to]", "updatedAt", "updatedAt[from]", "updatedAt[to]"]) {
            assert.includeMembers(formatsOf(property(name, key)), ["date-time", "date"], `${name} ${key}`)
            assert.isString(descriptionOf(argument(name, key)), `${name} ${key}`)
            assert.strictEqual(property(name, key).maxLength, 40, `${name} ${key}`)
          }
          // A filter takes as many values as on REST.
          assert.strictEqual(property(name, "ids").maxItems, 100, name)
        }
        // An optional enum takes null among its values; a read-only field of the record as read says so.
        assert.deepStrictEqual(property("create_part", "modelEndpoint").properties.unit.enum, ["mm", "cm", "m", "in", "ft", "um", null])
        assert.deepStrictEqual(input("update_part").properties.geometry, { readOnly: true })
        // A date a client writes: an RFC 3339 date-time, or a date (00:00 UTC), as the tool accepts it.
        for (const [name, key] of [["create_ticket", "dueDate"], ["update_ticket_quote", "validUntil"]] as const) {
          assert.sameMembers(formatsOf(property(name, key)), ["date-time", "date"], `${name} ${key}`)
          assert.isString(property(name, key).description, `${name} ${key}`)
        }

        const states = ["sent", "accepted", "rejected", "superseded", "expired", "withdrawn"]
        assert.deepStrictEqual(property("list_ticket_quotes", "state").items.enum, states)
        assert.deepStrictEqual(property("update_ticket_quote", "state").enum, states)

        for (const name of ["create_part", "update_part"]) {
          const quantity = property(name, "quantity")
          assert.deepStrictEqual([quantity.type, quantity.minimum, quantity.maximum], ["integer", 1, MAX_QUANTITY], name)
          assert.deepStrictEqual(
            input(name).oneOf.map((branch: Json) => branch.required),
            MODEL_SOURCES.map((field) => [field, ...SOURCE_REQUIRES[field]]),
            name
          )
        }

        // Every id argument says what it refers to and where an agent finds it: an MCP resource, a tool, or the record as read.
        for (const tool of tools) {
          for (const [key, schema] of propertiesOf(tool.inputSchema)) {
            if (!isIdName(key)) continue
            const description = descriptionOf(schema)
            assert.isString(description, `${tool.name} ${key}`)
            const named = /mfg:\/\//.test(description!) || TOOL_NAMES.some((tool) => description!.includes(`\`${tool}\``)) ||
              /reads it|with these `id`s/.test(description!)
            assert.isTrue(named, `${tool.name} ${key}: ${description}`)
          }
        }

        // Nothing an agent reads points to REST: no method and path, no /v1.
        const listed = JSON.stringify(tools)
        const rest = [...listed.matchAll(/\b(GET|POST|PUT|PATCH|DELETE)\b|\/v1\b|REST/g)].map((match) => listed.slice(match.index - 60, match.index + 40))
        assert.deepStrictEqual(rest, [])

        // Every resource named is one the server serves.
        const served = new Set<string>([
          ...((yield* mcp("resources/list")).result.resources as Array<Json>).map((resource) => resource.uri as string),
          ...((yield* mcp("resources/templates/list")).result.resourceTemplates as Array<Json>).map((template) =>
            (template.uriTemplate as string).split("{")[0]!
          )
        ])
        const named = new Set([...listed.matchAll(/mfg:\/\/[a-z-]+/g)].map((match) => match[0]))
        assert.isAbove(named.size, 5)
        for (const uri of named) assert.isTrue(served.has(uri), `${uri} is not served: ${[...served].join(", ")}`)
      }))

    it.effect("examples are valid values, and the ids among them are real reference data", () =>
      Effect.gen(function*() {
        const { rest, tools } = yield* setup
        let count = 0
        for (const tool of tools) {
          for (const node of exemplified(tool.inputSchema)) {
            const { examples, ...schema } = node
            const check = validator.getValidator(schema)
            for (const example of examples as Array<unknown>) {
              count++
              const result = check(example)
              assert.isTrue(result.valid, `${tool.name}: ${JSON.stringify(example)} ${result.errorMessage}`)
            }
          }
        }
        assert.isAbove(count, 10)

        const examplesOf = (key: string) =>
          tools.flatMap((tool) => propertiesOf(tool.inputSchema).filter(([name]) => name === key).flatMap(([, schema]) => valueOf(schema).examples ?? []))
        const references = { technologyId: "/technology", colourId: "/colour", currencyId: "/currency", serviceIds: "/service" } as const
        for (const [key, path] of Object.entries(references)) {
          const ids = examplesOf(key).flat() as Array<string>
          assert.isAbove(ids.length, 0, key)
          for (const id of ids) assert.strictEqual(ok(yield* rest("GET", `${path}/${id}`), `${key} ${id}`).id, id)
        }
        const fields = ok(yield* rest("GET", "/production-parameter-field?technologyId=fdm"), "fields") as Array<Json>
        for (const example of examplesOf("productionParameterIds") as Array<Record<string, string>>) {
          for (const [name, valueId] of Object.entries(example)) {
            const field = fields.find((candidate) => candidate.name === name)
            assert.isDefined(field, name)
            assert.include(field!.values.map((value: Json) => value.id), valueId)
          }
        }
      }))

    it.effect("the schema and the tool agree: the client's validator and the tool accept and refuse alike, and REST names the same fields", () =>
      Effect.gen(function*() {
        const { call, part, rest, toolNamed } = yield* setup
        /** The tool's verdict on `args`: the fields its 400 names, or undefined when validation let them through. */
        const refused = (name: string, args: Json) =>
          Effect.map(call(name, args), ({ error }) => error?.code === 400 ? (error.errors as Array<Json>).map((problem) => problem.path).sort() : undefined)
        const endpoint = { url: "https://files.example/models/bracket.stl" }
        const configuration = "no-such-configuration"
        const cases: ReadonlyArray<readonly [string, string, Json, boolean]> = [
          ["create_part", "a model URL", part(), true],
          ["create_part", "a catalogue configuration", part({ modelEndpoint: undefined, catalogueModelConfigurationId: configuration }), true],
          ["create_part", "both model sources", part({ catalogueModelConfigurationId: configuration }), false],
          ["create_part", "neither", part({ modelEndpoint: undefined }), false],
          ["create_part", "a null model URL and a configuration", part({ modelEndpoint: null, catalogueModelConfigurationId: configuration }), true],
          ["create_part", "a model URL and a null configuration", part({ modelEndpoint: endpoint, catalogueModelConfigurationId: null }), true],
          ["create_part", "both null", part({ modelEndpoint: null, catalogueModelConfigurationId: null }), false],
          ["create_part", "a model URL without a material", part({ materialId: undefined }), false],
          ["create_part", "the most pieces", part({ quantity: MAX_QUANTITY }), true],
          ["create_part", "one piece too many", part({ quantity: MAX_QUANTITY + 1 }), false],
          ["create_part", "no piece", part({ quantity: 0 }), false],
          ["create_part", "half a piece", part({ quantity: 2.5 }), false],
          ["create_part", "an unknown field of the model URL", part({ modelEndpoint: { ...endpoint, size: 1 } }), false],
          ["list_ticket_quotes", "a state", { state: ["sent", "expired"] }, true],
          ["list_ticket_quotes", "an unknown state", { state: ["sent", "lost"] }, false],
          ["create_ticket", "a due date-time", { projectId: "p", name: "Due", dueDate: "2026-12-01T17:00:00Z" }, true],
          ["create_ticket", "a due date", { projectId: "p", name: "Due", dueDate: "2026-12-01" }, true],
          ["create_ticket", "a date-time without its offset", { projectId: "p", name: "Due", dueDate: "2026-12-01T17:00:00" }, false],
          ["create_ticket", "a date in words", { projectId: "p", name: "Due", dueDate: "Dec 1 2026" }, false],
          ["list_parts", "a date filter", { "createdAt[from]": "2026-11-22", "createdAt[to]": "2026-11-22T10:00:00Z" }, true],
          ["list_parts", "a date filter in words", { createdAt: "yesterday" }, false],
          ["list_parts", "a far offset", { offset: 2_000_000_000 }, true],
          ["list_parts", "the most ids a filter takes", { ids: Array.from({ length: 100 }, (_, index) => `p${index}`) }, true],
          ["list_parts", "more ids than a filter takes", { ids: Array.from({ length: 101 }, (_, index) => `p${index}`) }, false],
          ["create_part", "a null unit", part({ modelEndpoint: { ...endpoint, unit: null } }), true],
          ["create_part", "an unknown unit", part({ modelEndpoint: { ...endpoint, unit: "yd" } }), false],
          ["create_part", "one service more than a part takes", part({ serviceIds: Array.from({ length: 101 }, () => "sanding") }), false],
          ["list_parts", "an offset past 32 bits", { offset: 10_000_000_000 }, false],
          ["update_part", "an ifMatch that is no etag", { ...part(), id: "p", ifMatch: "" }, false]
        ]
        for (const [name, what, args, valid] of cases) {
          const sent = JSON.parse(JSON.stringify(args)) as Json
          const schema = validator.getValidator(toolNamed(name).inputSchema)(sent)
          const tool = yield* refused(name, sent)
          assert.strictEqual(schema.valid, valid, `${name}, ${what}: the schema says ${schema.errorMessage ?? "valid"}`)
          assert.strictEqual(tool === undefined, valid, `${name}, ${what}: the tool says ${tool ?? "valid"}`)
          if (name !== "create_part" || valid) continue
          // A REST caller gets the same 400, naming the same fields.
          const reply = yield* rest("POST", "/ticket-model", sent)
          assert.strictEqual(reply.status, 400, `${what}: ${reply.text}`)
          assert.deepStrictEqual((reply.json().errors as Array<Json>).map((problem) => problem.path).sort(), tool, what)
        }
      }))

    it.effect("an update takes the record as a list answers it, changed, in one call; every invalid argument is named at once", () =>
      Effect.gen(function*() {
        const { appId, call, part, rest, succeed, ticket } = yield* setup
        const created = yield* succeed("create_part", part({ name: "Bracket", productionParameterIds: { layerHeight: "fdm-lh-0.2" } }))
        const [listed] = yield* succeed("list_parts", { ids: [created.id] })
        // The record as read, read-only fields and all; a price sent back is ignored (the engine sets prices).
        const updated = yield* succeed("update_part", { ...listed, quantity: 7, unitPrice: 999 })
        assert.strictEqual(updated.quantity, 7)
        assert.strictEqual(updated.name, "Bracket")
        // The parameter chosen, and the default of each other: what the part is priced with.
        assert.deepStrictEqual(updated.productionParameterIds, { layerHeight: "fdm-lh-0.2", infill: "fdm-infill-30", walls: "fdm-walls-2" })
        assert.isNull(updated.unitPrice)
        assert.deepStrictEqual(ok(yield* rest("GET", `/ticket-model/${created.id}`), "part"), updated)

        yield* patch("ticketModel", appId, created.id, { unitPrice: 12.5, totalPrice: 87.5 })
        yield* succeed("create_ticket_quote", { ticketId: ticket.id })
        const [quote] = yield* succeed("list_ticket_quotes", { ticketId: [ticket.id] })
        const noted = yield* succeed("update_ticket_quote", { ...quote, notes: "Valid with drawing rev B" })
        assert.strictEqual(noted.notes, "Valid with drawing rev B")
        assert.strictEqual(noted.total, quote.total)

        // Every invalid argument at once, as the REST 400 lists them.
        const many = yield* call("create_part", {
          ...part({ quantity: MAX_QUANTITY + 1, modelEndpoint: { url: "ftp://files.example/a.stl", size: 1 } }),
          ticketId: undefined,
          colour: "red"
        })
        const paths = (many.error?.errors as Array<Json>).map((problem) => problem.path)
        assert.sameMembers(paths, ["colour", "ticketId", "quantity", "modelEndpoint.url", "modelEndpoint.size"], JSON.stringify(many.error))
        const restMany = yield* rest("POST", "/ticket-model", {
          ...part({ quantity: MAX_QUANTITY + 1, modelEndpoint: { url: "ftp://files.example/a.stl", size: 1 } }),
          ticketId: undefined,
          colour: "red"
        })
        assert.sameMembers((restMany.json().errors as Array<Json>).map((problem) => problem.path), paths)

        // The record as read with bad values: each named, read-only fields not among them.
        const bad = yield* call("update_part", { ...listed, quantity: 0, technologyId: "", serviceIds: "sanding" })
        assert.sameMembers((bad.error?.errors as Array<Json>).map((problem) => problem.path), ["quantity", "technologyId", "serviceIds"])
      }))

    it.effect("tools/list stays under 40 KB with every field: each output schema names every field of the record the tool answers", () =>
      Effect.gen(function*() {
        const { appId, client, part, rest, secret, succeed, ticket, tools } = yield* setup
        const listed = yield* Effect.promise(async () => {
          const response = await fetch(`${client.baseUrl}/v1/mcp`, {
            method: "POST",
            headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", ...request("tools/list").headers },
            body: JSON.stringify(request("tools/list").body)
          })
          return response.text()
        })
        assert.isBelow(Buffer.byteLength(listed), 40_000, "the tools/list answer, in bytes")
        // And as a 2025-11-25 client reads it (no output schema of a list, which that revision cannot carry).
        const legacy = yield* Effect.promise(async () => {
          const response = await fetch(`${client.baseUrl}/v1/mcp`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${secret}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": "2025-11-25"
            },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
          })
          return response.text()
        })
        assert.include(legacy, "\"update_part\"")
        assert.isBelow(Buffer.byteLength(legacy), 40_000, "the 2025-11-25 tools/list answer, in bytes")
        // No bound a field does not mean: an integer without one has none (not ±2^53 - 1).
        assert.notMatch(listed, /9007199254740991/)

        const created = yield* succeed("create_part", part())
        yield* patch("ticketModel", appId, created.id, { unitPrice: 1, totalPrice: 2 })
        const quote = yield* succeed("create_ticket_quote", { ticketId: ticket.id })
        const records: Record<string, Json> = {
          part: ok(yield* rest("GET", `/ticket-model/${created.id}`), "part"),
          quote: ok(yield* rest("GET", `/ticket-quote/${quote.id}`), "quote"),
          ticket: ok(yield* rest("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket")
        }
        const answers: Record<string, string> = {
          list_ticket_quotes: "quote",
          create_ticket_quote: "quote",
          update_ticket_quote: "quote",
          lookup_ticket: "ticket",
          create_ticket: "ticket",
          list_parts: "part",
          create_part: "part",
          update_part: "part"
        }
        for (const tool of tools) {
          const kind = answers[tool.name]
          if (kind === undefined) continue
          const output = tool.outputSchema as Json
          const record = output.type === "array" ? output.items : output
          assert.includeMembers(Object.keys(record.properties), Object.keys(records[kind]!), tool.name)
          assert.includeMembers(record.required, ["id", "createdAt", "updatedAt"], tool.name)
        }
      }))
  })
}
