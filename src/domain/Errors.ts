/**
 * The error bodies of the public API. Every error a client sees, but the 401,
 * has the body `{code, message, type}` where `code` is the HTTP status.
 */
import { Schema } from "effect"
import { insufficientScopeMessage, type Scope } from "./Grants.ts"
import { Int32 } from "./Integers.ts"

const errorBody = <Code extends number>(code: Code) => ({
  code: Schema.Literal(code),
  message: Schema.String,
  type: Schema.String
})

/** One field or parameter at fault in a 400: where it is, and what is wrong with it. */
export const FieldProblem = Schema.Struct({
  path: Schema.String.annotate({ description: "The body field (`lines.0.quantity`), query parameter, path parameter or header at fault" }),
  message: Schema.String.annotate({ description: "What is wrong with it, for a person" })
}).annotate({ identifier: "FieldProblem" })
export type FieldProblem = typeof FieldProblem.Type

/** The most problems a 400 lists: enough to fix a request in one round trip, and a bounded answer to any body. */
export const MAX_LISTED_PROBLEMS = 50

/**
 * A request that does not satisfy its schema. `message` names the first field
 * or parameter at fault; `errors` lists every one (unknown, missing, invalid),
 * so that a client fixes them all in one round trip: the first 50, and
 * `moreErrors` counts the rest.
 */
export class BadRequest extends Schema.Error<BadRequest>("BadRequest")({
  ...errorBody(400),
  errors: Schema.optional(
    Schema.Array(FieldProblem).check(Schema.isMaxLength(MAX_LISTED_PROBLEMS)).annotate({
      description: `Every field or parameter at fault, the first ${MAX_LISTED_PROBLEMS} of them`
    })
  ),
  moreErrors: Schema.optional(
    Int32.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description: `How many more fields or parameters are at fault than \`errors\` lists (absent when it lists every one)`
    })
  )
}, {
  httpApiStatus: 400,
  description: "The request is invalid; `message` names the first field or parameter at fault, `errors` lists every one " +
    `(at most ${MAX_LISTED_PROBLEMS}; \`moreErrors\` counts the rest).`
}) {
  static of(message: string, type = "ValidationError", errors?: ReadonlyArray<FieldProblem>) {
    if (errors === undefined) return new BadRequest({ code: 400, message, type })
    if (errors.length <= MAX_LISTED_PROBLEMS) return new BadRequest({ code: 400, message, type, errors })
    return new BadRequest({
      code: 400,
      message,
      type,
      errors: errors.slice(0, MAX_LISTED_PROBLEMS),
      moreErrors: errors.length - MAX_LISTED_PROBLEMS
    })
  }
}

/** A record the call refers to does not exist (for the caller's app). */
export class NotFound extends Schema.Error<NotFound>("NotFound")(errorBody(404), {
  httpApiStatus: 404,
  description: "The record does not exist."
}) {
  static of(message: string) {
    return new NotFound({ code: 404, message, type: "NotFound" })
  }
}

/** A request body over MAX_BODY_BYTES: refused before it is read whole, the connection closed. */
export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")(errorBody(413), {
  httpApiStatus: 413,
  description: "The request body is larger than the service accepts (MAX_BODY_BYTES, 1 MiB unless configured)."
}) {
  static readonly over = (maxBodyBytes: number) =>
    new PayloadTooLarge({
      code: 413,
      message: `The request body is larger than ${maxBodyBytes} bytes (MAX_BODY_BYTES)`,
      type: "PayloadTooLarge"
    })
}

/**
 * The app has spent its budget of calls for the current window (RATE_LIMIT or
 * the app's override). Answered with `Retry-After` and the `RateLimit` and
 * `RateLimit-Policy` headers; the call is metered, nothing else is done.
 */
export class TooManyRequests extends Schema.Error<TooManyRequests>("TooManyRequests")(errorBody(429), {
  httpApiStatus: 429,
  description: "The app's rate limit is spent; retry after `Retry-After` seconds (see the `RateLimit` header)."
}) {
  static readonly over = (limit: number, windowSeconds: number, retryAfterSeconds: number) =>
    new TooManyRequests({
      code: 429,
      message: `Rate limit exceeded: ${limit} calls per ${windowSeconds} seconds for this app; retry after ${retryAfterSeconds} seconds`,
      type: "TooManyRequests"
    })
}

/**
 * The secret authenticated, but its scopes do not include the one the
 * operation needs (src/contract/Scopes.ts). The call is metered and changes nothing.
 */
export class InsufficientScope extends Schema.Error<InsufficientScope>("InsufficientScope")(errorBody(403), {
  httpApiStatus: 403,
  description: "The secret's scopes do not include the one this operation needs (`x-required-scope`); the message names both. " +
    "Nothing was changed; the call is metered."
}) {
  static readonly of = (operation: string, scope: Scope) =>
    new InsufficientScope({ code: 403, message: insufficientScopeMessage(operation, scope), type: "InsufficientScope" })
}

/**
 * Storage could not be reached. Not an authentication failure: the caller may
 * retry, and nothing was metered or changed.
 */
export class ServiceUnavailable extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")(errorBody(503), {
  httpApiStatus: 503,
  description: "Storage is unreachable; retry later."
}) {
  static readonly storage = () => new ServiceUnavailable({ code: 503, message: "Storage is unavailable", type: "StorageUnavailable" })
}

/** The exact 401 body, whatever the cause: what the service answers, and what the document says. */
export const NOT_AUTHORIZED_BODY = { code: 401, message: "Not Authorized" } as const

/** The one authentication failure, identical for every cause. */
export class NotAuthorized extends Schema.Error<NotAuthorized>("NotAuthorized")({
  code: Schema.Literal(NOT_AUTHORIZED_BODY.code),
  message: Schema.Literal(NOT_AUTHORIZED_BODY.message)
}, {
  httpApiStatus: 401,
  description: "Any authentication failure: missing, malformed, unknown, revoked or regenerated secret, " +
    "secret issued before the release of this interface, or a client address outside the secret's ranges. " +
    `The body is always exactly \`${JSON.stringify(NOT_AUTHORIZED_BODY)}\`.`
}) {}

/**
 * The body of an engine error as the client sees it (documentation only: the
 * body of the passthrough responses in the OpenAPI document).
 */
export const EngineErrorBody = Schema.Struct({
  code: Int32.annotate({ description: "The HTTP status of the response" }),
  message: Schema.String.annotate({ description: "What went wrong, for a person" }),
  type: Schema.String.annotate({ description: "A stable name of the kind of error, for a program" })
}).annotate({
  identifier: "EngineError",
  title: "Engine error",
  description: "An error from the engine, passed through unchanged with the `x-error-source` and " +
    "`x-error-source-request-id` headers.",
  examples: [{ code: 404, message: "No ticket with this id", type: "NotFound" }]
})

/**
 * A failure reported by the engine (embedded or remote). It reaches the client
 * unchanged: status, `{code, message, type}`, and the `x-error-source` and
 * `x-error-source-request-id` headers.
 */
export class DownstreamError extends Schema.Error<DownstreamError>("DownstreamError")({
  status: Int32,
  code: Int32,
  message: Schema.String,
  type: Schema.String,
  source: Schema.String,
  requestId: Schema.String
}) {}

/** One invalid environment variable: its name, and a message that names it and says what it must be. */
export const SettingProblem = Schema.Struct({ variable: Schema.String, message: Schema.String })
export type SettingProblem = typeof SettingProblem.Type

/**
 * A configuration that cannot run: it stops the start. `problems` lists each
 * invalid variable (all of them, not only the first); `message` joins them.
 */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  message: Schema.String,
  problems: Schema.optional(Schema.Array(SettingProblem))
}) {
  static problem(variable: string, message: string): SettingProblem {
    return { variable, message }
  }
  static of(problems: ReadonlyArray<SettingProblem>): InvalidConfig {
    return new InvalidConfig({ message: problems.map((problem) => problem.message).join("; "), problems })
  }
  /** One variable's problem. */
  static about(variable: string, message: string): InvalidConfig {
    return InvalidConfig.of([InvalidConfig.problem(variable, message)])
  }
}
