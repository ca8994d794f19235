/**
 * POST /v1/mcp: the MCP endpoint (Streamable HTTP), served by effect/ai's
 * McpServer for MCP 2026-07-28 (stateless) and 2025-11-25 clients.
 *
 * Every request to /v1/mcp, whatever its HTTP method, goes through the same
 * request path as a REST call (McpAuth): the Incoming Secret, the one 401,
 * metering before the handler (operation `mcp.<tool name>` for tools/call,
 * `mcp.<method>` otherwise). The tools call Downstream exactly as the REST
 * handlers do.
 */
import { Effect, Layer } from "effect"
import { McpServer } from "effect/ai"
import { CurrentCaller } from "../../api/Authorization.ts"
import { MCP_PROTOCOLS } from "../../api/mcp/openapi.ts"
import { downstreamFailure, McpToolkit, McpTools } from "../../api/mcp/tools.ts"
import type { DownstreamError } from "../../domain/Errors.ts"
import { Downstream } from "../../services/Downstream.ts"
import { Instruments } from "../telemetry/Instruments.ts"
import { CurrentRequestFacts } from "../telemetry/RequestTelemetry.ts"
import { unstorableInput } from "./ForwardHandlers.ts"
import { McpAuth, MCP_PATH } from "./McpAuth.ts"

/** The handlers of the 9 tools: decode the arguments, invoke the REST operation, check the answer. */
const McpToolHandlers = McpToolkit.toLayer(Effect.gen(function*() {
  const downstream = yield* Downstream
  const instruments = yield* Instruments
  /** A failed Downstream call: on its span, in the `downstream.errors` metric and the request's log line. */
  const noteFailure = (error: DownstreamError) =>
    Effect.withFiber((fiber) => {
      instruments.downstreamError(error.source, error.status)
      const facts = fiber.getRef(CurrentRequestFacts)
      if (facts !== undefined) facts.errorSource = error.source
      return Effect.annotateCurrentSpan({ "error.source": error.source, "http.response.status_code": error.status })
    })
  return Object.fromEntries(McpTools.map((derived) => [
    derived.spec.name,
    (args: unknown) =>
      Effect.gen(function*() {
        const request = yield* derived.decodeArguments(args)
        // What storage cannot hold is an invalid argument naming the field, as over REST.
        const unstorable = unstorableInput(request)
        if (unstorable !== undefined) {
          return yield* Effect.fail({ code: unstorable.code, message: unstorable.message, type: unstorable.type })
        }
        const caller = yield* CurrentCaller
        const scope = { appId: caller.appId, requestId: caller.requestId }
        const answer = yield* downstream.invoke(derived.spec.operation, scope, request).pipe(
          Effect.tapError(noteFailure),
          Effect.mapError(downstreamFailure),
          Effect.withSpan("Downstream.invoke", { attributes: { "downstream.operation": derived.spec.operation } }, {
            captureStackTrace: false
          })
        )
        if (answer === null && derived.spec.nullable !== true) {
          return yield* Effect.fail({ code: 404, message: "No such record", type: "NotFound" })
        }
        return yield* derived.checkAnswer(answer, scope.requestId)
      })
  ]))
}))

/** Cache hints of discovery and tools/list: the tool list is the same for every app and changes only on deploy. */
const CACHE = { ttl: "5 minutes", cacheScope: "private" } as const

/**
 * The tool kit registered with McpServer. The tools are built from a table, so
 * their types are erased: say what registering them needs (the McpServer,
 * and the caller per request, which McpAuth provides).
 */
const ToolRegistrations = McpServer.toolkit(McpToolkit).pipe(Layer.provide(McpToolHandlers)) as Layer.Layer<
  never,
  never,
  McpServer.McpServer | McpServer.McpRequest<"Requires", CurrentCaller> | Downstream
>

/** The MCP routes; McpAuth authenticates, meters and validates the Origin of every request before McpServer sees it. */
export const McpRoutes = McpServer.layerHttp({
  name: "mfg-public-api",
  version: "1.0.0",
  description: "Quotes, tickets and parts of the manufacturing quoting and production engine: 9 tools, each one REST operation of /v1.",
  instructions:
    "Each tool is one operation of the public REST API v1 (same input fields, same answer). " +
    "Quoting flow: create_ticket, create_part, list_parts, create_ticket_quote, send_ticket_to_production.",
  path: MCP_PATH,
  protocols: [...MCP_PROTOCOLS],
  cacheHints: { discover: CACHE, tools: CACHE },
  registrations: ToolRegistrations
}).pipe(Layer.provide(McpAuth.layer))
