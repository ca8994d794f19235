/**
 * The handler of every public endpoint but those the gateway answers itself
 * (the table in PublicHandlers.ts): call the endpoint's operation
 * on Downstream with the decoded request, in the caller's app; encode the
 * engine's answer with the endpoint's success schema (which checks it); answer it.
 * An engine answer of `null` is the spec's empty 200. A downstream failure is
 * passed through unchanged; an answer that does not match the schema is the
 * engine's fault: 502, naming it.
 *
 * Around the call: input the schemas accept but the service refuses is a 400
 * naming the field (UndeclaredInput.ts, InputChecks.ts); a read or replace
 * answer carries its entity tag and a write may be conditional
 * (Conditional.ts); a page carries its total and links, a create its
 * `Location` (AnswerHeaders.ts); a retried POST or workflow PUT answers as
 * the first time (Idempotency.ts).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { type HttpApiEndpoint, HttpApiSchema } from "effect/http-api"
import { callScopeOf, CurrentCaller } from "../../contract/Authorization.ts"
import type { CallScope, DecodedInput } from "../../contract/EngineCall.ts"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { isPaged, type OperationEndpoint, type OperationInput, operationOf, type Page } from "../../contract/Operations.ts"
import { PublicApi } from "../../contract/PublicApi.ts"
import { DownstreamError } from "../../domain/Errors.ts"
import { plainJsonCodec } from "../../domain/JsonCodec.ts"
import { traced } from "../../domain/Span.ts"
import { Downstream } from "../../services/Downstream.ts"
import { locationTable, MISSING_RECORD, type PageQuery, withCreated, withPageHeaders } from "./AnswerHeaders.ts"
import { entityTag, makePreconditions, namesTag, notModified, preconditionFailed, unconditional, writtenId } from "./Conditional.ts"
import { CurrentIdempotentCall, IdempotentCalls, type WithIdempotencyKey } from "./Idempotency.ts"
import { mismatchedId, unstorableInput } from "./InputChecks.ts"
import { undeclaredInput } from "./UndeclaredInput.ts"

const NO_CONTENT = HttpServerResponse.empty({ status: 204 })

/** What a forwarded handler reads of the request the HttpApi builder hands it. */
export interface ForwardedRequest {
  readonly endpoint: HttpApiEndpoint.Top
  /** The request itself: what it carries beyond what the endpoint declares is refused. */
  readonly request: HttpServerRequest.HttpServerRequest
  readonly params?: unknown
  readonly query?: unknown
  readonly payload?: unknown
}

type Answer = (answer: unknown, requestId: string) => Effect.Effect<HttpServerResponse.HttpServerResponse, DownstreamError>

/** Answers that are a representation of the target (a read, a replace): they carry its entity tag. */
const TAGGED = new Set(["GET", "PUT"])

/** How to answer for one endpoint: its success value, checked and encoded as JSON by its success schema. */
const answerFor = (operation: string, endpoint: HttpApiEndpoint.Top): Answer => {
  const body = [...endpoint.success].find((schema) => !HttpApiSchema.isNoContent(schema.ast))
  if (body === undefined) return () => Effect.succeed(NO_CONTENT)
  // The public API's schemas are plain data: none needs a service to encode.
  const encode = Schema.encodeUnknownEffect(plainJsonCodec(body))
  const respond = TAGGED.has(endpoint.method)
    ? (json: unknown) => {
      const text = JSON.stringify(json)
      return HttpServerResponse.text(text, { contentType: "application/json", headers: { etag: entityTag(text) } })
    }
    : (json: unknown) => HttpServerResponse.jsonUnsafe(json)
  return (answer, requestId) =>
    encode(answer).pipe(
      Effect.map(respond),
      Effect.mapError(() =>
        new DownstreamError({
          status: 502,
          code: 502,
          message: `The engine's answer to ${operation} does not match its schema`,
          type: "BadGateway",
          source: "engine",
          requestId
        })
      )
    )
}

/** The one handler of every forwarded endpoint, given the Downstream. */
export const makeForward = (downstream: Downstream["Service"], idempotent: WithIdempotencyKey) => {
  const answers = new WeakMap<HttpApiEndpoint.Top, Answer>()
  const answerOf = (endpoint: HttpApiEndpoint.Top) => {
    let answer = answers.get(endpoint)
    if (answer === undefined) {
      answer = answerFor(operationOf(endpoint), endpoint)
      answers.set(endpoint, answer)
    }
    return answer
  }
  const locations = locationTable(PublicApi)

  const callOf = (endpoint: HttpApiEndpoint.Top, input: DecodedInput, scope: CallScope) => {
    const operation = operationOf(endpoint)
    // The builder decoded the request with this endpoint's schemas: it is the endpoint's input.
    const contract = endpoint as OperationEndpoint
    return downstream.call(contract)(input as OperationInput<typeof contract>, scope).pipe(
      Effect.tapError((error) => Effect.annotateCurrentSpan({ "error.source": error.source, "http.response.status_code": error.status })),
      traced("Downstream.call", { attributes: { "downstream.operation": operation } })
    )
  }

  const precondition = makePreconditions(PublicApi, callOf)

  /**
   * The scope of a write that names the version it changes (If-Match): the
   * 412 when the record is another version (or none), else the version the
   * engine checks again as it writes.
   */
  const conditionalScope = Effect.fnUntraced(function*(request: ForwardedRequest, ifMatch: string, scope: CallScope) {
    const outcome = yield* precondition(operationOf(request.endpoint), writtenId(request), ifMatch, scope)
    switch (outcome._tag) {
      case "Unsupported":
        return errorAnswer(unconditional(request.endpoint.path))
      case "Failed":
        return preconditionFailed(outcome.message, outcome.current)
      case "Holds":
        return outcome.scope
    }
  })

  /** The call and its answer; a generator defined once, not per call (IncomingSecretGuard.ts says why). */
  const respond = Effect.fnUntraced(function*(request: ForwardedRequest) {
    const endpoint = request.endpoint
    const caller = yield* CurrentCaller
    const undeclared = yield* undeclaredInput(endpoint, request.request)
    if (undeclared !== undefined) return errorAnswer(undeclared)
    const refused = unstorableInput(request) ?? mismatchedId(request)
    if (refused !== undefined) return errorAnswer(refused)
    const headers = request.request.headers
    const ifMatch = endpoint.method === "PUT" || endpoint.method === "DELETE" ? headers["if-match"] : undefined
    const scoped = ifMatch === undefined ? callScopeOf(caller) : yield* conditionalScope(request, ifMatch, callScopeOf(caller))
    if (HttpServerResponse.isHttpServerResponse(scoped)) return scoped
    const input = { params: request.params, query: request.query, payload: request.payload }
    const idempotency = yield* CurrentIdempotentCall
    const result = yield* callOf(endpoint, input, idempotency === undefined ? scoped : { ...scoped, idempotency })
    if (result === null) return MISSING_RECORD
    const answer = answerOf(endpoint)
    const response = isPaged(endpoint)
      ? withPageHeaders(
        yield* answer((result as Page<unknown>).items, scoped.requestId),
        request.request.url,
        request.query as PageQuery,
        (result as Page<unknown>).total
      )
      : withCreated(yield* answer(result, scoped.requestId), endpoint, locations.get(endpoint), result)
    const ifNoneMatch = endpoint.method === "GET" ? headers["if-none-match"] : undefined
    const tag = response.headers.etag
    return ifNoneMatch !== undefined && tag !== undefined && namesTag(ifNoneMatch, tag, "weak") ? notModified(tag) : response
  })

  return (request: ForwardedRequest): Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentCaller> =>
    idempotent(request, Effect.catch(respond(request), (error) => Effect.succeed(errorAnswer(error))))
}

/** The handler of a public endpoint: the request the builder decoded, answered. */
export type PublicHandler = (request: ForwardedRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentCaller>

/**
 * The forwarder, built once: the router's handlers (PublicHandlers) and the
 * direct record read (RecordReadDirect) take this one instance, so the two
 * paths cannot answer differently.
 */
export class ForwardHandler extends Context.Service<ForwardHandler, PublicHandler>()("mfg/http/ForwardHandler") {
  static readonly layer = Layer.effect(
    ForwardHandler,
    Effect.gen(function*() {
      return makeForward(yield* Downstream, yield* IdempotentCalls)
    })
  ).pipe(Layer.provide(IdempotentCalls.layer))
}
