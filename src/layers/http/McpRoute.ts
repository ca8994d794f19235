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
import { Cause, Effect, ErrorReporter, Layer, Result, Schema } from "effect"
import { McpSchema, McpServer, Tool } from "effect/ai"
import { CurrentCaller } from "../../api/Authorization.ts"
import { MCP_PROTOCOLS } from "../../api/mcp/openapi.ts"
import { type DerivedTool, downstreamFailure, McpToolkit, McpTools, type ToolFailure } from "../../api/mcp/tools.ts"
import type { DownstreamError } from "../../domain/Errors.ts"
import { Downstream } from "../../services/Downstream.ts"
import { Instruments } from "../telemetry/Instruments.ts"
import { CurrentRequestFacts } from "../telemetry/RequestTelemetry.ts"
import { traced } from "../telemetry/Span.ts"
import { unstorableInput } from "./ForwardHandlers.ts"
import { McpAuth, MCP_PATH } from "./McpAuth.ts"

/** A tool's handler: decode the arguments, invoke the REST operation, check the answer. */
type ToolHandler = (args: unknown) => Effect.Effect<unknown, ToolFailure, CurrentCaller>

/** The handlers of the 9 tools, by tool name. */
const makeToolHandlers = Effect.gen(function*() {
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
  const handlers: Record<string, ToolHandler> = {}
  for (const derived of McpTools) {
    const operation = derived.spec.operation
    const notFound = Effect.fail<ToolFailure>({ code: 404, message: "No such record", type: "NotFound" })
    handlers[derived.spec.name] = (args) =>
      Effect.gen(function*() {
        const request = yield* derived.decodeArguments(args)
        // What storage cannot hold is an invalid argument naming the field, as over REST.
        const unstorable = unstorableInput(request)
        if (unstorable !== undefined) {
          return yield* Effect.fail({ code: unstorable.code, message: unstorable.message, type: unstorable.type })
        }
        const caller = yield* CurrentCaller
        const scope = { appId: caller.appId, requestId: caller.requestId }
        const answer = yield* downstream.invoke(operation, scope, request).pipe(
          Effect.tapError(noteFailure),
          Effect.mapError(downstreamFailure),
          traced("Downstream.invoke", { attributes: { "downstream.operation": operation } })
        )
        if (answer === null && derived.spec.nullable !== true) return yield* notFound
        return yield* derived.checkAnswer(answer)
      })
  }
  return handlers
})

/** effect/ai's answer to a tool call that failed unexpectedly (a defect), word for word. */
const INTERNAL_TOOL_ERROR = "Tool execution failed due to an internal server error."

/** McpServer decodes a tool's result (every check) before it answers: checking it here as well is redundant. */
const NO_CHECKS = { disableChecks: true } as const

/** A tool call's result as effect/ai's toolkit registration builds it: the encoded value, structured and as text. */
const toolResult = (isError: boolean, encoded: unknown) =>
  new McpSchema.CallToolResult({
    isError,
    structuredContent: isError ? undefined : encoded,
    content: encoded === undefined ? [] : [{ type: "text", text: JSON.stringify(encoded) }]
  }, NO_CHECKS)

/** A defect of a tool call: logged and reported, answered with effect/ai's generic tool error; interruption propagates. */
const internalToolError = (cause: Cause.Cause<unknown>) =>
  Result.isFailure(Cause.findFail(cause)) && !Cause.hasDies(cause)
    ? Effect.failCause(cause)
    : Effect.logError(cause).pipe(
      Effect.andThen(ErrorReporter.report(cause)),
      Effect.as(new McpSchema.CallToolResult({ isError: true, content: [{ type: "text", text: INTERNAL_TOOL_ERROR }] }))
    )

/**
 * A tool call, answered directly: what effect/ai's toolkit registration does
 * (the span attributes, the answer encoded with the tool's success Schema, a
 * failure with its failure Schema, a defect as the generic tool error),
 * without the toolkit's per-call stream, queue and forked fiber.
 */
const directHandle = (
  derived: DerivedTool,
  handler: ToolHandler
): (args: unknown) => Effect.Effect<McpSchema.CallToolResult, never, McpSchema.McpRequestContext> => {
  const encodeSuccess = Schema.encodeUnknownEffect(derived.tool.successSchema)
  const encodeFailure = Schema.encodeUnknownEffect(Tool.failureResultSchema(derived.tool))
  const name = derived.spec.name
  // The caller is a request service (McpAuth provides it: the McpRequest marker of
  // ToolRegistrations below); the API's Schemas need no service to encode.
  return (args) =>
    Effect.annotateCurrentSpan({ tool: name, parameters: args ?? {} }).pipe(
      Effect.andThen(Effect.matchEffect(handler(args ?? {}), {
        onFailure: (failure) => Effect.map(encodeFailure(failure), (encoded) => toolResult(true, encoded)),
        onSuccess: (answer) => Effect.map(encodeSuccess(answer), (encoded) => toolResult(false, encoded))
      })),
      Effect.catchCause(internalToolError)
    ) as Effect.Effect<McpSchema.CallToolResult, never, McpSchema.McpRequestContext>
}

/**
 * Registers the 9 tools with McpServer. effect/ai's toolkit registration
 * describes them (name, description, input and output schemas, annotations);
 * each is then registered again, with the same description, to a handler
 * answering directly (see `directHandle`), so the toolkit's handlers are
 * never called: its generic call path (a stream, a queue and a forked fiber
 * per call) cost more than the tool's own work.
 */
const ToolRegistrations = Layer.effectDiscard(Effect.gen(function*() {
  const handlers = yield* makeToolHandlers
  yield* McpServer.registerToolkit(McpToolkit).pipe(Effect.provide(McpToolkit.toLayer(handlers)))
  const server = yield* McpServer.McpServer
  for (const registered of server.tools) {
    const derived = McpTools.find((tool) => tool.spec.name === registered.tool.name)
    const handler = handlers[registered.tool.name]
    if (derived === undefined || handler === undefined) continue
    // No `services`: the handlers hold what they need (Downstream, Instruments) and read the
    // caller from the request; merging the registration's context into each call's cost more.
    yield* server.addTool({ tool: registered.tool, annotations: registered.annotations, handle: directHandle(derived, handler) })
  }
})) as Layer.Layer<never, never, McpServer.McpServer | McpServer.McpRequest<"Requires", CurrentCaller> | Downstream>

/** Cache hints of discovery and tools/list: the tool list is the same for every app and changes only on deploy. */
const CACHE = { ttl: "5 minutes", cacheScope: "private" } as const

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
