/**
 * GET /v1/request-log: the caller's app's calls in the caller's mode, read
 * from the meter (Meter.requestLog) and answered as every list is (the page's
 * records, `X-Total-Count`, `Link`). The call reading the log is metered
 * like any, and is never in the page it answers. The MCP resource
 * `mfg://request-log` reads the same pages (McpResources.ts).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { CurrentCaller } from "../../contract/Authorization.ts"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { RequestLogEntry, type RequestLogQuery } from "../../domain/RequestLog.ts"
import { Meter } from "../../services/Meter.ts"
import { withPageHeaders } from "./AnswerHeaders.ts"
import { unstorableInput } from "./InputChecks.ts"
import { undeclaredInput } from "./UndeclaredInput.ts"

/** What the handler reads of a request the builder decoded (ForwardHandlers' ForwardedRequest). */
interface ForwardedRequest {
  readonly endpoint: HttpApiEndpoint.Top
  readonly request: HttpServerRequest.HttpServerRequest
  readonly query?: unknown
}

/** A page of the caller's request log: its app, its mode, never the call reading it. */
export const requestLogPage = (meter: Meter["Service"], query: RequestLogQuery) =>
  Effect.flatMap(CurrentCaller, (caller) => meter.requestLog({ appId: caller.appId, mode: caller.grants.mode, query, reader: caller.requestId }))

const encodeEntries = Schema.encodeUnknownEffect(Schema.toCodecJson(Schema.Array(RequestLogEntry)))

/** The handler of GET /v1/request-log. */
export const makeRequestLogHandler = (meter: Meter["Service"]) => (request: ForwardedRequest) =>
  Effect.gen(function*() {
    const undeclared = yield* undeclaredInput(request.endpoint, request.request)
    if (undeclared !== undefined) return errorAnswer(undeclared)
    // A filter value storage cannot hold (a NUL) is the 400 naming it, as on every list.
    const unstorable = unstorableInput({ query: request.query })
    if (unstorable !== undefined) return errorAnswer(unstorable)
    const query = request.query as RequestLogQuery
    const page = yield* requestLogPage(meter, query)
    // The entries are the meter's rows as the schema has them: one that does not encode is a defect.
    const body = yield* Effect.orDie(encodeEntries(page.items))
    return withPageHeaders(HttpServerResponse.jsonUnsafe(body), request.request.url, query, page.total)
  }).pipe(Effect.catch((error) => Effect.succeed(errorAnswer(error))))

/** The handler of GET /v1/request-log, over the gateway's meter. */
export class RequestLogHandler extends Context.Service<
  RequestLogHandler,
  (request: ForwardedRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentCaller>
>()("mfg/http/RequestLogHandler") {
  static readonly layer = Layer.effect(RequestLogHandler, Effect.map(Meter, makeRequestLogHandler))
}
