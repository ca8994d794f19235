/**
 * A tool's answer is checked by its success schema as the REST endpoint's
 * is: an engine answer that does not fit is the tool error 502 `BadGateway`
 * naming the operation, over MCP as over REST, never a result carrying it.
 * The gateway runs over the in-memory services and a scripted engine
 * (docs/composing.md), whose `ticket.lookup` answers a ticket without most
 * of its fields, or no ticket.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpClient, HttpClientRequest, HttpRouter } from "effect/http"
import { DownstreamScripted, GatewayServicesInMemory } from "../../src/adapters/memory/index.ts"
import { GatewayRoutes, ROUTER_CONFIG } from "../../src/gateway/server/index.ts"
import { AppConfig } from "../../src/services/AppConfig.ts"
import { SecretStore } from "../../src/services/SecretStore.ts"

const VERSION = "2026-07-28"

/** A ticket as a broken engine might answer it: an id and nothing else the schema requires. */
const BROKEN = "T-BROKEN"

const Engine = DownstreamScripted({
  "ticket.lookup": ({ query }) => Effect.succeed(query.identifier === BROKEN ? JSON.parse(`{"id":"t-1"}`) : null)
})

const Gateway = HttpRouter.serve(GatewayRoutes(undefined), { disableLogger: true, routerConfig: ROUTER_CONFIG }).pipe(
  Layer.provideMerge(Layer.mergeAll(GatewayServicesInMemory, Engine)),
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(AppConfig.layer)
)

/** `lookup_ticket` as the Streamable HTTP transport sends a 2026-07-28 tools/call. */
const lookupTicket = (secret: string, identifier: string) =>
  HttpClientRequest.post("/v1/mcp").pipe(
    HttpClientRequest.setHeaders({
      authorization: `Bearer ${secret}`,
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": "tools/call",
      "mcp-name": "lookup_ticket"
    }),
    HttpClientRequest.bodyJsonUnsafe({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        name: "lookup_ticket",
        arguments: { identifier },
        _meta: { "io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {} }
      }
    }),
    HttpClient.execute
  )

layer(Gateway)("A tool's answer checked as the REST endpoint's", (it) => {
  it.effect("an answer that does not fit the schema is the 502 tool error over MCP and the 502 over REST", () =>
    Effect.gen(function*() {
      const secret = (yield* (yield* SecretStore).create({ appId: "acme", ipAddresses: ["0.0.0.0/0"] })).value
      const mcp = yield* lookupTicket(secret, BROKEN)
      assert.strictEqual(mcp.status, 200)
      const { id, result } = (yield* mcp.json) as { id: number; result: Record<string, unknown> }
      assert.strictEqual(id, 7)
      assert.isTrue(result.isError)
      assert.notProperty(result, "structuredContent")
      const content = result.content as ReadonlyArray<{ type: string; text: string }>
      assert.deepStrictEqual(JSON.parse(content[0]!.text), {
        code: 502,
        message: "The engine's answer to ticket.lookup does not match its schema",
        type: "BadGateway"
      })
      assert.notProperty(result._meta as object, "io.mfg/etag")

      const rest = yield* HttpClient.execute(
        HttpClientRequest.get(`/v1/ticket/lookup?identifier=${BROKEN}`).pipe(HttpClientRequest.setHeader("authorization", `Bearer ${secret}`))
      )
      assert.strictEqual(rest.status, 502)
      assert.deepInclude(yield* rest.json, { code: 502, type: "BadGateway" })
    }))

  it.effect("no ticket is a null result, with no entity tag", () =>
    Effect.gen(function*() {
      const secret = (yield* (yield* SecretStore).create({ appId: "acme", ipAddresses: ["0.0.0.0/0"] })).value
      const { result } = (yield* (yield* lookupTicket(secret, "T-000404")).json) as { result: Record<string, unknown> }
      assert.isFalse(result.isError)
      assert.isNull(result.structuredContent)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "null" }])
      assert.notProperty(result._meta as object, "io.mfg/etag")
    }))
})
