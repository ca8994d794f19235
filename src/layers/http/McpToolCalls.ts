/**
 * The 9 MCP tools' calls: decode the arguments, invoke the tool's REST
 * operation on Downstream, check the answer against its Schema, and shape
 * the result as effect/ai's toolkit does (the answer encoded with the tool's
 * success Schema, structured and as text; a failure with its failure Schema;
 * a defect as the generic tool error). McpServer serves them (McpRoute), and
 * McpDirect answers a plain `tools/call` with them without McpServer.
 */
import { Cause, Context, Effect, ErrorReporter, Layer, Result, Schema } from "effect"
import { McpSchema, Tool } from "effect/ai"
import { CurrentCaller } from "../../api/Authorization.ts"
import { type DerivedTool, downstreamFailure, McpTools, type ToolFailure } from "../../api/mcp/tools.ts"
import { endpointNamed, isPaged, type OperationInput, type Page } from "../../api/Operations.ts"
import type { DownstreamError } from "../../domain/Errors.ts"
import { traced } from "../../domain/Span.ts"
import { Downstream } from "../../services/Downstream.ts"
import { Instruments, type TelemetryInstruments } from "../telemetry/Instruments.ts"
import { CurrentRequestFacts } from "../telemetry/RequestTelemetry.ts"
import { unstorableInput } from "./InputChecks.ts"

/** A tool's handler: decode the arguments, invoke the REST operation, check the answer. */
export type ToolHandler = (args: unknown) => Effect.Effect<unknown, ToolFailure, CurrentCaller>

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

/** A tool call, start to finish: the result effect/ai's toolkit registration would give. */
const callFor = (derived: DerivedTool, handler: ToolHandler) => {
  const encodeSuccess = Schema.encodeUnknownEffect(derived.tool.successSchema)
  const encodeFailure = Schema.encodeUnknownEffect(Tool.failureResultSchema(derived.tool))
  const name = derived.spec.name
  // The API's Schemas need no service to encode.
  return (args: unknown): Effect.Effect<McpSchema.CallToolResult, never, CurrentCaller> =>
    Effect.annotateCurrentSpan({ tool: name, parameters: args ?? {} }).pipe(
      Effect.andThen(Effect.matchEffect(handler(args ?? {}), {
        onFailure: (failure) => Effect.map(encodeFailure(failure), (encoded) => toolResult(true, encoded)),
        onSuccess: (answer) => Effect.map(encodeSuccess(answer), (encoded) => toolResult(false, encoded))
      })),
      Effect.catchCause(internalToolError)
    ) as Effect.Effect<McpSchema.CallToolResult, never, CurrentCaller>
}

/** A failed Downstream call of an MCP request: on its span, in the `downstream.errors` metric and the request's log line. */
export const noteDownstreamFailure = (instruments: TelemetryInstruments, error: DownstreamError) =>
  Effect.withFiber((fiber) => {
    instruments.downstreamError(error.source, error.status)
    const facts = fiber.getRef(CurrentRequestFacts)
    if (facts !== undefined) facts.errorSource = error.source
    return Effect.annotateCurrentSpan({ "error.source": error.source, "http.response.status_code": error.status })
  })

export class McpToolCalls extends Context.Service<McpToolCalls, {
  /** Each tool's handler, by tool name (what effect/ai's toolkit registration takes). */
  readonly handlers: Readonly<Record<string, ToolHandler>>
  /** The call of each of the 9 tools, by tool name: the handler and the result's shaping. */
  readonly byName: ReadonlyMap<string, (args: unknown) => Effect.Effect<McpSchema.CallToolResult, never, CurrentCaller>>
}>()("mfg/http/McpToolCalls") {
  static readonly layer = Layer.effect(
    McpToolCalls,
    Effect.gen(function*() {
      const downstream = yield* Downstream
      const instruments = yield* Instruments
      const noteFailure = (error: DownstreamError) => noteDownstreamFailure(instruments, error)
      const handlers: Record<string, ToolHandler> = {}
      const byName = new Map<string, (args: unknown) => Effect.Effect<McpSchema.CallToolResult, never, CurrentCaller>>()
      for (const derived of McpTools) {
        const operation = derived.spec.operation
        const endpoint = endpointNamed(operation)
        if (endpoint === undefined) return yield* Effect.die(`MCP tool ${derived.spec.name}: ${operation} is not an operation of the contract`)
        const call = downstream.call(endpoint)
        const paged = isPaged(endpoint)
        const notFound = Effect.fail<ToolFailure>({ code: 404, message: "No such record", type: "NotFound" })
        const handler: ToolHandler = (args) =>
          Effect.gen(function*() {
            const request = yield* derived.decodeArguments(args)
            // What storage cannot hold is an invalid argument naming the field, as over REST.
            const unstorable = unstorableInput(request)
            if (unstorable !== undefined) {
              const { code, errors, message, type } = unstorable
              return yield* Effect.fail(errors === undefined ? { code, message, type } : { code, message, type, errors })
            }
            const caller = yield* CurrentCaller
            const scope = { appId: caller.appId, requestId: caller.requestId }
            // The arguments were decoded by the endpoint's own schemas: they are its input.
            const answer: unknown = yield* call(request as OperationInput<typeof endpoint>, scope).pipe(
              Effect.tapError(noteFailure),
              Effect.mapError(downstreamFailure),
              traced("Downstream.call", { attributes: { "downstream.operation": operation } })
            )
            if (answer === null && derived.spec.nullable !== true) return yield* notFound
            // A list tool answers the page's records, as the REST body does (the total is a REST header).
            return yield* derived.checkAnswer(paged ? (answer as Page<unknown>).items : answer)
          })
        handlers[derived.spec.name] = handler
        byName.set(derived.spec.name, callFor(derived, handler))
      }
      return McpToolCalls.of({ handlers, byName })
    })
  )
}
