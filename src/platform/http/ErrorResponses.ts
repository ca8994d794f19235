/**
 * How failures become responses, in one place: the one 401, the standard
 * `{code, message, type}` errors and downstream passthrough (a schema
 * failure becomes its 400 in src/contract/BadRequests.ts).
 */
import { HttpServerResponse } from "effect/http"
import { NOT_AUTHORIZED_HEADERS } from "../../contract/Authorization.ts"
import type { DownstreamError, FieldProblem } from "../../domain/Errors.ts"

/** Same bytes and headers for every authentication failure. */
const NOT_AUTHORIZED_BYTES = new TextEncoder().encode(JSON.stringify({ code: 401, message: "Not Authorized" }))

export const notAuthorized = () =>
  HttpServerResponse.uint8Array(NOT_AUTHORIZED_BYTES, {
    status: 401,
    contentType: "application/json",
    headers: NOT_AUTHORIZED_HEADERS
  })

/**
 * A `{code, message, type}` error with its status, and the list of fields at
 * fault when it has one (a 400), with how many more there were past the list.
 */
export const errorResponse = (error: {
  readonly code: number
  readonly message: string
  readonly type: string
  readonly errors?: ReadonlyArray<FieldProblem> | undefined
  readonly moreErrors?: number | undefined
}) =>
  HttpServerResponse.jsonUnsafe(
    {
      code: error.code,
      message: error.message,
      type: error.type,
      ...(error.errors === undefined ? {} : { errors: error.errors }),
      ...(error.moreErrors === undefined ? {} : { moreErrors: error.moreErrors })
    },
    { status: error.code }
  )

/** A downstream failure, unchanged: status, body and the two source headers. */
export const downstreamResponse = (error: DownstreamError) =>
  HttpServerResponse.jsonUnsafe({ code: error.code, message: error.message, type: error.type }, {
    status: error.status,
    headers: {
      "x-error-source": error.source,
      "x-error-source-request-id": error.requestId
    }
  })
