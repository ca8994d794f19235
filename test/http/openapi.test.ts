/**
 * The OpenAPI document at /openapi.json, as an integrator meets it: every
 * operation documented (operationId, summary, tag, security, 401 with its
 * exact body, passthrough errors, empty 200), `redocly lint` with the
 * recommended ruleset free of errors, and a client generated from it
 * (openapi-typescript + openapi-fetch), type-checked and run against the
 * server. /docs renders the same document.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { TOOL_SPECS } from "../../src/contract/mcp/tools.ts"
import { PublicApi } from "../../src/contract/PublicApi.ts"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { backends } from "../support/backends.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const BIN = join(ROOT, "node_modules/.bin")
const METHODS = ["get", "put", "post", "delete", "patch"] as const

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command of the project (node_modules/.bin first on PATH); never fails, reports the exit code. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  Effect.promise(() =>
    new Promise<Run>((done) => {
      execFile(command, [...args], {
        cwd,
        env: { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ""}`, NO_COLOR: "1", REDOCLY_TELEMETRY: "off" },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 120_000
      }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        done({ code, stdout, stderr })
      })
    })
  )

/** A temporary directory that resolves the project's packages (node_modules linked in). */
const workspace = Effect.acquireRelease(
  Effect.promise(async () => {
    const dir = await mkdtemp(join(tmpdir(), "openapi-"))
    await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir")
    return dir
  }),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

type Json = Record<string, any>

const operationsOf = (document: Json) =>
  Object.entries(document.paths as Json).flatMap(([path, item]) =>
    METHODS.flatMap((method) => (item[method] === undefined ? [] : [{ path, method, operation: item[method] as Json }]))
  )

/** The sub-schemas of a schema node: what its keywords hold (an object's properties, a list's items, the alternatives). */
const subSchemas = (node: Json): ReadonlyArray<unknown> => [
  ...Object.values(node.properties ?? {}),
  ...(Array.isArray(node.prefixItems) ? node.prefixItems : []),
  ...["items", "additionalProperties", "contains", "propertyNames"].map((key) => node[key]),
  ...["anyOf", "oneOf", "allOf"].flatMap((key) => (Array.isArray(node[key]) ? node[key] : []))
]

/** The types a schema node states (`type: "string"` or a list of types). */
const typesOf = (node: Json): ReadonlyArray<string> => (Array.isArray(node.type) ? node.type : typeof node.type === "string" ? [node.type] : [])

/**
 * What a schema a client sends leaves unbounded, where each tool reads a
 * bound: on the node of the type itself (Spectral, OWASP's api4 rules), not
 * in an `allOf` beside it. A string needs `maxLength` (or a fixed set), a
 * list `maxItems`, an integer its `format` and both bounds. References are
 * followed, each once.
 */
const unboundedInputs = (schema: unknown, where: string, components: Json, seen: Set<string>): ReadonlyArray<string> => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return []
  const node = schema as Json
  if (typeof node.$ref === "string") {
    if (seen.has(node.$ref)) return []
    seen.add(node.$ref)
    const name = node.$ref.split("/").at(-1)!
    return unboundedInputs(components.schemas[name], `${where} (${name})`, components, seen)
  }
  const types = typesOf(node)
  const fixed = node.enum !== undefined || node.const !== undefined
  const problems = [
    ...(types.includes("string") && node.maxLength === undefined && !fixed ? [`${where}: a string without maxLength`] : []),
    ...(types.includes("array") && node.maxItems === undefined ? [`${where}: an array without maxItems`] : []),
    ...(types.includes("integer") && (node.format === undefined ||
        (node.minimum ?? node.exclusiveMinimum) === undefined || (node.maximum ?? node.exclusiveMaximum) === undefined)
      ? [`${where}: an integer without its format, minimum and maximum`]
      : [])
  ]
  const named = (key: string) => Object.entries((node[key] ?? {}) as Json).map(([name, value]) => [`${where}.${name}`, value] as const)
  const inner = [
    ...named("properties"),
    ...subSchemas({ ...node, properties: undefined }).map((value) => [where, value] as const)
  ]
  return [...problems, ...inner.flatMap(([path, value]) => unboundedInputs(value, path, components, seen))]
}

/** Every schema node of a document (references not followed: each component is walked where it is defined). */
const everySchemaNode = (value: unknown): ReadonlyArray<Json> => {
  if (Array.isArray(value)) return value.flatMap(everySchemaNode)
  if (typeof value !== "object" || value === null) return []
  return [value as Json, ...Object.values(value).flatMap(everySchemaNode)]
}

/** Model files on `*.example` are placeholders: a part is created without fetching anything. */
const placeholderFetcher = modelFetcherLayer({ allowPrivate: false, timeout: Duration.seconds(5), placeholderHosts: ["example"] })

/** The smoke flow: typed calls of the generated client (checked by tsc before it runs). */
const SMOKE = `
import createClient from "openapi-fetch"
import type { paths } from "./schema.ts"

const [baseUrl, secret] = process.argv.slice(2) as [string, string]
const client = createClient<paths>({ baseUrl, headers: { Authorization: secret } })
const bearer = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${secret}\` } })
const anonymous = createClient<paths>({ baseUrl })

const created = await client.POST("/v1/customer", { body: { name: "Smoke Ltd", email: "smoke@example.com", externalReference: "SMOKE-1" } })
if (created.data === undefined) throw new Error(\`create failed: \${created.response.status}\`)
const id: string = created.data.id

const read = await bearer.GET("/v1/customer/{id}", { params: { path: { id } } })
const other = await client.POST("/v1/customer", { body: { name: "Other", email: "other@example.com" } })
const listed = await client.GET("/v1/customer", { params: { query: { ids: [id, other.data?.id ?? ""] } } })
const replaced = await client.PUT("/v1/customer/{id}", { params: { path: { id } }, body: { name: "Smoke Ltd (renamed)", email: "smoke@example.com" } })
const missing = await client.GET("/v1/customer/{id}", { params: { path: { id: "does-not-exist" } } })
const unauthorized = await anonymous.GET("/v1/customer")
const invalid = await client.POST("/v1/customer", { body: { name: "", email: "smoke@example.com" } })

// Paging: \`limit\` and \`offset\` are integers; the total and the next page are headers.
const firstPage = await client.GET("/v1/customer", { params: { query: { limit: 1, offset: 0 } } })
const paging = { total: firstPage.response.headers.get("x-total-count"), link: firstPage.response.headers.get("link"), size: firstPage.data?.length }

// Read-modify-write of a part: the part as read is the body of its PUT.
const project = await client.POST("/v1/project", { body: { customerId: id, name: "Smoke order" } })
const ticket = await client.POST("/v1/ticket", { body: { projectId: project.data?.id ?? "", name: "Smoke ticket" } })
const material = await client.POST("/v1/material", { body: { name: "PLA", technologyId: "fdm" } })
const part = await client.POST("/v1/ticket-model", {
  body: {
    ticketId: ticket.data?.id ?? "",
    modelEndpoint: { url: "https://files.example/smoke.stl" },
    technologyId: "fdm",
    materialId: material.data?.id ?? "",
    quantity: 2
  }
})
const partId = part.data?.id ?? ""
const partRead = await client.GET("/v1/ticket-model/{id}", { params: { path: { id: partId } } })
// A read's 200 is the record, or the spec's empty body (no data): check before use.
if (!partRead.data) throw new Error(\`part read failed: \${partRead.response.status}\`)
const partReplaced = await client.PUT("/v1/ticket-model/{id}", { params: { path: { id: partId } }, body: { ...partRead.data, quantity: 5 } })

console.log(JSON.stringify({
  created: created.data,
  read: { status: read.response.status, data: read.data },
  listed: { status: listed.response.status, ids: (listed.data ?? []).map((customer) => customer.id).sort() },
  replaced: { status: replaced.response.status, data: replaced.data },
  missing: { status: missing.response.status, data: missing.data ?? null },
  unauthorized: { status: unauthorized.response.status, error: unauthorized.error },
  invalid: { status: invalid.response.status, error: invalid.error },
  paging,
  part: { status: partReplaced.response.status, quantity: partReplaced.data?.quantity, sameId: partReplaced.data?.id === partId }
}))
`

for (const backend of backends.slice(0, 1)) {
  layer(TestApp(backend, {}, { modelFetcher: placeholderFetcher }), { timeout: 180_000, excludeTestServices: true })(`OpenAPI document (${backend})`, (it) => {
    const fetchDocument = Effect.gen(function*() {
      const client = yield* TestClient
      const reply = yield* client.call("GET", "/openapi.json")
      assert.strictEqual(reply.status, 200)
      return reply.json() as Json
    })

    it.effect("documents every operation: operationId, summary, tag, security and the standard responses", () =>
      Effect.gen(function*() {
        const document = yield* fetchDocument
        assert.strictEqual(document.openapi, "3.1.0")
        const operations = operationsOf(document)
        assert.isAbove(operations.length, 100)
        const tags = new Set((document.tags as Array<Json>).map((tag) => tag.name))
        const ids = new Set<string>()
        for (const { path, method, operation } of operations) {
          const where = `${method.toUpperCase()} ${path}`
          assert.match(operation.operationId, /^[a-zA-Z]+\.[a-zA-Z]+$/, where)
          assert.isFalse(ids.has(operation.operationId), `duplicate operationId at ${where}`)
          ids.add(operation.operationId)
          assert.isString(operation.summary, where)
          assert.lengthOf(operation.tags, 1, where)
          assert.isTrue(tags.has(operation.tags[0]), `${where}: tag ${operation.tags[0]} is declared`)
          assert.deepStrictEqual(operation.security, [{ IncomingSecret: [] }], where)

          const unauthorized = operation.responses["401"]
          assert.deepStrictEqual(unauthorized.content["application/json"].example, { code: 401, message: "Not Authorized" }, where)
          assert.strictEqual(unauthorized.headers["www-authenticate"].schema.const, "Bearer realm=\"v1\"", where)
          for (const status of ["400", "503"]) assert.property(operation.responses, status, where)
          // MCP tools answer engine and downstream errors as tool results, not as passthrough responses.
          if (operation.operationId === "mcp.post") continue
          const passthrough = operation.responses.default
          assert.containsAllKeys(passthrough.headers, ["x-error-source", "x-error-source-request-id"], where)
          assert.strictEqual(passthrough.content["application/json"].schema.$ref, "#/components/schemas/EngineError", where)

          const ok = operation.responses["200"]
          assert.isString(ok.description, where)
          const media = ok.content?.["application/json"]
          if (media !== undefined) assert.isDefined(media.example, `${where}: 200 example`)
          const body = operation.requestBody?.content?.["application/json"]
          // One example, or one per choice (the model source of a part).
          if (body !== undefined) assert.isDefined(body.example ?? body.examples, `${where}: request example`)
        }
        // The operation ids are the group and endpoint identifiers the engine and the meter use.
        for (const id of ["customer.list", "customer.create", "customer.get", "customer.replace", "project.lookup", "ticket.quote", "mcp.post"]) {
          assert.isTrue(ids.has(id), id)
        }
      }))

    it.effect("every operation the document marks as secured answers the exact 401 without a secret", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const document = yield* fetchDocument
        const operations = operationsOf(document)
        // Every endpoint of PublicApi (the contract's 130 and the request log), and POST /v1/mcp, is in the document.
        const endpoints = Object.values(PublicApi.groups).reduce((count, group) => count + Object.keys(group.endpoints).length, 0)
        assert.strictEqual(endpoints, 131)
        assert.strictEqual(operations.length, endpoints + 1)
        const exact = JSON.stringify({ code: 401, message: "Not Authorized" })
        for (const { path, method, operation } of operations) {
          assert.deepStrictEqual(operation.security, [{ IncomingSecret: [] }], `${method} ${path}`)
          const url = path.replace(/\{[^}]+\}/g, "x1")
          const hasBody = method === "post" || method === "put"
          const reply = yield* client.call(method.toUpperCase(), url, hasBody ? { body: {} } : {})
          const where = `${method.toUpperCase()} ${url}`
          assert.strictEqual(reply.status, 401, where)
          assert.strictEqual(reply.text, exact, where)
          assert.strictEqual(reply.headers.get("www-authenticate"), "Bearer realm=\"v1\"", where)
        }
      }))

    it.effect("documents POST /v1/mcp from the JSON-RPC schemas: the served tools, the protocol versions, the one 401", () =>
      Effect.gen(function*() {
        const document = yield* fetchDocument
        const operation = document.paths["/v1/mcp"].post
        assert.deepStrictEqual(operation.tags, ["MCP"])
        const request = JSON.stringify(operation.requestBody.content["application/json"].schema)
        for (const spec of TOOL_SPECS) assert.include(request, `"${spec.name}"`)
        const version = operation.parameters.find((parameter: Json) => parameter.name === "MCP-Protocol-Version")
        assert.deepStrictEqual(version.schema.enum, ["2026-07-28", "2025-11-25"])
        assert.deepStrictEqual(operation.responses["401"], document.paths["/v1/customer"].get.responses["401"])
        // The transport's refusals keep their status with a JSON-RPC error, which the document says.
        for (const status of ["403", "406", "413", "415", "429"]) {
          assert.isDefined(operation.responses[status]?.content?.["application/json"], status)
        }
        assert.isDefined(operation.parameters.find((parameter: Json) => parameter.name === "Idempotency-Key"))
        assert.include(request, "completion/complete")
      }))

    it.effect("bounds every input: each string a client sends has maxLength, each list maxItems, each integer its format and bounds", () =>
      Effect.gen(function*() {
        const document = yield* fetchDocument
        const problems = operationsOf(document).flatMap(({ path, method, operation }) => {
          const where = `${method.toUpperCase()} ${path}`
          const parameters = ((operation.parameters ?? []) as Array<Json>).map((parameter) =>
            unboundedInputs(parameter.schema, `${where} ${parameter.in} ${parameter.name}`, document.components, new Set())
          )
          const bodies = Object.entries((operation.requestBody?.content ?? {}) as Json).map(([type, media]) =>
            unboundedInputs((media as Json).schema, `${where} ${type}`, document.components, new Set())
          )
          return [...parameters, ...bodies].flat()
        })
        assert.deepStrictEqual([...new Set(problems)], [])
        // Whatever its direction, an integer says how wide it is.
        const integers = everySchemaNode(document).filter((node) => typesOf(node).includes("integer") && node.format === undefined)
        assert.deepStrictEqual(integers, [])
      }))

    it.effect("documents the security scheme, the passthrough body and the empty 200", () =>
      Effect.gen(function*() {
        const document = yield* fetchDocument
        const scheme = document.components.securitySchemes.IncomingSecret
        assert.deepInclude(scheme, { type: "apiKey", in: "header", name: "Authorization" })
        assert.include(scheme.description, "Bearer <SECRET>")
        assert.deepStrictEqual(document.security, [{ IncomingSecret: [] }])
        assert.deepInclude(document.components.schemas.EngineError, { required: ["code", "message", "type"] })
        assert.include(document.info.description, "Empty 200")

        const get = document.paths["/v1/customer/{id}"].get
        assert.isTrue(get["x-empty-200"])
        assert.include(get.responses["200"].description, "empty body")
        assert.strictEqual(get.responses["200"].content["application/json"].schema.$ref, "#/components/schemas/Customer")
        assert.isTrue(document.paths["/v1/project/lookup"].get["x-empty-200"])
        assert.isUndefined(document.paths["/v1/customer"].post["x-empty-200"])
        // Request and response schemas carry descriptions and examples.
        const record = document.components.schemas.Customer
        assert.isString(record.description)
        assert.strictEqual(record.examples[0].email, "buyer@example.com")
        const input = document.paths["/v1/customer"].post.requestBody.content["application/json"]
        assert.isString(input.schema.description)
        assert.strictEqual(input.example.email, "buyer@example.com")
        // `/item/{partItemId}` (the spec's name of the read) holds the other item operations too.
        assert.containsAllKeys(document.paths["/v1/item/{partItemId}"], ["get", "put", "delete"])
        assert.notProperty(document.paths, "/v1/item/{id}")
      }))

    it.effect("passes redocly lint with the recommended ruleset", () =>
      Effect.gen(function*() {
        const document = yield* fetchDocument
        const dir = yield* workspace
        yield* Effect.promise(() => writeFile(join(dir, "openapi.json"), JSON.stringify(document)))
        const lint = yield* run(join(BIN, "redocly"), ["lint", "openapi.json", "--extends=recommended", "--format=json"], dir)
        const report = JSON.parse(lint.stdout) as { totals: { errors: number; warnings: number }; problems: Array<Json> }
        const errors = report.problems.filter((problem) => problem.severity === "error")
        const warnings = report.problems.filter((problem) => problem.severity === "warn")
        assert.deepStrictEqual(errors.map((error) => `${error.ruleId}: ${error.message}`), [])
        // Warnings too: the document is clean, and stays so.
        assert.deepStrictEqual(warnings.map((warning) => `${warning.ruleId}: ${warning.message}`), [])
        assert.strictEqual(report.totals.errors, 0)
        assert.strictEqual(lint.code, 0, lint.stderr)
      }))

    it.effect("generates a typed client (openapi-typescript, openapi-fetch) that runs the customer flow", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const document = yield* fetchDocument
        const dir = yield* workspace
        const { value: secret } = yield* client.createSecret(`openapi-${Math.random().toString(36).slice(2)}`)
        yield* Effect.promise(async () => {
          await writeFile(join(dir, "openapi.json"), JSON.stringify(document))
          await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }))
          await writeFile(join(dir, "smoke.ts"), SMOKE)
        })

        const generate = yield* run(join(BIN, "openapi-typescript"), ["openapi.json", "--output", "schema.ts"], dir)
        assert.strictEqual(generate.code, 0, generate.stderr)
        const typecheck = yield* run(join(BIN, "tsc"), [
          "--noEmit",
          "--strict",
          "--exactOptionalPropertyTypes",
          "--skipLibCheck",
          "--target",
          "es2022",
          "--module",
          "nodenext",
          "--moduleResolution",
          "nodenext",
          "--allowImportingTsExtensions",
          "--types",
          "node",
          "smoke.ts"
        ], dir)
        assert.strictEqual(typecheck.code, 0, typecheck.stdout + typecheck.stderr)

        const smoke = yield* run(join(BIN, "node"), ["smoke.ts", client.baseUrl, secret], dir)
        assert.strictEqual(smoke.code, 0, smoke.stderr)
        const result = JSON.parse(smoke.stdout.trim().split("\n").at(-1) ?? "{}") as Json
        const id = result.created.id as string
        assert.strictEqual(result.created.name, "Smoke Ltd")
        assert.deepStrictEqual(result.read, { status: 200, data: result.created })
        assert.strictEqual(result.listed.status, 200)
        assert.lengthOf(result.listed.ids, 2)
        assert.include(result.listed.ids, id)
        assert.strictEqual(result.replaced.status, 200)
        assert.strictEqual(result.replaced.data.name, "Smoke Ltd (renamed)")
        assert.notProperty(result.replaced.data, "externalReference")
        assert.deepStrictEqual(result.missing, { status: 200, data: null })
        assert.deepStrictEqual(result.unauthorized, { status: 401, error: { code: 401, message: "Not Authorized" } })
        assert.strictEqual(result.invalid.status, 400)
        assert.include(result.invalid.error.message, "name")
        assert.deepStrictEqual(result.paging, { total: "2", link: "</v1/customer?limit=1&offset=1>; rel=\"next\"", size: 1 })
        assert.deepStrictEqual(result.part, { status: 200, quantity: 5, sameId: true })
      }))

    it.effect("serves the interactive reference at /docs", () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const reply = yield* client.call("GET", "/docs")
        assert.strictEqual(reply.status, 200)
        assert.include(reply.headers.get("content-type") ?? "", "text/html")
        assert.include(reply.text, "Manufacturing engine public API")
        assert.match(reply.text, /scalar/i)
      }))
  })
}
