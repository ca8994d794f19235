/**
 * The `Idempotency-Key` request header: which operations take it, what a
 * valid key is, and how the OpenAPI document says so.
 *
 * Every POST takes it, and every PUT but the whole-record `replace`: the
 * workflow PUTs (send to production, cancel, timeline, merge, reels...) act
 * once, while a whole-record PUT is idempotent by itself (the same body
 * twice leaves the same record). The rule reads the endpoints of the API, so
 * an operation added later is covered by what it is, not by a list.
 *
 * The header is added to the document by a transform (not to the endpoints'
 * header schemas): the gateway reads it, the engine's contract stays as is.
 */
import { Predicate } from "effect"

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed"

/** A key: 1 to 255 visible ASCII characters (a UUID is the usual choice). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

/** Whether calls of `endpoint` take an Idempotency-Key: every POST, every PUT but a whole-record replace. */
export const takesIdempotencyKey = (endpoint: { readonly method: string; readonly identifier: string }): boolean =>
  endpoint.method === "POST" || (endpoint.method === "PUT" && endpoint.identifier !== "replace")

/** An API as far as the rule reads it: groups of endpoints, each with its method and identifier. */
interface Described {
  readonly groups: Readonly<Record<string, DescribedGroup>>
}
interface DescribedGroup {
  readonly identifier: string
  readonly endpoints: Readonly<Record<string, { readonly method: string; readonly identifier: string }>>
}

/** The operation ids (`customer.create`) of the operations of `api` that take an Idempotency-Key. */
export const idempotentOperations = (api: Described): ReadonlySet<string> =>
  new Set(
    Object.values(api.groups).flatMap((group) =>
      Object.values(group.endpoints).filter(takesIdempotencyKey).map((endpoint) => `${group.identifier}.${endpoint.identifier}`)
    )
  )

const WHAT_IT_DOES = "Makes a retry safe: the first answer to a request with this key is stored for your app for 24 hours, " +
  "and the same request with the same key answers that stored status and body again, with `Idempotent-Replayed: true`, " +
  "instead of running twice. The same key with another operation or body is a 422 (`IdempotencyKeyReused`); " +
  "the same request while the first is still running is a 409 (`IdempotencyKeyInUse`, `Retry-After`). " +
  "Answers that mean \"try again\" (5xx, 429) are not stored: a retry with the same key runs. " +
  "1 to 255 visible ASCII characters, e.g. a UUID; an invalid key is a 400."

/** The header's JSON Schema, as IDEMPOTENCY_KEY_PATTERN states it (wherever a key is taken: REST, MCP). */
export const IDEMPOTENCY_KEY_SCHEMA = { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" } as const

const PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: "header",
  required: false,
  description: WHAT_IT_DOES,
  schema: IDEMPOTENCY_KEY_SCHEMA,
  example: "5f0c6f0e-9b1e-4c55-9d0f-2f4b8f1f6a3e"
} as const

const REPLAYED = {
  description: "`true` when this answer (a success or a refusal) is the stored answer of an earlier request " +
    "with the same `Idempotency-Key`; absent otherwise.",
  schema: { type: "string", enum: ["true"] }
} as const

/** The convention, as the API's description states it (PublicApi). */
export const IDEMPOTENCY_CONVENTION = `- **Retries**: every POST and every workflow PUT (not a whole-record PUT, which is idempotent by itself) ` +
  "takes an optional `Idempotency-Key` header. " + WHAT_IT_DOES

const METHODS = ["post", "put"] as const

/**
 * Document transform: the optional `Idempotency-Key` header on each
 * operation of `api` that takes it, and `Idempotent-Replayed` on its success
 * responses.
 */
export const withIdempotencyKey = (api: Described) => {
  const operations = idempotentOperations(api)
  return (spec: Record<string, unknown>): Record<string, unknown> => {
    const paths = Predicate.isObject(spec.paths) ? spec.paths : {}
    for (const item of Object.values(paths)) {
      if (!Predicate.isObject(item)) continue
      for (const method of METHODS) {
        const operation = item[method]
        if (!Predicate.isObject(operation) || typeof operation.operationId !== "string" || !operations.has(operation.operationId)) continue
        operation.parameters = [...(Array.isArray(operation.parameters) ? operation.parameters : []), { ...PARAMETER }]
        const responses = Predicate.isObject(operation.responses) ? operation.responses : {}
        for (const [status, response] of Object.entries(responses)) {
          // A refusal is replayed too: the passthrough errors are the `default` response.
          if (!(status.startsWith("2") || status === "default") || !Predicate.isObject(response)) continue
          response.headers = { ...(Predicate.isObject(response.headers) ? response.headers : {}), [IDEMPOTENT_REPLAYED_HEADER]: { ...REPLAYED } }
        }
      }
    }
    return spec
  }
}
