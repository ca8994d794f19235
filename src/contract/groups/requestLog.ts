/**
 * The app's request log: its own calls, from the meter. The gateway answers
 * it (the meter is the gateway's), so it is part of the gateway's API, not
 * of the contract the engine serves.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { RequestLogEntry, RequestLogQuery } from "../../domain/RequestLog.ts"
import { COMMON_ERRORS, pagedList, PAGING, tag } from "../endpoints.ts"

export const RequestLogGroup = HttpApiGroup.make("requestLog")
  .add(
    HttpApiEndpoint.get("list", "/request-log", {
      query: RequestLogQuery,
      success: Schema.Array(RequestLogEntry),
      error: COMMON_ERRORS
    }).annotate(OpenApi.Summary, "List the app's own calls").annotate(
      OpenApi.Description,
      "Every call of the app's secrets in the secret's mode (a test secret reads the test calls, a live one the live calls), as " +
        "metered: time, request id, method, route, operation, status, error type, duration, secret id and client address; never a " +
        "secret's value, a header or a body. `requestId` finds the call an answer's `X-Request-Id` names; `operation`, `status` and " +
        "`secretId` filter (repeatable), `createdAt` takes a date or a range. A call's status, error type and duration are written a " +
        "moment after it is answered (null until then). Reading the log is metered too, but a page never lists the call that reads " +
        `it. ${PAGING}`
    ).annotate(OpenApi.Transform, pagedList)
  )
  .annotateMerge(tag("Request log", "The app's own calls, as the meter recorded them."))
