/**
 * The headers the gateway adds to answers, and the conditional requests it
 * takes, as the OpenAPI document states them: each header one Schema here,
 * and which operations carry it read off the contract's endpoints (their
 * method, identifier and group), as the gateway decides at run time:
 *
 * - every answer: `X-Request-Id`; `RateLimit` and `RateLimit-Policy` while a
 *   rate limit is in force (src/gateway/request/RateLimiting.ts);
 *   `Access-Control-Allow-Origin` for an `Origin` in CORS_ORIGINS (Cors.ts);
 * - a 429, and the 409 of an Idempotency-Key in use: `Retry-After`;
 * - a read or replace answering JSON: `ETag`; a GET takes `If-None-Match`
 *   and answers 304 when it names the current tag (Conditional.ts);
 * - a PUT or DELETE of `…/{id}` in a group with a read takes `If-Match`, and answers 412
 *   when the record is no longer that version (Conditional.ts);
 * - a create in a group with a read of one record: `Location` (AnswerHeaders.ts);
 * - every operation may fail unexpectedly: a 500 with the error body.
 *
 * Like the Idempotency-Key (IdempotencyKey.ts), these are the gateway's
 * protocol, not the engine's contract: they are added to the document the
 * contract derives, from these definitions.
 */
import { Predicate, Schema } from "effect"
import { ENGINE_ERROR_REF } from "./EnginePassthrough.ts"

type Json = Record<string, unknown>

/** Header values are short text: each is bounded. */
const HeaderText = (max: number, description: string, example: string) =>
  Schema.String.check(Schema.isMaxLength(max)).annotate({ description, examples: [example] })

/** Each header's name, schema and whether every answer that can carry it does. */
const HEADERS = {
  "X-Request-Id": HeaderText(100, "This request's id, for support and in the logs", "5f0c6a52-8f1e-4c0b-9a57-2f1d9d3f4b11"),
  RateLimit: HeaderText(
    200,
    "What is left of the app's budget: `\"default\";r=<calls left>;t=<seconds until the window resets>`. Sent while a rate limit is in force (RATE_LIMIT or the app's own)",
    "\"default\";r=599;t=60"
  ),
  "RateLimit-Policy": HeaderText(
    200,
    "The app's budget: `\"default\";q=<calls>;w=<window in seconds>`. Sent while a rate limit is in force",
    "\"default\";q=600;w=60"
  ),
  "Access-Control-Allow-Origin": HeaderText(
    2048,
    "The calling page's origin, when it is one of CORS_ORIGINS; absent otherwise (no CORS)",
    "https://app.example"
  ),
  "Retry-After": HeaderText(20, "Seconds to wait before retrying", "30"),
  ETag: HeaderText(100, "The entity tag of the record as answered: send it as `If-None-Match` (a read) or `If-Match` (a write)", "\"3q2-7wE\""),
  Location: HeaderText(300, "The path that reads the created record", "/v1/customer/3f2b8c1e-6d4a-4f7e-9b1c-2a5d8e7f9c01")
} as const

type HeaderName = keyof typeof HEADERS

const headerRef = (name: HeaderName): Json => ({ $ref: `#/components/headers/${name}` })

const components = (): Json =>
  Object.fromEntries(
    Object.entries(HEADERS).map(([name, schema]) => {
      const document = Schema.toJsonSchemaDocument(schema)
      const { description, ...rest } = document.schema as Json
      return [name, { description, required: false, schema: rest }]
    })
  )

const IF_NONE_MATCH = {
  name: "If-None-Match",
  in: "header",
  required: false,
  description: "An `ETag` of an earlier answer: when the record is still that version, the answer is a 304 with no body",
  schema: Schema.toJsonSchemaDocument(HeaderText(1000, "", "\"3q2-7wE\"")).schema,
  example: "\"3q2-7wE\""
}

const IF_MATCH = {
  name: "If-Match",
  in: "header",
  required: false,
  description: "The `ETag` of the version this write changes: when the record is another version by now (or gone), the answer " +
    "is a 412 and nothing is written",
  schema: Schema.toJsonSchemaDocument(HeaderText(1000, "", "\"3q2-7wE\"")).schema,
  example: "\"3q2-7wE\""
}

/** The body of an unexpected failure (and of the passthrough errors): the component the document already has. */
const ERROR_BODY = { $ref: ENGINE_ERROR_REF }

const METHODS = ["get", "put", "post", "delete", "patch"] as const

/** An API as far as the rules read it: groups of endpoints, each with its method and identifier. */
interface Described {
  readonly groups: Readonly<
    Record<string, {
      readonly identifier: string
      readonly endpoints: Readonly<Record<string, { readonly method: string; readonly identifier: string; readonly path: string }>>
    }>
  >
}

interface Conditions {
  /** Answers that carry an ETag: GET and PUT answering JSON. */
  readonly tagged: boolean
  readonly takesIfMatch: boolean
  readonly createsWithLocation: boolean
}

/** What the gateway does with each operation (`customer.get`), read off the contract. */
const conditionsOf = (api: Described): ReadonlyMap<string, Conditions> => {
  const table = new Map<string, Conditions>()
  for (const group of Object.values(api.groups)) {
    const endpoints = Object.values(group.endpoints)
    const hasRead = endpoints.some((endpoint) => endpoint.method === "GET" && (endpoint.identifier === "get" || endpoint.identifier === "lookup"))
    const hasGet = endpoints.some((endpoint) => endpoint.method === "GET" && endpoint.identifier === "get")
    for (const endpoint of endpoints) {
      table.set(`${group.identifier}.${endpoint.identifier}`, {
        tagged: endpoint.method === "GET" || endpoint.method === "PUT",
        // The version compared is the record the path's `id` names.
        takesIfMatch: hasRead && (endpoint.method === "PUT" || endpoint.method === "DELETE") && endpoint.path.includes("/:id"),
        createsWithLocation: hasGet && endpoint.method === "POST" && endpoint.identifier === "create"
      })
    }
  }
  return table
}

const withHeaders = (response: Json, names: ReadonlyArray<HeaderName>): void => {
  const headers = Predicate.isObject(response.headers) ? response.headers : {}
  for (const name of names) headers[name] ??= headerRef(name)
  response.headers = headers
}

const hasJson = (response: unknown): boolean => Predicate.isObject(response) && Predicate.isObject(response.content) && "application/json" in response.content

/**
 * Document transform: the headers of every answer, the conditional requests
 * (`If-None-Match` and its 304, `If-Match` and its 412), `Location`,
 * `Retry-After` and the 500, on each operation of `api` as the gateway
 * answers it.
 */
export const withResponseHeaders = (api: Described) => {
  const conditions = conditionsOf(api)
  return (spec: Record<string, unknown>): Record<string, unknown> => {
    const componentsOf = Predicate.isObject(spec.components) ? spec.components : {}
    componentsOf.headers = { ...(Predicate.isObject(componentsOf.headers) ? componentsOf.headers : {}), ...components() }
    spec.components = componentsOf
    const paths = Predicate.isObject(spec.paths) ? spec.paths : {}
    for (const item of Object.values(paths)) {
      if (!Predicate.isObject(item)) continue
      for (const method of METHODS) {
        const operation = item[method]
        if (!Predicate.isObject(operation) || typeof operation.operationId !== "string") continue
        const responses = Predicate.isObject(operation.responses) ? operation.responses : {}
        const found = conditions.get(operation.operationId)
        const ok = responses["200"]
        if (found?.tagged === true && hasJson(ok) && Predicate.isObject(ok)) {
          withHeaders(ok, ["ETag"])
          if (method === "get") {
            operation.parameters = [...(Array.isArray(operation.parameters) ? operation.parameters : []), { ...IF_NONE_MATCH }]
            responses["304"] = { description: "Not modified: the record is still the version `If-None-Match` names (no body)", headers: {} }
          }
        }
        if (found?.takesIfMatch === true) {
          operation.parameters = [...(Array.isArray(operation.parameters) ? operation.parameters : []), { ...IF_MATCH }]
          responses["412"] = {
            description: "Precondition failed: the record is no longer the version `If-Match` names (or is gone); nothing was written. " +
              "Its current `ETag` comes with the answer when there is one.",
            content: { "application/json": { schema: ERROR_BODY } }
          }
        }
        if (found?.createsWithLocation === true && Predicate.isObject(ok)) withHeaders(ok, ["Location"])
        responses["500"] ??= {
          description: "The service failed unexpectedly (a defect, logged for the operator); nothing can be assumed written",
          content: { "application/json": { schema: ERROR_BODY, example: { code: 500, message: "Internal server error", type: "InternalError" } } }
        }
        for (const [status, response] of Object.entries(responses)) {
          if (!Predicate.isObject(response)) continue
          withHeaders(response, ["X-Request-Id", "RateLimit", "RateLimit-Policy", "Access-Control-Allow-Origin"])
          if (status === "429" || status === "default") withHeaders(response, ["Retry-After"])
        }
        operation.responses = responses
      }
    }
    return spec
  }
}
