/**
 * The 9 MCP tools' calls: decode the arguments, invoke the tool's REST
 * operation on Downstream, check and encode the answer as JSON with its
 * success Schema in one pass (as the REST handler does), and shape the
 * result as effect/ai's toolkit does (the encoded answer, structured and as
 * text; a failure with its failure Schema; a defect as the generic tool
 * error). McpServer serves them (McpRoute), and
 * McpDirect answers a plain `tools/call` with them without McpServer.
 *
 * A successful call of a tool that writes names the events it wrote in its
 * result's `_meta` (`io.mfg/events`: `[{id, type}]`, in the order written),
 * read from the event feed by the call's request id, which the engine
 * records with each event. The structured content stays the operation's
 * answer. The write has happened by then, so a failed lookup does not fail
 * the call: it is logged and the key left out.
 *
 * No lost updates, no duplicates, as over REST:
 * - a result naming records carries their entity tags in `_meta`, each the
 *   REST read's `ETag` of the record (`io.mfg/etag` for one record,
 *   `io.mfg/etags` by id for a list);
 * - a tool that changes one record takes `ifMatch` (the REST `If-Match`):
 *   the same check (Conditional.ts); a 412 PreconditionFailed tool error,
 *   with the current tag, when the record changed since it was read;
 * - a tool whose REST operation takes an `Idempotency-Key` honours the HTTP
 *   header (McpToolRetries.ts).
 */
import { Cause, Context, Effect, ErrorReporter, Layer, Result, Schema } from "effect"
import { Tool } from "effect/ai"
import type { HttpApiEndpoint } from "effect/http-api"
import { callScopeOf, CurrentCaller } from "../../contract/Authorization.ts"
import type { CallScope, DecodedInput } from "../../contract/EngineCall.ts"
import { takesIdempotencyKey } from "../../contract/IdempotencyKey.ts"
import { EVENTS_META } from "../../contract/mcp/resources.ts"
import { type DerivedTool, downstreamFailure, McpTools, type ToolFailure } from "../../contract/mcp/tools.ts"
import { anyEndpoint, endpointNamed, isPaged, type OperationEndpoint, type OperationInput, operationOf, type Page } from "../../contract/Operations.ts"
import { PublicApi } from "../../contract/PublicApi.ts"
import { type DownstreamError, InsufficientScope } from "../../domain/Errors.ts"
import { MAX_PAGE_SIZE } from "../../domain/Resource.ts"
import { traced } from "../../domain/Span.ts"
import { Instruments, type TelemetryInstruments } from "../../platform/telemetry/Instruments.ts"
import { Downstream } from "../../services/Downstream.ts"
import { CurrentRequestFacts } from "../request/index.ts"
import { CurrentIdempotentCall, entityTag, IdempotentOnce, makePreconditions, recordTag, type RunOnce, unstorableInput, writtenId } from "../rest/index.ts"
import { TOOL_SCOPES } from "./McpScopes.ts"
import { type CallHeaders, type ToolOutcome, withToolKey } from "./McpToolRetries.ts"
import type { ToolResult } from "./ToolResult.ts"

/** A tool's handler: decode the arguments, invoke the REST operation, check the answer. */
export type ToolHandler = (args: unknown) => Effect.Effect<unknown, ToolFailure, CurrentCaller>

/** effect/ai's answer to a tool call that failed unexpectedly (a defect), word for word. */
const INTERNAL_TOOL_ERROR = "Tool execution failed due to an internal server error."

/** An event a tool call wrote, as its result's `_meta` names it. */
export interface NamedEvent {
  readonly id: string
  readonly type: string
}

/** The events the caller's request wrote, in the order written; none when they cannot be read. */
type EventsWritten = Effect.Effect<ReadonlyArray<NamedEvent>, never, CurrentCaller>

/** The `_meta` keys of a result's entity tags: one record's, or a list's by record id. */
export const ETAG_META = "io.mfg/etag"
export const ETAGS_META = "io.mfg/etags"

type Meta = Readonly<Record<string, unknown>>

/**
 * A tool call's result as effect/ai's toolkit registration builds it: the encoded value, structured and as text;
 * with what the call adds in `_meta` (the events it wrote, its records' tags), when it adds anything.
 */
const toolResult = (isError: boolean, encoded: unknown, meta: Meta = {}, text = JSON.stringify(encoded)): ToolResult => {
  const _meta = Object.keys(meta).length === 0 ? undefined : meta
  const content = encoded === undefined ? [] : [{ type: "text" as const, text }]
  // The text is the structured content's serialization: its answer need not write the record again (McpDirect).
  return isError || encoded === undefined
    ? { _meta, isError, content }
    : { _meta, isError, structuredContent: encoded, content, structuredText: text }
}

/** A defect of a tool call: logged and reported, answered with effect/ai's generic tool error; interruption propagates. */
const internalToolError = (cause: Cause.Cause<unknown>) =>
  Result.isFailure(Cause.findFail(cause)) && !Cause.hasDies(cause)
    ? Effect.failCause(cause)
    : Effect.logError(cause).pipe(
      Effect.andThen(ErrorReporter.report(cause)),
      Effect.as<ToolResult>({ isError: true, content: [{ type: "text", text: INTERNAL_TOOL_ERROR }] })
    )

/** Whether a failure means "try again", so that a retry under the same key runs (REST stores no 5xx, 429 or 400 either). */
const retryable = (failure: ToolFailure) => failure.code >= 500 || failure.code === 429 || failure.code === 400

/** A failed call: the tool error, and what its result's `_meta` says beside it (a 412's current tag). */
interface FailedCall {
  readonly failure: ToolFailure
  readonly meta?: Meta | undefined
}

const failed = (failure: ToolFailure, meta?: Meta): FailedCall => ({ failure, meta })

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

/** What a tool call is made of, once its tool is known. */
interface CallParts {
  readonly derived: DerivedTool
  /** The REST operation on a decoded request, in `scope`: its answer (a list's records), not yet checked. */
  readonly operate: (request: DecodedInput, scope: CallScope) => Effect.Effect<unknown, ToolFailure>
  /** The `If-Match` check of the REST write (a conditional tool's). */
  readonly precondition: ReturnType<typeof makePreconditions>
  /** The tag of one of the tool's records, as its REST read answers it (none for a tool answering no record). */
  readonly tagOf: ((record: unknown, requestId: string) => Effect.Effect<string, DownstreamError>) | undefined
  readonly eventsWritten: EventsWritten | undefined
  readonly once: RunOnce
}

/** The `_meta` naming the tags of the records `answer` holds: one record's, or a list's by id. */
const tagsMeta = Effect.fnUntraced(function*(tagOf: CallParts["tagOf"], answer: unknown, requestId: string) {
  if (tagOf === undefined || answer === null) return {}
  if (!Array.isArray(answer)) return { [ETAG_META]: yield* tagOf(answer, requestId) }
  const tags: Record<string, string> = {}
  for (const record of answer) tags[(record as { readonly id: string }).id] = yield* tagOf(record, requestId)
  return { [ETAGS_META]: tags }
})

/**
 * The arguments decoded into the REST operation's input, for a secret whose
 * scopes allow the tool (else the REST 403, whatever the arguments:
 * McpScopes.ts); what storage cannot hold refused naming the field, as over REST.
 */
const decodeRequest = Effect.fnUntraced(function*(derived: DerivedTool, args: unknown) {
  const required = TOOL_SCOPES.get(derived.spec.name)!
  if (!(yield* CurrentCaller).grants.scopes.has(required.scope)) {
    const refused = InsufficientScope.of(required.operation, required.scope)
    return yield* Effect.fail<ToolFailure>({ code: refused.code, message: refused.message, type: refused.type })
  }
  const decoded = yield* derived.decodeArguments(args)
  const unstorable = unstorableInput(decoded.request)
  if (unstorable !== undefined) {
    const { code, errors, message, type } = unstorable
    return yield* Effect.fail<ToolFailure>(errors === undefined ? { code, message, type } : { code, message, type, errors })
  }
  return decoded
})

/** A tool call, as McpServer and McpDirect make it: the caller is a request service, the request's headers an argument. */
export type ToolCall = (args: unknown, headers: CallHeaders) => Effect.Effect<ToolResult, never, CurrentCaller>

/**
 * One tool call, start to finish: the arguments decoded; the call run once
 * per Idempotency-Key; `ifMatch` checked; the operation; the result, with the
 * tags of its records and the events it wrote.
 */
const callFor = (parts: CallParts): ToolCall => {
  const { derived, eventsWritten, operate, precondition, tagOf } = parts
  const encodeFailure = Schema.encodeUnknownEffect(Tool.failureResultSchema(derived.tool))
  const name = derived.spec.name
  const endpoint = derived.spec.endpoint
  const keyed = takesIdempotencyKey(endpoint)
  const asFailure = (error: DownstreamError) => failed(downstreamFailure(error))

  /** The call of a decoded request in the caller's app: its answer and its result's `_meta`. */
  const run = Effect.fnUntraced(function*(request: DecodedInput, ifMatch: string | undefined) {
    const caller = yield* CurrentCaller
    const idempotency = yield* CurrentIdempotentCall
    let scope: CallScope = { ...callScopeOf(caller), ...(idempotency === undefined ? {} : { idempotency }) }
    if (ifMatch !== undefined) {
      const outcome = yield* Effect.mapError(precondition(derived.spec.operation, writtenId(request), ifMatch, scope), asFailure)
      if (outcome._tag === "Unsupported") return yield* Effect.fail(failed({ code: 400, message: `${name} takes no ifMatch`, type: "BadRequest" }))
      if (outcome._tag === "Failed") {
        const failure = { code: 412, message: outcome.message.replace("If-Match", "ifMatch"), type: "PreconditionFailed" }
        return yield* Effect.fail(failed(failure, outcome.current === undefined ? undefined : { [ETAG_META]: outcome.current }))
      }
      scope = outcome.scope
    }
    const answer = yield* Effect.mapError(operate(request, scope), (failure) => failed(failure))
    // Checked and encoded once; its text is the result's text and, for a record as its REST read answers it, what the tag is of.
    const encoded = yield* Effect.mapError(derived.encodeAnswer(answer), (failure) => failed(failure))
    const text = JSON.stringify(encoded)
    const tags = tagOf !== undefined && derived.answersItsRecord && encoded !== null
      ? { [ETAG_META]: entityTag(text) }
      : yield* Effect.mapError(tagsMeta(tagOf, answer, scope.requestId), asFailure)
    const events = eventsWritten === undefined ? [] : yield* eventsWritten
    return { encoded, text, meta: events.length === 0 ? tags : { [EVENTS_META]: events, ...tags } }
  })

  /** A call's outcome, success or failure, as a tool result; whether a retry may be answered with it. */
  const outcomeOf = (request: DecodedInput, ifMatch: string | undefined) =>
    Effect.matchEffect(run(request, ifMatch), {
      onFailure: ({ failure, meta }) =>
        Effect.map(encodeFailure(failure), (encoded): ToolOutcome => ({ result: toolResult(true, encoded, meta), storable: !retryable(failure) })),
      onSuccess: ({ encoded, meta, text }) => Effect.succeed<ToolOutcome>({ result: toolResult(false, encoded, meta, text), storable: true })
    }) as Effect.Effect<ToolOutcome, never, CurrentCaller>

  // The API's Schemas need no service to encode.
  return (args, headers) =>
    Effect.annotateCurrentSpan({ tool: name, parameters: args ?? {} }).pipe(
      Effect.andThen(Effect.matchEffect(decodeRequest(derived, args), {
        // Invalid arguments: nothing ran, and nothing is kept under a key.
        onFailure: (failure) => Effect.map(encodeFailure(failure), (encoded) => toolResult(true, encoded)),
        onSuccess: ({ ifMatch, request }) =>
          Effect.map(
            keyed ? withToolKey(parts.once, name, request, headers.idempotencyKey, outcomeOf(request, ifMatch)) : outcomeOf(request, ifMatch),
            (outcome) => outcome.result
          )
      })),
      Effect.catchCause(internalToolError)
    ) as Effect.Effect<ToolResult, never, CurrentCaller>
}

export class McpToolCalls extends Context.Service<McpToolCalls, {
  /** Each tool's handler, by tool name (what effect/ai's toolkit registration takes; McpRoute registers the calls instead). */
  readonly handlers: Readonly<Record<string, ToolHandler>>
  /** The call of each of the 9 tools, by tool name. */
  readonly byName: ReadonlyMap<string, ToolCall>
}>()("mfg/http/McpToolCalls") {
  static readonly layer = Layer.effect(
    McpToolCalls,
    Effect.gen(function*() {
      const downstream = yield* Downstream
      const instruments = yield* Instruments
      const once = yield* IdempotentOnce
      const noteFailure = (error: DownstreamError) => noteDownstreamFailure(instruments, error)
      const eventList = endpointNamed("event.list")
      if (eventList === undefined) return yield* Effect.die("MCP tools: event.list is not an operation of the contract")
      const eventsWritten = eventsWrittenBy(downstream, eventList)
      /** A Downstream call as the tools make it: traced, its failure noted. */
      const callOf = (endpoint: HttpApiEndpoint.Top, input: DecodedInput, scope: CallScope) => {
        const contract = endpoint as OperationEndpoint
        return downstream.call(contract)(input as OperationInput<typeof contract>, scope).pipe(
          Effect.tapError(noteFailure),
          traced("Downstream.call", { attributes: { "downstream.operation": operationOf(contract) } })
        )
      }
      const precondition = makePreconditions(PublicApi, callOf)
      const handlers: Record<string, ToolHandler> = {}
      const byName = new Map<string, ToolCall>()
      for (const derived of McpTools) {
        const endpoint = endpointNamed(derived.spec.operation)
        if (endpoint === undefined) return yield* Effect.die(`MCP tool ${derived.spec.name}: ${derived.spec.operation} is not an operation of the contract`)
        const paged = isPaged(endpoint)
        const notFound = Effect.fail<ToolFailure>({ code: 404, message: "No such record", type: "NotFound" })
        // A generator defined once per tool, not per call (IncomingSecretGuard.ts says why).
        const operate = Effect.fnUntraced(function*(request: DecodedInput, scope: CallScope) {
          // The arguments were decoded by the endpoint's own schemas: they are its input.
          const answer: unknown = yield* Effect.mapError(callOf(anyEndpoint(endpoint), request, scope), downstreamFailure)
          if (answer === null && derived.spec.nullable !== true) return yield* notFound
          // A list tool answers the page's records, as the REST body does (the total is a REST header).
          return paged ? (answer as Page<unknown>).items : answer
        })
        const recordRead = derived.spec.recordRead
        const tagOf = recordRead === undefined ? undefined : recordTag(recordRead)
        byName.set(
          derived.spec.name,
          callFor({ derived, operate, precondition, tagOf, eventsWritten: derived.spec.readOnly ? undefined : eventsWritten, once })
        )
        handlers[derived.spec.name] = (args) =>
          Effect.flatMap(
            decodeRequest(derived, args),
            ({ request }) => Effect.flatMap(CurrentCaller, (caller) => Effect.flatMap(operate(request, callScopeOf(caller)), derived.checkAnswer))
          )
      }
      return McpToolCalls.of({ handlers, byName })
    })
  ).pipe(Layer.provide(IdempotentOnce.layer))
}
