/**
 * The engine's errors as the contract states them: whatever the engine
 * refuses (404, 409, 412, 422, 501, 503, …) or the gateway cannot get from it
 * (502 unusable, 504 too slow) reaches the client with the engine's status,
 * the body `EngineErrorBody` (`{code, message, type}`, `code` the status) and
 * the two headers below. The one error-answer function (ErrorAnswer.ts)
 * writes these headers; the OpenAPI document declares them from here.
 */
import { Schema, SchemaAST } from "effect"
import { EngineErrorBody } from "../domain/Errors.ts"

/** Who produced a passed-through error: `engine`, or the engine's own downstream (`model-fetcher`). */
export const ERROR_SOURCE_HEADER = "x-error-source"
/** The request id of the failed call at its source. */
export const ERROR_SOURCE_REQUEST_ID_HEADER = "x-error-source-request-id"

/** The headers of every passed-through error, each with what it says. */
export const ErrorSourceHeaders = Schema.Struct({
  [ERROR_SOURCE_HEADER]: Schema.String.annotate({
    description: "Who produced the error: `engine`, or the engine's own downstream",
    examples: ["engine"]
  }),
  [ERROR_SOURCE_REQUEST_ID_HEADER]: Schema.String.annotate({
    description: "The request id of the failed call at its source, for support",
    examples: ["5f0c6a52-8f1e-4c0b-9a57-2f1d9d3f4b11"]
  })
})

/** What a passed-through error is, for the integrator. */
export const PASSTHROUGH_DESCRIPTION = "An error from the engine, passed through unchanged: its status (404, 409, 422, 501, 502, 504, …), " +
  "its body `{code, message, type}` (`code` is the status) and the `x-error-source` and " +
  "`x-error-source-request-id` headers. 502: the engine's answer was unusable; 504: it did not answer in time."

/** An example of a passed-through error's body. */
export const PASSTHROUGH_EXAMPLE = { code: 404, message: "No ticket 7c1e… for this app", type: "NotFound" } as const

type Json = Record<string, unknown>

/** The body of a passed-through error in the OpenAPI document: the component `EngineErrorBody` is (HttpApi.AdditionalSchemas). */
export const ENGINE_ERROR_REF = `#/components/schemas/${SchemaAST.resolveIdentifier(EngineErrorBody.ast)}`

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** Each header of a Struct of header schemas as an OpenAPI header object: its description beside its schema. */
const headerObjects = (headers: typeof ErrorSourceHeaders): Json =>
  Object.fromEntries(
    Object.entries(headers.fields).map(([name, schema]) => {
      const { description, ...rest } = Schema.toJsonSchemaDocument(schema).schema as Json
      return [name, { description, schema: rest }]
    })
  )

/**
 * Document transform: every operation's `default` response is the
 * passthrough, declared above. The HttpApi keys an error by one numeric
 * status (`httpApiStatus`), and a passed-through error keeps whatever status
 * the engine answered: OpenAPI's `default` (any other status) has no
 * HttpApi form, so it is written here, from the contract's own schemas.
 */
export const withEnginePassthrough = (spec: Json): Json => {
  const paths = isObject(spec.paths) ? spec.paths : {}
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue
    for (const method of METHODS) {
      const operation = item[method]
      if (!isObject(operation) || !isObject(operation.responses)) continue
      operation.responses.default = {
        description: PASSTHROUGH_DESCRIPTION,
        headers: headerObjects(ErrorSourceHeaders),
        content: { "application/json": { schema: { $ref: ENGINE_ERROR_REF }, example: { ...PASSTHROUGH_EXAMPLE } } }
      }
    }
  }
  return spec
}
