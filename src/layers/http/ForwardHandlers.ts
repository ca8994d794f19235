/**
 * Every public endpoint has the same handler: call the endpoint's operation
 * on Downstream with the decoded request, in the caller's app; encode the
 * engine's answer with the endpoint's success schema (which checks it); answer it.
 * An engine answer of `null` is the spec's empty 200. A downstream failure is
 * passed through unchanged; an answer that does not match the schema is the
 * engine's fault: 502, naming it.
 *
 * Input that the schemas accept but storage cannot hold (a NUL character, an
 * unpaired UTF-16 surrogate: PostgreSQL's text and jsonb refuse both) is a
 * 400 naming the field here, before the engine turns it into a storage error;
 * so is a query parameter or a body the endpoint does not declare
 * (UndeclaredInput.ts).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { type HttpApiEndpoint, HttpApiSchema } from "effect/http-api"
import { CurrentCaller } from "../../api/Authorization.ts"
import type { DecodedInput } from "../../api/EngineCall.ts"
import { type OperationEndpoint, type OperationInput, operationOf } from "../../api/Operations.ts"
import { BadRequest, DownstreamError } from "../../domain/Errors.ts"
import { traced } from "../../domain/Span.ts"
import { Downstream } from "../../services/Downstream.ts"
import { downstreamResponse, errorResponse } from "./ErrorResponses.ts"
import { undeclaredInput } from "./UndeclaredInput.ts"

/** The spec's answer for a missing id: 200 with an empty body. */
const EMPTY_200 = HttpServerResponse.uint8Array(new Uint8Array(0), { status: 200, contentType: "application/json" })
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

/** How to answer for one endpoint: its success value, checked and encoded as JSON by its success schema. */
const answerFor = (operation: string, endpoint: HttpApiEndpoint.Top): Answer => {
  const body = [...endpoint.success].find((schema) => !HttpApiSchema.isNoContent(schema.ast))
  if (body === undefined) return () => Effect.succeed(NO_CONTENT)
  // The public API's schemas are plain data: none needs a service to encode.
  const encode = Schema.encodeUnknownEffect(Schema.toCodecJson(body) as unknown as Schema.Codec<unknown, unknown>)
  return (answer, requestId) =>
    encode(answer).pipe(
      Effect.map((json) => HttpServerResponse.jsonUnsafe(json)),
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

/** NUL, or a surrogate without its pair. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** The path of the first string (value or key) in `value` that storage cannot hold. */
const unstorablePath = (value: unknown, path: ReadonlyArray<string | number> = []): ReadonlyArray<string | number> | undefined => {
  if (typeof value === "string") return UNSTORABLE.test(value) ? path : undefined
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorablePath(item, [...path, index])
      if (found !== undefined) return found
    }
    return undefined
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE.test(key)) return [...path, key]
      const found = unstorablePath(item, [...path, key])
      if (found !== undefined) return found
    }
  }
  return undefined
}

const PARTS = [["params", "path parameter"], ["query", "query parameter"], ["payload", "field"]] as const

/**
 * The 400 for input holding a string PostgreSQL cannot store (NUL, an unpaired
 * surrogate), naming the field or parameter; undefined when there is none.
 * A parameter is named by its key, a body field by its path (`lines.0.description`).
 */
export const unstorableInput = (request: DecodedInput): BadRequest | undefined => {
  for (const [part, where] of PARTS) {
    const path = unstorablePath(request[part])
    if (path === undefined) continue
    const name = part === "payload" ? path.join(".") : String(path[0] ?? "")
    const what = "contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored"
    return name.length === 0
      ? BadRequest.of(`The request body ${what}`)
      : BadRequest.of(`Invalid value for ${where} "${name}": ${what}`)
  }
  return undefined
}

/** The one handler of every forwarded endpoint, given the Downstream. */
export const makeForward = (downstream: Downstream["Service"]) => {
  const answers = new WeakMap<HttpApiEndpoint.Top, Answer>()
  return (request: ForwardedRequest): Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentCaller> =>
    Effect.gen(function*() {
      const operation = operationOf(request.endpoint)
      let answer = answers.get(request.endpoint)
      if (answer === undefined) {
        answer = answerFor(operation, request.endpoint)
        answers.set(request.endpoint, answer)
      }
      const caller = yield* CurrentCaller
      const scope = { appId: caller.appId, requestId: caller.requestId }
      const undeclared = yield* undeclaredInput(request.endpoint, request.request)
      if (undeclared !== undefined) return errorResponse(undeclared)
      const unstorable = unstorableInput(request)
      if (unstorable !== undefined) return errorResponse(unstorable)
      // The builder decoded the request with this endpoint's schemas: it is the endpoint's input.
      const endpoint = request.endpoint as OperationEndpoint
      const input = { params: request.params, query: request.query, payload: request.payload } as OperationInput<typeof endpoint>
      const result = yield* downstream.call(endpoint)(input, scope).pipe(
        Effect.tapError((error) => Effect.annotateCurrentSpan({ "error.source": error.source, "http.response.status_code": error.status })),
        traced("Downstream.call", { attributes: { "downstream.operation": operation } })
      )
      return result === null ? EMPTY_200 : yield* answer(result, scope.requestId)
    }).pipe(Effect.catch((error) => Effect.succeed(downstreamResponse(error))))
}

/**
 * The handler of every public endpoint, built once: the router's handlers
 * (PublicHandlers) and the direct record read (RecordReadDirect) take this
 * one instance, so the two paths cannot answer differently.
 */
export class PublicOperationHandler extends Context.Service<
  PublicOperationHandler,
  (request: ForwardedRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentCaller>
>()("mfg/http/PublicOperationHandler") {
  static readonly layer = Layer.effect(PublicOperationHandler, Effect.map(Downstream, makeForward))
}
