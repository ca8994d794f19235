/**
 * How every error is answered, in one place: the gateway's REST handlers and
 * guard, and the engine server, answer an error with `errorAnswer`; MCP puts
 * the same `errorBody` in a JSON-RPC error. The one 401 is `notAuthorized`,
 * whose body has no `type`. (A schema failure becomes its 400 in
 * BadRequests.ts.)
 */
import { HttpServerResponse } from "effect/http"
import { type FieldProblem, NOT_AUTHORIZED_BODY } from "../domain/Errors.ts"
import { NOT_AUTHORIZED_HEADERS } from "./Authorization.ts"
import { ERROR_SOURCE_HEADER, ERROR_SOURCE_REQUEST_ID_HEADER } from "./EnginePassthrough.ts"

/**
 * An error as the client reads it: `code` is its HTTP status; a 400 lists the
 * fields at fault (and how many more there were past the list). An error
 * passed through from the engine (a DownstreamError is one) names its
 * `source` and the `requestId` there, and keeps the `status` it was answered
 * with.
 */
export interface ErrorAnswer {
  readonly code: number
  readonly message: string
  readonly type: string
  readonly errors?: ReadonlyArray<FieldProblem> | undefined
  readonly moreErrors?: number | undefined
  readonly status?: number | undefined
  readonly source?: string | undefined
  readonly requestId?: string | undefined
}

/** The body of an error answer, `{code, message, type}` and the fields at fault when there are some: what MCP carries too. */
export const errorBody = (error: ErrorAnswer) => ({
  code: error.code,
  message: error.message,
  type: error.type,
  ...(error.errors === undefined ? {} : { errors: error.errors }),
  ...(error.moreErrors === undefined ? {} : { moreErrors: error.moreErrors })
})

/** The response of an error: its status, its body, and a passthrough's source headers. */
export const errorAnswer = (error: ErrorAnswer) =>
  HttpServerResponse.jsonUnsafe(errorBody(error), {
    status: error.status ?? error.code,
    ...(error.source === undefined || error.requestId === undefined
      ? {}
      : { headers: { [ERROR_SOURCE_HEADER]: error.source, [ERROR_SOURCE_REQUEST_ID_HEADER]: error.requestId } })
  })

/** Same bytes and headers for every authentication failure. */
const NOT_AUTHORIZED_BYTES = new TextEncoder().encode(JSON.stringify(NOT_AUTHORIZED_BODY))

/** The one 401, whatever its cause. */
export const notAuthorized = () =>
  HttpServerResponse.uint8Array(NOT_AUTHORIZED_BYTES, {
    status: 401,
    contentType: "application/json",
    headers: NOT_AUTHORIZED_HEADERS
  })
