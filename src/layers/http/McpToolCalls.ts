/**
 * The 9 MCP tools' calls: decode the arguments, invoke the tool's REST
 * operation on Downstream, check the answer against its Schema, and shape
 * the result as effect/ai's toolkit does (the answer encoded with the tool's
 * success Schema, structured and as text; a failure with its failure Schema;
 * a defect as the generic tool error). McpServer serves them (McpRoute), and
 * McpDirect answers a plain `tools/call` with them without McpServer.
 *
 * A successful call of a tool that writes names the events it wrote in its
 * result's `_meta` (`io.mfg/events`: `[{id, type}]`, in the order written),
 * read from the event feed by the call's request id, which the engine
 * records with each event. The structured content stays the operation's
 * answer. The write has happened by then, so a failed lookup does not fail
 * the call: it is logged and the key left out.
 */
import { Cause, Context, Effect, ErrorReporter, Layer, Result, Schema } from "effect"
import { McpSchema, Tool } from "effect/ai"
import { callScopeOf, CurrentCaller } from "../../api/Authorization.ts"
import { EVENTS_META } from "../../api/mcp/resources.ts"
import { type DerivedTool, downstreamFailure, McpTools, type ToolFailure } from "../../api/mcp/tools.ts"
import { endpointNamed, isPaged, type OperationInput, type Page } from "../../api/Operations.ts"
import { type DownstreamError, InsufficientScope } from "../../domain/Errors.ts"
import { MAX_PAGE_SIZE } from "../../domain/Resource.ts"
import { traced } from "../../domain/Span.ts"
import { Downstream } from "../../services/Downstream.ts"
import { Instruments, type TelemetryInstruments } from "../telemetry/Instruments.ts"
import { CurrentRequestFacts } from "../telemetry/RequestTelemetry.ts"
import { unstorableInput } from "./InputChecks.ts"
import { TOOL_SCOPES } from "./McpScopes.ts"

/** A tool's handler: decode the arguments, invoke the REST operation, check the answer. */
export type ToolHandler = (args: unknown) => Effect.Effect<unknown, ToolFailure, CurrentCaller>

/** effect/ai's answer to a tool call that failed unexpectedly (a defect), word for word. */
const INTERNAL_TOOL_ERROR = "Tool execution failed due to an internal server error."

/** McpServer decodes a tool's result (every check) before it answers: checking it here as well is redundant. */
const NO_CHECKS = { disableChecks: true } as const

/** An event a tool call wrote, as its result's `_meta` names it. */
export interface NamedEvent {
  readonly id: string
  readonly type: string
}

/** The events the caller's request wrote, in the order written; none when they cannot be read. */
type EventsWritten = Effect.Effect<ReadonlyArray<NamedEvent>, never, CurrentCaller>

/**
 * A tool call's result as effect/ai's toolkit registration builds it: the encoded value, structured and as text;
 * with the events the call wrote in `_meta`, when it wrote any.
 */
const toolResult = (isError: boolean, encoded: unknown, events: ReadonlyArray<NamedEvent> = []) =>
  new McpSchema.CallToolResult({
    ...(events.length === 0 ? {} : { _meta: { [EVENTS_META]: events } }),
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
 * A tool call, start to finish: the result effect/ai's toolkit registration would give, and for a tool that writes
 * (`eventsWritten` given) the events its successful call wrote.
 */
const callFor = (derived: DerivedTool, handler: ToolHandler, eventsWritten: EventsWritten | undefined) => {
  const encodeSuccess = Schema.encodeUnknownEffect(derived.tool.successSchema)
  const encodeFailure = Schema.encodeUnknownEffect(Tool.failureResultSchema(derived.tool))
  const name = derived.spec.name
  // The API's Schemas need no service to encode.
  return (args: unknown): Effect.Effect<McpSchema.CallToolResult, never, CurrentCaller> =>
    Effect.annotateCurrentSpan({ tool: name, parameters: args ?? {} }).pipe(
      Effect.andThen(Effect.matchEffect(handler(args ?? {}), {
        onFailure: (failure) => Effect.map(encodeFailure(failure), (encoded) => toolResult(true, encoded)),
        onSuccess: (answer) =>
          Effect.flatMap(encodeSuccess(answer), (encoded) =>
            eventsWritten === undefined
              ? Effect.succeed(toolResult(false, encoded))
              : Effect.map(eventsWritten, (events) => toolResult(false, encoded, events)))
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

/**
 * The events the caller's request wrote, read from the feed (`event.list` by request id, every page). A failure is
 * logged and answers none: the call it follows has made its change already. Interruption propagates.
 */
const eventsWrittenBy = (downstream: Downstream["Service"], eventList: NonNullable<ReturnType<typeof endpointNamed>>): EventsWritten => {
  const listEvents = downstream.call(eventList)
  return Effect.gen(function*() {
    const caller = yield* CurrentCaller
    const scope = callScopeOf(caller)
    const events: Array<NamedEvent> = []
    while (true) {
      const query = { requestId: caller.requestId, limit: MAX_PAGE_SIZE, offset: events.length }
      const page = (yield* listEvents({ query } as OperationInput<typeof eventList>, scope).pipe(
        traced("Downstream.call", { attributes: { "downstream.operation": "event.list" } })
      )) as Page<NamedEvent>
      for (const { id, type } of page.items) events.push({ id, type })
      if (page.items.length === 0 || events.length >= page.total) return events
    }
  }).pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.logWarning("The events of an MCP tool call could not be read; its result names none", cause).pipe(Effect.as<ReadonlyArray<NamedEvent>>([]))
    )
  )
}

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
      const eventList = endpointNamed("event.list")
      if (eventList === undefined) return yield* Effect.die("MCP tools: event.list is not an operation of the contract")
      const eventsWritten = eventsWrittenBy(downstream, eventList)
      const handlers: Record<string, ToolHandler> = {}
      const byName = new Map<string, (args: unknown) => Effect.Effect<McpSchema.CallToolResult, never, CurrentCaller>>()
      for (const derived of McpTools) {
        const operation = derived.spec.operation
        const endpoint = endpointNamed(operation)
        if (endpoint === undefined) return yield* Effect.die(`MCP tool ${derived.spec.name}: ${operation} is not an operation of the contract`)
        const call = downstream.call(endpoint)
        const paged = isPaged(endpoint)
        const notFound = Effect.fail<ToolFailure>({ code: 404, message: "No such record", type: "NotFound" })
        // A generator defined once per tool, not per call (IncomingSecretGuard.ts says why).
        const required = TOOL_SCOPES.get(derived.spec.name)!
        const refused = InsufficientScope.of(required.operation, required.scope)
        const handler: ToolHandler = Effect.fnUntraced(function*(args) {
          // Outside the secret's scopes: the REST 403, whatever the arguments (McpScopes.ts).
          if (!(yield* CurrentCaller).grants.scopes.has(required.scope)) {
            return yield* Effect.fail<ToolFailure>({ code: refused.code, message: refused.message, type: refused.type })
          }
          const request = yield* derived.decodeArguments(args)
          // What storage cannot hold is an invalid argument naming the field, as over REST.
          const unstorable = unstorableInput(request)
          if (unstorable !== undefined) {
            const { code, errors, message, type } = unstorable
            return yield* Effect.fail(errors === undefined ? { code, message, type } : { code, message, type, errors })
          }
          const caller = yield* CurrentCaller
          const scope = callScopeOf(caller)
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
        byName.set(derived.spec.name, callFor(derived, handler, derived.spec.readOnly ? undefined : eventsWritten))
      }
      return McpToolCalls.of({ handlers, byName })
    })
  )
}
