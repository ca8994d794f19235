/**
 * What the OpenAPI document says that the HttpApi cannot: applied by
 * `OpenApi.Transform` annotations to the document `OpenApi.fromApi` derives
 * (served at /openapi.json and rendered at /docs), never written by hand.
 *
 * - the security scheme: the Incoming Secret middleware reads the raw
 *   `Authorization` header itself (so it declares no HttpApi security), so
 *   the scheme and a requirement on every operation are added here;
 * - the 401 with its exact body and `WWW-Authenticate` header, from the
 *   constants the server answers with;
 * - the engine's passthrough errors (any other status, `{code, message,
 *   type}`, `x-error-source` and `x-error-source-request-id`);
 * - the empty 200 of the reads of a missing id (`emptyOk`, per operation);
 * - an example for every request and response body, built from the schema
 *   and the examples its fields carry;
 * - paths that differ only by a parameter's name merged (`/item/{id}`).
 */
import { NOT_AUTHORIZED_BODY, NOT_AUTHORIZED_HEADERS } from "./Authorization.ts"

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const objectAt = (value: Json, key: string): Json => {
  const found = value[key]
  if (isObject(found)) return found
  const created: Json = {}
  value[key] = created
  return created
}

/** The name of the security scheme in `components.securitySchemes`. */
export const SECURITY_SCHEME = "IncomingSecret"
/** The component schema of a passthrough error body. */
export const ENGINE_ERROR_SCHEMA = "EngineError"

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const

const EMPTY_200_TEXT = "A missing id (or a record of another app) answers **200 with an empty body** " +
  "(`Content-Length: 0`, no JSON), not 404: check the body for an `id` before using it."

/**
 * Endpoint transform: the operation's 200 may have an empty body. Marks it
 * `x-empty-200: true` and says so in the 200 response and the operation.
 */
export const emptyOk = (operation: Record<string, unknown>): Record<string, unknown> => {
  const responses = objectAt(operation, "responses")
  const ok = objectAt(responses, "200")
  ok.description = `${String(ok.description ?? "Success").replace(/\.$/, "")}; or an empty body. ${EMPTY_200_TEXT}`
  operation["x-empty-200"] = true
  const description = typeof operation.description === "string" ? operation.description : ""
  if (!description.includes("empty body")) {
    operation.description = description === "" ? EMPTY_200_TEXT : `${description}\n\n${EMPTY_200_TEXT}`
  }
  return operation
}

const AUTHENTICATION = "Every /v1 operation needs an Incoming Secret in the `Authorization` header: the raw secret " +
  "(`Authorization: <SECRET>`) or, equivalently, `Authorization: Bearer <SECRET>`. Exactly one `Authorization` header. " +
  "Any failure (missing, malformed, unknown, revoked or regenerated secret, or a client address outside the " +
  "secret's ranges) answers the same 401: body `{\"code\":401,\"message\":\"Not Authorized\"}` and " +
  "`WWW-Authenticate: Bearer realm=\"v1\"`."

const CONVENTIONS = [
  "## Conventions",
  "",
  "- **Authentication**: " + AUTHENTICATION,
  "- **Empty 200**: a read of a missing id (`GET /v1/<resource>/{id}`, `GET /v1/<resource>/lookup`) answers " +
  "200 with an empty body, not 404. Such operations carry `x-empty-200: true`.",
  "- **Lists** filter by repeatable parameters (`?ids=a&ids=b`, `?name=x&name=y`), by one date " +
  "(`?createdAt=2026-11-22`, a whole UTC day) or a range (`?createdAt[from]=…&createdAt[to]=…`, inclusive), " +
  "and page with `limit` (1–1000, default 100) and `offset`.",
  "- **PUT replaces the whole record**: every required field must be present; omitted optional fields are cleared.",
  "- **400** names the field or parameter at fault; an unknown field or parameter is a 400, never ignored.",
  "- **Engine errors pass through**: any other status (404, 409, 422, 501, 502, 504, …) has the body " +
  "`{code, message, type}` and the headers `x-error-source` and `x-error-source-request-id`. " +
  "502 means the engine answered something unusable, 504 that it did not answer in time.",
  "- **413**: the body is larger than the service accepts (1 MiB unless the operator set `MAX_BODY_BYTES`); " +
  "it is refused before it is read whole, and the connection is closed.",
  "- **503**: storage is unreachable; nothing was changed or metered, retry later."
].join("\n")

const ERROR_SOURCE_HEADERS: Json = {
  "x-error-source": {
    description: "Who produced the error: `engine`, or the engine's own downstream",
    schema: { type: "string", examples: ["engine"] }
  },
  "x-error-source-request-id": {
    description: "The request id of the failed call at its source, for support",
    schema: { type: "string", examples: ["5f0c6a52-8f1e-4c0b-9a57-2f1d9d3f4b11"] }
  }
}

const engineErrorResponse = (): Json => ({
  description: "An error from the engine, passed through unchanged: its status (404, 409, 422, 501, 502, 504, …), " +
    "its body `{code, message, type}` (`code` is the status) and the `x-error-source` and " +
    "`x-error-source-request-id` headers. 502: the engine's answer was unusable; 504: it did not answer in time.",
  headers: structuredClone(ERROR_SOURCE_HEADERS),
  content: {
    "application/json": {
      schema: { $ref: `#/components/schemas/${ENGINE_ERROR_SCHEMA}` },
      example: { code: 404, message: "No ticket 7c1e… for this app", type: "NotFound" }
    }
  }
})

const notAuthorizedResponse = (previous: Json): Json => {
  const content = objectAt(previous, "content")
  const media = objectAt(content, "application/json")
  media.example = { ...NOT_AUTHORIZED_BODY }
  return {
    ...previous,
    description: `${String(previous.description ?? "Not authorized")} The body is always exactly ` +
      `\`${JSON.stringify(NOT_AUTHORIZED_BODY)}\`.`,
    headers: {
      "www-authenticate": {
        description: "Always the same challenge",
        schema: { type: "string", const: NOT_AUTHORIZED_HEADERS["www-authenticate"] },
        required: true
      }
    },
    content
  }
}

// ---------------------------------------------------------------------------
// Examples built from schemas

const SAMPLE_ID = "3f2b8c1e-6d4a-4f7e-9b1c-2a5d8e7f9c01"
const SAMPLE_DATE_TIME = "2026-11-22T10:00:00.000Z"

const resolve = (schema: Json, components: Json): Json => {
  const ref = schema.$ref
  if (typeof ref === "string" && ref.startsWith("#/components/schemas/")) {
    const target = components[ref.slice("#/components/schemas/".length)]
    return isObject(target) ? target : {}
  }
  return schema
}

const stringExample = (schema: Json, name: string): string => {
  const min = typeof schema.minLength === "number" ? schema.minLength : 0
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Infinity
  const description = typeof schema.description === "string" ? schema.description : ""
  let text: string
  if (name === "id" || name === "ids" || name.endsWith("Id") || name.endsWith("Ids") || /^The id of/.test(description)) text = SAMPLE_ID
  else if (name.endsWith("At") || name === "dueDate" || name === "validUntil" || /ISO 8601/.test(description)) {
    text = SAMPLE_DATE_TIME
  } else if (name === "number") text = "P-000042"
  else text = name === "" ? "text" : name
  if (text.length > max) text = text.slice(0, max)
  while (text.length < min) text += "x"
  return text
}

const numberExample = (schema: Json, integer: boolean): number => {
  const minimum = typeof schema.minimum === "number"
    ? schema.minimum
    : typeof schema.exclusiveMinimum === "number"
    ? schema.exclusiveMinimum + (integer ? 1 : 0.5)
    : 1
  const maximum = typeof schema.maximum === "number" ? schema.maximum : Infinity
  const value = Math.min(Math.max(minimum, 1), maximum)
  return integer ? Math.ceil(value) : value
}

/** An example of a JSON Schema: its own examples first, else one built from its type and constraints. */
export const exampleOf = (schema: unknown, components: Json, name = "", depth = 0): unknown => {
  if (!isObject(schema) || depth > 12) return null
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if ("const" in schema) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (typeof schema.$ref === "string") return exampleOf(resolve(schema, components), components, name, depth + 1)
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key]
    if (Array.isArray(branches)) {
      const branch = branches.find((b) => !(isObject(b) && b.type === "null")) ?? branches[0]
      return exampleOf(branch, components, name, depth + 1)
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return exampleOf(schema.allOf[0], components, name, depth + 1)
  switch (schema.type) {
    case "string":
      return stringExample(schema, name)
    case "integer":
      return numberExample(schema, true)
    case "number":
      return numberExample(schema, false)
    case "boolean":
      return true
    case "null":
      return null
    case "array": {
      const count = typeof schema.minItems === "number" ? Math.max(1, schema.minItems) : 1
      const item = exampleOf(schema.items, components, name.endsWith("s") ? name.slice(0, -1) : name, depth + 1)
      return Array.from({ length: count }, () => item)
    }
    default: {
      const properties = schema.properties
      if (isObject(properties)) {
        return Object.fromEntries(
          Object.entries(properties).map(([key, value]) => [key, exampleOf(value, components, key, depth + 1)])
        )
      }
      if (isObject(schema.additionalProperties)) {
        return { key: exampleOf(schema.additionalProperties, components, "value", depth + 1) }
      }
      return {}
    }
  }
}

// ---------------------------------------------------------------------------
// Clean-ups

/** `anyOf` branches that are the same schema (an optional nullable field gives two `{type: "null"}`): once. */
const dedupeAnyOf = (node: unknown): void => {
  if (Array.isArray(node)) {
    node.forEach(dedupeAnyOf)
    return
  }
  if (!isObject(node)) return
  for (const value of Object.values(node)) dedupeAnyOf(value)
  const branches = node.anyOf
  if (Array.isArray(branches)) {
    const seen = new Set<string>()
    node.anyOf = branches.filter((branch) => {
      const key = JSON.stringify(branch)
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
  }
}

const shape = (path: string) => path.replace(/\{[^}]+\}/g, "{}")
const paramNames = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? "")

/** Paths equal but for parameter names (`/item/{id}`, `/item/{partItemId}`): one path, the first one's names. */
const mergeIdenticalPaths = (paths: Json): void => {
  const byShape = new Map<string, string>()
  for (const path of Object.keys(paths)) {
    const kept = byShape.get(shape(path))
    if (kept === undefined) {
      byShape.set(shape(path), path)
      continue
    }
    const from = paramNames(path)
    const to = paramNames(kept)
    const rename = new Map(from.map((name, index) => [name, to[index] ?? name]))
    const target = objectAt(paths, kept)
    const item = objectAt(paths, path)
    for (const [method, operation] of Object.entries(item)) {
      if (!isObject(operation) || method in target) continue
      const parameters = operation.parameters
      if (Array.isArray(parameters)) {
        for (const parameter of parameters) {
          if (isObject(parameter) && parameter.in === "path" && typeof parameter.name === "string") {
            parameter.name = rename.get(parameter.name) ?? parameter.name
          }
        }
      }
      target[method] = operation
    }
    delete paths[path]
  }
}

// ---------------------------------------------------------------------------

/** The API transform: security, the 401, passthrough errors, examples, merged paths, the conventions. */
export const documentTransform = (spec: Record<string, unknown>): Record<string, unknown> => {
  const info = objectAt(spec, "info")
  info.description = `${String(info.description ?? "")}\n\n${CONVENTIONS}`.trim()

  const components = objectAt(spec, "components")
  const schemas = objectAt(components, "schemas")
  objectAt(components, "securitySchemes")[SECURITY_SCHEME] = {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: AUTHENTICATION
  }
  spec.security = [{ [SECURITY_SCHEME]: [] }]

  const paths = objectAt(spec, "paths")
  mergeIdenticalPaths(paths)
  dedupeAnyOf(paths)
  dedupeAnyOf(schemas)

  for (const [name, schema] of Object.entries(schemas)) {
    if (isObject(schema) && !Array.isArray(schema.examples)) schema.examples = [exampleOf(schema, schemas, name)]
  }

  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue
    for (const method of METHODS) {
      const operation = item[method]
      if (!isObject(operation)) continue
      operation.security = [{ [SECURITY_SCHEME]: [] }]
      const responses = objectAt(operation, "responses")
      const unauthorized = responses["401"]
      if (isObject(unauthorized)) responses["401"] = notAuthorizedResponse(unauthorized)
      responses.default = engineErrorResponse()
      const requestBody = operation.requestBody
      if (isObject(requestBody)) {
        requestBody.description ??= "The request body, as JSON. Unknown fields are a 400."
        addMediaExamples(requestBody, schemas)
      }
      for (const response of Object.values(responses)) {
        if (isObject(response)) addMediaExamples(response, schemas)
      }
      const parameters = operation.parameters
      if (Array.isArray(parameters)) {
        for (const parameter of parameters) {
          if (isObject(parameter) && parameter.example === undefined && parameter.examples === undefined) {
            const name = typeof parameter.name === "string" ? parameter.name : ""
            parameter.example = exampleOf(parameter.schema, schemas, name.replace(/\[.*$/, ""))
            if (typeof parameter.description !== "string") parameter.description = describeParameter(parameter, name)
          }
        }
      }
    }
  }
  return spec
}

/** A parameter's description: its schema's, else one from the conventions (repeatable filters, ids). */
const describeParameter = (parameter: Json, name: string): string => {
  const schema = isObject(parameter.schema) ? parameter.schema : {}
  if (typeof schema.description === "string") return schema.description
  const repeatable = Array.isArray(schema.anyOf) && schema.anyOf.some((branch) => isObject(branch) && branch.type === "array")
  if (parameter.in === "query" && repeatable) {
    return name === "ids"
      ? "Only the records with these ids; repeatable (`?ids=a&ids=b`)"
      : `Only the records whose \`${name}\` is one of these values; repeatable (\`?${name}=a&${name}=b\`)`
  }
  if (parameter.in === "path") return name === "id" ? "The id of the record" : `The ${name.replace(/Id$/, "")} id`
  return `The ${name}`
}

const addMediaExamples = (holder: Json, schemas: Json): void => {
  const content = holder.content
  if (!isObject(content)) return
  for (const media of Object.values(content)) {
    if (isObject(media) && media.example === undefined && media.examples === undefined) {
      media.example = exampleOf(media.schema, schemas)
    }
  }
}
