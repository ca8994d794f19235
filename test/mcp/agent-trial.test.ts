/**
 * The agent trial: a scripted agent (a fixed plan, no model) quotes a part
 * from a model file URL and sends the quote, through the official
 * @modelcontextprotocol/client pinned to 2026-07-28, against a fresh app set
 * up by `cli seed` (its materials, machines, customers and their open
 * projects) and nothing else: no ticket, no part, no quote.
 *
 * The plan takes nothing from the test but what a user would give an agent
 * (the model's URL, a quantity, the customer's name) and decides nothing from
 * ids it was told: it gets the `quote_a_part` prompt and follows it, checks
 * that every tool and resource it names is listed (tools/list,
 * resources/list, resources/templates/list), and takes every id (customer,
 * project, technology, material, colour, production parameter value,
 * currency) from what it reads. The end state is then checked over REST.
 *
 * The model file is served on 127.0.0.1 by a local file host; the engine's
 * fetcher is allowed to reach it (as MODEL_FETCH_ALLOW_PRIVATE=true would).
 *
 * A second agent quotes and accepts ten catalogue bearing blocks, MCP only:
 * the configuration found by completion and the catalogue resource, the part
 * from the configuration alone at the unit price REST's `from-catalogue`
 * gives; a colleague's edit over REST meanwhile makes its acceptance stale
 * (412 with `ifMatch`), it reads the quote again and accepts it, the edit
 * kept; it reads the quote's PDF (`mfg://ticket-quote/{id}/pdf`).
 */
import { assert, layer } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport, UriTemplate } from "@modelcontextprotocol/client"
import { Effect, Layer } from "effect"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { seedDemoData } from "../../src/engine/seed.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { ok } from "../support/http.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const MODERN = "2026-07-28"

/** What the user gives the agent: a customer of the app (by name), a model, a quantity. */
const REQUEST = { quantity: 25, customerName: "Acme Robotics", modelPath: "/models/bracket.stl" }

const fetcher = modelFetcherLayer({ allowPrivate: true })
const files = FileHostLive({ [REQUEST.modelPath]: binaryStl(box(40, 20, 10)) })

interface Page {
  readonly items: ReadonlyArray<any>
  readonly total: number
  readonly next?: string
}

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), files), { timeout: 60_000, excludeTestServices: true })(
    `Agent trial (${backend})`,
    (it) => {
      it.effect("a scripted agent discovers everything through MCP, quotes a part from a model URL and sends the quote", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const host = yield* FileHost
          const appId = `agent-trial-${Math.random().toString(36).slice(2)}`
          const { value: secret } = yield* client.createSecret(appId)
          const rest = (method: string, path: string, body?: unknown) =>
            Effect.map(client.call(method, `/v1${path}`, { secret, body }), (reply) => ok(reply, `${method} ${path}`))
          // The app as `cli seed` sets it up (its materials, machines, customers and their open projects): nothing else.
          yield* seedDemoData(appId)
          const modelUrl = `${host.url}${REQUEST.modelPath}`

          // The agent: the official client, pinned to 2026-07-28, with the app's secret.
          const agent = new Client({ name: "scripted-agent", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } })
          yield* Effect.promise(() =>
            agent.connect(
              new StreamableHTTPClientTransport(new URL(`${client.baseUrl}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } })
            )
          )
          const transcript: Array<string> = []
          const step = (what: string) => transcript.push(what)
          const said = () => transcript.join("\n")

          // 1. The prompt: the steps to follow.
          const { prompts } = yield* Effect.promise(() => agent.listPrompts())
          const quoteAPart = prompts.find((prompt) => prompt.name === "quote_a_part")
          assert.isDefined(quoteAPart)
          assert.includeMembers(quoteAPart!.arguments!.map((argument) => argument.name), ["modelUrl", "quantity", "customerName"])
          const prompt = yield* Effect.promise(() =>
            agent.getPrompt({ name: "quote_a_part", arguments: { modelUrl, quantity: String(REQUEST.quantity), customerName: REQUEST.customerName } })
          )
          const steps = prompt.messages.map((message) => message.content.type === "text" ? message.content.text : "").join("\n")
          step(`prompt:\n${steps}`)

          // 2. What the server offers: every tool and resource the prompt names must be listed.
          const { tools } = yield* Effect.promise(() => agent.listTools())
          const { resources } = yield* Effect.promise(() => agent.listResources())
          const { resourceTemplates } = yield* Effect.promise(() => agent.listResourceTemplates())
          const toolNames = new Set(tools.map((tool) => tool.name))
          const toolsToCall = [...steps.matchAll(/Call (\w+)/g)].map((match) => match[1]!)
          assert.deepStrictEqual(toolsToCall.slice(0, 4), ["create_ticket", "create_part", "list_parts", "create_ticket_quote"], said())
          for (const tool of toolsToCall) assert.isTrue(toolNames.has(tool), `the prompt names ${tool}, tools/list does not`)
          const templates = resourceTemplates.map((template) => ({
            name: template.name,
            base: template.uriTemplate.split("{")[0]!,
            template: new UriTemplate(template.uriTemplate)
          }))
          /** Whether a template expands to `uri`: its base, and query parameters among its variables (any subset, any order). */
          const expandsTo = (entry: (typeof templates)[number], uri: string) => {
            const [base, query = ""] = uri.split("?")
            return base === entry.base && [...new URLSearchParams(query).keys()].every((key) => entry.template.variableNames.includes(key))
          }
          const named = [...steps.matchAll(/`(mfg:\/\/[^`]+)`/g)].map((match) => match[1]!)
          assert.isAbove(named.length, 4)
          for (const uri of named) {
            const listed = resources.some((resource) => resource.uri === uri) || templates.some((entry) => expandsTo(entry, uri))
            assert.isTrue(listed, `the prompt names ${uri}, which no resource or template serves`)
          }

          /** Reads one page of a resource: by its template (`mfg://<name>{?...}`) when given variables, else its plain URI. */
          const read = (name: string, variables: Record<string, string> = {}) =>
            Effect.gen(function*() {
              const entry = templates.find((template) => template.name === name)
              const plain = resources.find((resource) => resource.name === name)
              assert.isDefined(entry, `no template ${name}`)
              assert.isDefined(plain, `no resource ${name}`)
              const uri = Object.keys(variables).length === 0 ? plain!.uri : entry!.template.expand(variables)
              const result = yield* Effect.promise(() => agent.readResource({ uri }))
              const content = result.contents[0]!
              assert.strictEqual(content.mimeType, "application/json")
              const page = JSON.parse("text" in content ? content.text : "") as Page
              step(`read ${uri}: ${page.total} record(s)`)
              return page
            })
          /** Calls a tool; a tool error fails the trial with the transcript. */
          const call = (name: string, args: Record<string, unknown>) =>
            Effect.gen(function*() {
              assert.isTrue(toolNames.has(name), name)
              const result = yield* Effect.promise(() => agent.callTool({ name, arguments: args }))
              step(`${name} ${JSON.stringify(args)} → ${result.isError === true ? "error" : "ok"}`)
              assert.notStrictEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}\n${said()}`)
              return result.structuredContent as any
            })

          // 3. Customer and project: found by reading, as the prompt says.
          const [customer] = (yield* read("customer", { name: REQUEST.customerName })).items
          assert.strictEqual(customer?.name, REQUEST.customerName, said())
          const [project] = (yield* read("project", { customerId: customer.id })).items
          assert.isDefined(project, said())

          // 4. How to make it: the first technology that has a material with colours, a colour of it, one parameter off its default.
          const technologies = (yield* read("technology")).items
          let choice: { technology: any; material: any } | undefined
          for (const technology of technologies) {
            const material = (yield* read("material", { technologyId: technology.id })).items.find((found) => found.colours.length > 0)
            if (material !== undefined) {
              choice = { technology, material }
              break
            }
          }
          assert.isDefined(choice, said())
          const { material, technology } = choice!
          const colour = material.colours[0]
          const [field] = (yield* read("production-parameter-field", { technologyId: technology.id })).items
          assert.isDefined(field, said())
          const value = field.values.find((candidate: { id: string }) => candidate.id !== field.defaultValueId)
          const currency = (yield* read("currency")).items.find((found) => found.exchangeRate === 1)
          assert.isDefined(currency, said())

          // 5. The tools, in the prompt's order.
          const ticket = yield* call("create_ticket", { projectId: project.id, name: "Bracket, trial run" })
          assert.strictEqual(ticket.state, "draft")
          const part = yield* call("create_part", {
            ticketId: ticket.id,
            modelEndpoint: { url: modelUrl },
            technologyId: technology.id,
            materialId: material.id,
            colourId: colour.id,
            productionParameterIds: { [field.name]: value.id },
            quantity: REQUEST.quantity
          })
          let priced: any
          for (let attempt = 0; attempt < 40 && priced === undefined; attempt++) {
            const parts = (yield* call("list_parts", { ticketId: [ticket.id] })) as Array<any>
            priced = parts.find((found) => found.id === part.id && found.geometry !== null && found.totalPrice !== null)
            if (priced === undefined) yield* Effect.sleep("250 millis")
          }
          assert.isDefined(priced, `the part never got its geometry and price\n${said()}`)
          const quote = yield* call("create_ticket_quote", { ticketId: ticket.id, currencyId: currency.id })
          assert.strictEqual(quote.state, "sent", said())
          yield* Effect.promise(() => agent.close())

          // The end state, over REST: the quote exists and is sent, the ticket quoted, the part as the agent chose it.
          const quotes = (yield* rest("GET", `/ticket-quote?ticketId=${ticket.id}`)) as Array<any>
          assert.lengthOf(quotes, 1)
          assert.strictEqual(quotes[0].id, quote.id)
          assert.strictEqual(quotes[0].state, "sent")
          assert.strictEqual(quotes[0].currencyId, currency.id)
          assert.deepStrictEqual(quotes[0].lines.map((line: { ticketModelId: string; quantity: number }) => [line.ticketModelId, line.quantity]), [[
            part.id,
            REQUEST.quantity
          ]])
          assert.strictEqual(quotes[0].total, priced.totalPrice)
          assert.strictEqual((yield* rest("GET", `/ticket/lookup?identifier=${ticket.id}`)).state, "quoted")
          const stored = yield* rest("GET", `/ticket-model/${part.id}`)
          assert.deepStrictEqual(
            [stored.technologyId, stored.materialId, stored.colourId, stored.productionParameterIds, stored.fileName],
            [technology.id, material.id, colour.id, { ...stored.productionParameterIds, [field.name]: value.id }, "bracket.stl"]
          )
          assert.deepStrictEqual(stored.geometry.boundingBox, { x: 40, y: 20, z: 10 })

          // Every MCP request was metered: the prompt, the reads, the tools.
          const usage = yield* client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } })
          const metered = new Map((usage.json().byOperation as Array<{ operation: string; calls: number }>).map((row) => [row.operation, row.calls]))
          assert.strictEqual(metered.get("mcp.prompts/get"), 1)
          assert.strictEqual(metered.get("mcp.resources/read"), transcript.filter((line) => line.startsWith("read ")).length, said())
          assert.strictEqual(metered.get("mcp.create_part"), 1)
          assert.strictEqual(metered.get("mcp.create_ticket_quote"), 1)
        }))

      it.effect("a scripted agent quotes and accepts ten catalogue bearing blocks through MCP only: REST's price, a concurrent edit survived, the PDF read", () =>
        Effect.gen(function*() {
          const client = yield* TestClient
          const appId = `agent-catalogue-${Math.random().toString(36).slice(2)}`
          const { value: secret } = yield* client.createSecret(appId)
          const rest = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
            client.call(method, `/v1${path}`, { secret, body, ...(headers === undefined ? {} : { headers }) })
          yield* seedDemoData(appId)
          const agent = new Client({ name: "catalogue-agent", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } })
          yield* Effect.promise(() =>
            agent.connect(
              new StreamableHTTPClientTransport(new URL(`${client.baseUrl}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } })
            )
          )
          const transcript: Array<string> = []
          const said = () => transcript.join("\n")
          const call = (name: string, args: Record<string, unknown>) =>
            Effect.gen(function*() {
              const result = yield* Effect.promise(() => agent.callTool({ name, arguments: args }))
              transcript.push(`${name} → ${result.isError === true ? JSON.stringify(result.content) : "ok"}`)
              return result as { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text?: string }>; _meta?: any }
            })
          const succeed = (name: string, args: Record<string, unknown>) =>
            Effect.map(call(name, args), (result) => {
              assert.notStrictEqual(result.isError, true, said())
              return result
            })
          const page = (uri: string) =>
            Effect.map(Effect.promise(() => agent.readResource({ uri })), (result) => {
              transcript.push(`read ${uri}`)
              const content = result.contents[0]!
              return JSON.parse("text" in content ? content.text : "{}").items as Array<any>
            })

          // The user: "quote ten bearing blocks in PLA for Acme Robotics". The agent completes the prompt's arguments from the app.
          const { completion } = yield* Effect.promise(() =>
            agent.complete({ ref: { type: "ref/prompt", name: "quote_a_part" }, argument: { name: "catalogueModelConfigurationId", value: "bearing" } })
          )
          const models = yield* page("mfg://catalogue-model")
          const configuration = models.find((model) => model.name === "Bearing block")?.configurations.find((found: any) => /PLA/.test(found.name))
          assert.isDefined(configuration, said())
          assert.include(completion.values, configuration.id)
          const prompt = yield* Effect.promise(() =>
            agent.getPrompt({
              name: "quote_a_part",
              arguments: { catalogueModelConfigurationId: configuration.id, quantity: "10", customerName: "Acme Robotics" }
            })
          )
          const steps = prompt.messages.map((message) => message.content.type === "text" ? message.content.text : "").join("\n")
          assert.include(steps, `"catalogueModelConfigurationId": ${JSON.stringify(configuration.id)}, "quantity": 10`)
          const [customer] = yield* page("mfg://customer?name=Acme%20Robotics")
          const [project] = yield* page(`mfg://project?customerId=${customer.id}`)
          assert.isDefined(project, said())

          // The steps: a ticket, the part from the configuration alone, priced at once, the quote sent.
          const ticket = (yield* succeed("create_ticket", { projectId: project.id, name: "Bearing blocks" })).structuredContent
          const part = (yield* succeed("create_part", { ticketId: ticket.id, catalogueModelConfigurationId: configuration.id, quantity: 10 }))
            .structuredContent
          const [priced] = (yield* succeed("list_parts", { ticketId: [ticket.id] })).structuredContent as Array<any>
          assert.isNumber(priced.unitPrice, said())
          const created = yield* succeed("create_ticket_quote", { ticketId: ticket.id, notes: "Ten bearing blocks, PLA" })
          const quote = created.structuredContent
          assert.deepStrictEqual(quote.lines.map((line: any) => [line.ticketModelId, line.quantity]), [[part.id, 10]])

          // The same configuration over REST's own catalogue path gives the same unit price.
          const restTicket = ok(yield* rest("POST", "/ticket", { projectId: project.id, name: "REST twin" }), "ticket")
          const [fromCatalogue] = ok(
            yield* rest("POST", "/ticket-model/from-catalogue", {
              ticketId: restTicket.id,
              parts: [{ catalogueModelConfigurationId: configuration.id, quantity: 10 }]
            }),
            "from-catalogue"
          ) as Array<any>
          assert.strictEqual(quote.lines[0].unitPrice, fromCatalogue.unitPrice)
          assert.strictEqual(priced.unitPrice, fromCatalogue.unitPrice)
          assert.strictEqual(quote.total, fromCatalogue.totalPrice)

          // Meanwhile a colleague extends the quote over REST: the agent's copy is stale.
          const validUntil = new Date(Date.now() + 45 * 24 * 3600 * 1000).toISOString()
          const edited = yield* rest("PUT", `/ticket-quote/${quote.id}`, { ...quote, notes: "Ten bearing blocks, PLA; delivery by courier", validUntil })
          assert.strictEqual(edited.status, 200, edited.text)

          // The customer says yes: the agent accepts its copy, with its etag. Refused, nothing lost.
          const stale = yield* call("update_ticket_quote", { ...quote, state: "accepted", ifMatch: created._meta["io.mfg/etag"] })
          assert.isTrue(stale.isError, said())
          assert.deepInclude(JSON.parse(stale.content[0]!.text!), { code: 412, type: "PreconditionFailed" })
          // It reads the quote again and accepts it as it now is.
          const listed = yield* succeed("list_ticket_quotes", { ticketId: [ticket.id] })
          const [fresh] = listed.structuredContent as Array<any>
          const accepted = yield* succeed("update_ticket_quote", { ...fresh, state: "accepted", ifMatch: listed._meta["io.mfg/etags"][fresh.id] })
          assert.deepInclude(accepted.structuredContent, { state: "accepted", notes: "Ten bearing blocks, PLA; delivery by courier" })

          // The PDF for the customer, over MCP.
          const pdf = yield* Effect.promise(() => agent.readResource({ uri: `mfg://ticket-quote/${quote.id}/pdf` }))
          const blob = pdf.contents[0]!
          assert.strictEqual(blob.mimeType, "application/pdf")
          assert.isTrue("blob" in blob && Buffer.from(blob.blob, "base64").subarray(0, 5).toString() === "%PDF-", said())
          yield* Effect.promise(() => agent.close())

          // The end state over REST: accepted at REST's price, the colleague's change kept, the ticket accepted.
          const stored = ok(yield* rest("GET", `/ticket-quote/${quote.id}`), "quote")
          assert.deepInclude(stored, { state: "accepted", notes: "Ten bearing blocks, PLA; delivery by courier", total: fromCatalogue.totalPrice })
          assert.strictEqual(Date.parse(stored.validUntil), Date.parse(validUntil))
          assert.strictEqual(ok(yield* rest("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "accepted")
        }))
    }
  )
}
