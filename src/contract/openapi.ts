/**
 * What the OpenAPI document says that the HttpApi cannot: applied by
 * `OpenApi.Transform` annotations to the document `OpenApi.fromApi` derives
 * (served at /openapi.json and rendered at /docs), never written by hand.
 *
 * - the empty 200 of the reads of a missing id (`emptyOk`, per operation);
 * - the one-model-source rule as a `oneOf` of the request bodies that carry
 *   both model sources (`POST /ticket-model`, `PUT /ticket-model/{id}`);
 * - an example for every request and response body, built from the schema
 *   and the examples its fields carry (one per model source where there is
 *   a choice), each one the service accepts (test/http/openapi-examples.test.ts);
 * - descriptions and examples of the date and paging query parameters;
 * - paths that differ only by a parameter's name merged, under the names of
 *   the read (`/item/{partItemId}`, as the spec writes GET).
 */
import { Predicate } from "effect"
import { DEFAULT_PAGE_SIZE } from "../domain/Resource.ts"
import { MODEL_SOURCE_REQUIRES, MODEL_SOURCES } from "../domain/resources/modelFiles.ts"
import { AUTHENTICATION } from "./IncomingSecretDocument.ts"
import { withWebhooks } from "./webhooksDocument.ts"

type Json = Record<string, unknown>

const isObject = Predicate.isObject
const objectAt = (value: Json, key: string): Json => {
  const found = value[key]
  if (isObject(found)) return found
  const created: Json = {}
  value[key] = created
  return created
}

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

/** The conventions every operation follows: the end of the API's description (PublicApi). */
export const CONVENTIONS = [
  "## Conventions",
  "",
  "- **Authentication**: " + AUTHENTICATION,
  "- **Scopes**: each operation needs one scope of the secret (`read`, `write`, `quote`, `order`, `webhooks`), named by its " +
  "`x-required-scope` (accepting a quote also needs `order`: `x-required-scope-to-accept`). Outside them the answer is 403 " +
  "`{code: 403, message, type: \"InsufficientScope\"}` naming the operation and the scope; nothing ran, the call is metered. " +
  "A secret with `maxAcceptTotal` accepts no quote above it (EUR at the quote's rate): 403 `SpendLimitExceeded`.",
  "- **Test mode**: a test-mode secret works on its app's test data, a data space of its own; every answer carries `X-Mode: test`.",
  "- **Empty 200**: a read of a missing id (`GET /v1/<resource>/{id}`, `GET /v1/<resource>/lookup`) answers " +
  "200 with an empty body, not 404. Such operations carry `x-empty-200: true`.",
  "- **Lists** filter by repeatable parameters (`?ids=a&ids=b`, `?name=x&name=y`), by one date " +
  "(`?createdAt=2026-11-22`, a whole UTC day) or a range (`?createdAt[from]=…&createdAt[to]=…`, inclusive), " +
  "and page with `limit` (1–1000, default 100) and `offset`.",
  "- **PUT replaces the whole record**: every required field must be present; omitted optional fields are cleared.",
  "- **One representation per field**: a field whose value may be null (a reel's `machineId`) is in every record as read, " +
  "null when it has no value, whichever write left it out; other optional fields are left out when they have none. " +
  "Durations in seconds are to the millisecond.",
  "- **400** names the field or parameter at fault; an unknown field or parameter is a 400, never ignored.",
  "- **Engine errors pass through**: any other status (404, 409, 422, 501, 502, 504, …) has the body " +
  "`{code, message, type}` and the headers `x-error-source` and `x-error-source-request-id`. " +
  "502 means the engine answered something unusable, 504 that it did not answer in time.",
  "- **413**: the body is larger than the service accepts (1 MiB unless the operator set `MAX_BODY_BYTES`); " +
  "it is refused before it is read whole, and the connection is closed.",
  "- **503**: `StorageUnavailable`: storage is unreachable; nothing was changed, retry later. `StorageOutcomeUnknown` " +
  "(from the engine): the connection to storage was lost while a change was being made or committed, which may or may not " +
  "have been kept: retry with the same `Idempotency-Key` to get its answer.",
  "- **Methods**: a known path with a method it does not take answers **405** with `Allow` and " +
  "`{code: 405, message, type: \"MethodNotAllowed\"}` (before authentication, not metered); a path no operation has is a 404. " +
  "**HEAD** answers wherever GET does: the GET's status and headers, no body, authenticated and metered as the GET. " +
  "A plain **OPTIONS** answers 204 with `Allow`.",
  "- **Browsers (CORS)**: pages of the origins the operator lists in `CORS_ORIGINS` may call: a preflight answers 204 before " +
  "authentication, and every answer (errors included) carries `Access-Control-Allow-Origin` and exposes `x-request-id`, " +
  "`x-error-source`, `x-error-source-request-id`, `ETag`, `Link`, `X-Total-Count`, `RateLimit`, `RateLimit-Policy`, " +
  "`Retry-After`, `Idempotent-Replayed`, `Location` and `X-Mode`. Other origins get no CORS header."
].join("\n")

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

/**
 * The choices of an object schema whose `oneOf` branches each require some
 * of its properties (the one-model-source rule): each branch's required
 * fields; undefined for any other schema.
 */
const requiredChoices = (schema: Json): ReadonlyArray<ReadonlyArray<string>> | undefined => {
  if (!isObject(schema.properties) || !Array.isArray(schema.oneOf) || schema.oneOf.length === 0) return undefined
  const choices = schema.oneOf.map((branch) =>
    isObject(branch) && Array.isArray(branch.required) ? branch.required.filter((field) => typeof field === "string") : undefined
  )
  return choices.every((choice) => choice !== undefined) ? choices : undefined
}

/** An object's example: every property but `leftOut`. */
const propertiesExample = (properties: Json, components: Json, depth: number, leftOut: ReadonlySet<string> = new Set()) =>
  Object.fromEntries(
    Object.entries(properties).filter(([key]) => !leftOut.has(key)).map(([key, value]) => [key, exampleOf(value, components, key, depth + 1)])
  )

/** The example of choice `index` of a schema with required choices: the fields only other choices require are left out. */
const choiceExample = (schema: Json, components: Json, choices: ReadonlyArray<ReadonlyArray<string>>, index: number, depth: number) => {
  const chosen = new Set(choices[index])
  const leftOut = new Set(choices.flat().filter((field) => !chosen.has(field)))
  return propertiesExample(isObject(schema.properties) ? schema.properties : {}, components, depth, leftOut)
}

/** An example of a JSON Schema: its own examples first, else one built from its type and constraints. */
export const exampleOf = (schema: unknown, components: Json, name = "", depth = 0): unknown => {
  if (!isObject(schema) || depth > 12) return null
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if ("const" in schema) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (typeof schema.$ref === "string") return exampleOf(resolve(schema, components), components, name, depth + 1)
  const choices = requiredChoices(schema)
  if (choices !== undefined) return choiceExample(schema, components, choices, 0, depth)
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
      if (isObject(properties)) return propertiesExample(properties, components, depth)
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

/**
 * Paths equal but for parameter names (`/item/{id}` of PUT and DELETE,
 * `/item/{partItemId}` of GET in the spec): OpenAPI allows only one, so they
 * are merged under the names of the path that has the read (the GET), and
 * each renamed parameter says so.
 */
const mergeIdenticalPaths = (paths: Json): void => {
  const byShape = new Map<string, string>()
  for (const path of Object.keys(paths)) {
    const found = byShape.get(shape(path))
    if (found === undefined) {
      byShape.set(shape(path), path)
      continue
    }
    const [kept, merged] = isObject(objectAt(paths, path).get) ? [path, found] : [found, path]
    byShape.set(shape(path), kept)
    const rename = new Map(paramNames(merged).map((name, index) => [name, paramNames(kept)[index] ?? name]))
    const target = objectAt(paths, kept)
    for (const [method, operation] of Object.entries(objectAt(paths, merged))) {
      if (!isObject(operation) || method in target) continue
      const parameters = operation.parameters
      if (Array.isArray(parameters)) {
        for (const parameter of parameters) {
          if (!isObject(parameter) || parameter.in !== "path" || typeof parameter.name !== "string") continue
          const name = rename.get(parameter.name) ?? parameter.name
          if (name === parameter.name) continue
          parameter.description = `${describeParameter(parameter, name)}. The spec writes this path \`${merged}\`; ` +
            `OpenAPI allows one name per path, the read's (\`GET ${kept}\`).`
          parameter.name = name
        }
      }
      target[method] = operation
    }
    delete paths[merged]
  }
}

/** A schema without its `null` branch (an optional field may be sent as null: left out). */
const nonNull = (schema: unknown): unknown => {
  if (!isObject(schema) || !Array.isArray(schema.anyOf)) return schema
  const branches = schema.anyOf.filter((branch) => !(isObject(branch) && branch.type === "null"))
  return branches.length === 1 ? branches[0] : { ...schema, anyOf: branches }
}

const MODEL_SOURCE_FIELDS = Object.keys(MODEL_SOURCES) as ReadonlyArray<keyof typeof MODEL_SOURCES>

/**
 * The one-model-source rule on a request body that carries both model
 * sources: `oneOf` two branches, each requiring its field (not null). A
 * body with both, or with neither, matches no single branch, as the service
 * refuses it (400 naming the field).
 */
/** Whether `member` is the Schema's own statement of the rule (MODEL_SOURCE_ONE_OF, carried by the create body's check). */
const isModelSourceRule = (member: unknown): boolean =>
  isObject(member) && Array.isArray(member.oneOf) && member.oneOf.length === MODEL_SOURCE_FIELDS.length &&
  member.oneOf.every((branch, index) => isObject(branch) && Array.isArray(branch.required) && branch.required[0] === MODEL_SOURCE_FIELDS[index])

const withModelSourceChoice = (schema: Json): void => {
  const properties = schema.properties
  if (!isObject(properties) || schema.oneOf !== undefined || !MODEL_SOURCE_FIELDS.every((field) => field in properties)) return
  // The Schema states the rule itself (under `allOf`): stated once, at the top, with the branches' property schemas.
  if (Array.isArray(schema.allOf) && schema.allOf.some(isModelSourceRule)) {
    const rest = schema.allOf.filter((member) => !isModelSourceRule(member))
    if (rest.length === 0) delete schema.allOf
    else schema.allOf = rest
  }
  schema.oneOf = MODEL_SOURCE_FIELDS.map((field) => ({
    title: MODEL_SOURCES[field],
    required: [field, ...MODEL_SOURCE_REQUIRES[field].filter((other) => other in properties)],
    properties: { [field]: nonNull(properties[field]) }
  }))
  const rule = "The model source: exactly one of `modelEndpoint` and `catalogueModelConfigurationId` " +
    "(a body with both, or neither, is a 400; a part as read has exactly one). With `modelEndpoint`, `technologyId` and `materialId` " +
    "are required; a catalogue configuration supplies them, with the colour, production parameters and services."
  schema.description = typeof schema.description === "string" ? `${schema.description} ${rule}` : rule
}

// ---------------------------------------------------------------------------

/** The API transform: examples, merged paths. */
export const documentTransform = (spec: Record<string, unknown>): Record<string, unknown> => {
  const components = objectAt(spec, "components")
  const schemas = objectAt(components, "schemas")

  const paths = objectAt(spec, "paths")
  mergeIdenticalPaths(paths)
  dedupeAnyOf(paths)
  dedupeAnyOf(schemas)
  // The model source, wherever a body or a record has both (a part as read has exactly one, as it was written).
  for (const schema of Object.values(schemas)) if (isObject(schema)) withModelSourceChoice(schema)
  for (const body of requestBodies(paths)) {
    const content = body.content
    if (!isObject(content)) continue
    for (const media of Object.values(content)) {
      if (isObject(media) && isObject(media.schema)) withModelSourceChoice(resolve(media.schema, schemas))
    }
  }

  for (const [name, schema] of Object.entries(schemas)) {
    if (isObject(schema) && !Array.isArray(schema.examples)) schema.examples = [exampleOf(schema, schemas, name)]
  }

  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue
    for (const method of METHODS) {
      const operation = item[method]
      if (!isObject(operation)) continue
      const responses = objectAt(operation, "responses")
      const requestBody = operation.requestBody
      if (isObject(requestBody)) {
        const media = isObject(requestBody.content) ? Object.keys(requestBody.content) : []
        if (media.includes("application/json")) requestBody.description ??= "The request body, as JSON. Unknown fields are a 400."
        if (method === "put") recordAsRead(requestBody, responses["200"], schemas)
        addMediaExamples(requestBody, schemas, true)
      }
      for (const response of Object.values(responses)) {
        if (isObject(response)) addMediaExamples(response, schemas, false)
      }
      const parameters = operation.parameters
      if (Array.isArray(parameters)) {
        for (const parameter of parameters) {
          if (!isObject(parameter)) continue
          const name = typeof parameter.name === "string" ? parameter.name : ""
          const convention = parameter.in === "query" ? queryConvention(name, isObject(parameter.schema) ? parameter.schema : {}) : undefined
          if (convention !== undefined) {
            parameter.description ??= convention.description
            if (parameter.examples === undefined) parameter.example ??= convention.example
            continue
          }
          if (parameter.example === undefined && parameter.examples === undefined) {
            parameter.example = exampleOf(parameter.schema, schemas, name.replace(/\[.*$/, ""))
          }
          if (typeof parameter.description !== "string") parameter.description = describeParameter(parameter, name)
        }
      }
    }
  }
  withWebhooks(spec)
  return spec
}

/** The property names of a JSON schema (resolved), if it is an object schema. */
const propertyNames = (schema: unknown, schemas: Json): ReadonlyArray<string> | undefined => {
  const resolved = isObject(schema) ? resolve(schema, schemas) : {}
  return isObject(resolved.properties) ? Object.keys(resolved.properties) : undefined
}

/**
 * The example of a whole-record PUT whose body takes the record as read
 * (every field of its answer is a field of its body): the record's example,
 * as a client reads it, changes it and sends it back. A body with a choice
 * (the model source) keeps one example per choice.
 */
const recordAsRead = (requestBody: Json, ok: unknown, schemas: Json): void => {
  const media = isObject(requestBody.content) ? requestBody.content["application/json"] : undefined
  const answer = isObject(ok) && isObject(ok.content) ? ok.content["application/json"] : undefined
  if (!isObject(media) || !isObject(answer) || media.example !== undefined || media.examples !== undefined) return
  if (isObject(media.schema) && requiredChoices(resolve(media.schema, schemas)) !== undefined) return
  const accepted = new Set(propertyNames(media.schema, schemas) ?? [])
  const read = propertyNames(answer.schema, schemas)
  if (read === undefined || read.length === 0 || !read.every((name) => accepted.has(name))) return
  media.example = exampleOf(answer.schema, schemas)
}

/** Every request body of the document's operations. */
const requestBodies = (paths: Json): ReadonlyArray<Json> =>
  Object.values(paths).flatMap((item) =>
    isObject(item) ? METHODS.map((method) => item[method]).filter(isObject).map((operation) => operation.requestBody).filter(isObject) : []
  )

/** `partItemId` → `part item`. */
const words = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase()

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
  if (parameter.in === "path") return name === "id" ? "The id of the record" : `The id of the ${words(name.replace(/Id$/, ""))}`
  return `The ${words(name)}`
}

const DATE_PARAMETER = /^(\w+At)(?:\[(from|to)\])?$/

/** An example of the type the schema says (a paging parameter may be documented as a string of digits). */
const numberIn = (schema: Json, value: number): number | string => schema.type === "integer" || schema.type === "number" ? value : String(value)

/**
 * The date and paging query parameters of the lists, described and
 * exemplified as the conventions say; undefined for any other parameter.
 */
const queryConvention = (name: string, schema: Json): { readonly description: string; readonly example: unknown } | undefined => {
  const date = DATE_PARAMETER.exec(name)
  if (date !== null) {
    const [, field, bound] = date
    const format = "an ISO 8601 date (`2026-11-22`) or date-time (`2026-11-22T10:00:00Z`, an offset or `Z`)"
    switch (bound) {
      case "from":
        return {
          description: `Only the records whose \`${field}\` is at or after this instant: ${format}; a date starts at 00:00 UTC. ` +
            `Inclusive; combine with \`${field}[to]\` for a range.`,
          example: "2026-11-01"
        }
      case "to":
        return {
          description: `Only the records whose \`${field}\` is at or before this instant: ${format}; a date ends at 24:00 UTC. ` +
            `Inclusive; combine with \`${field}[from]\` for a range.`,
          example: "2026-11-30"
        }
      default:
        return {
          description: `Only the records whose \`${field}\` is on this date (the whole UTC day) or at this date-time: ${format}.`,
          example: "2026-11-22"
        }
    }
  }
  if (name === "limit") {
    const minimum = typeof schema.minimum === "number" ? schema.minimum : 1
    const bounds = typeof schema.maximum === "number" ? `${minimum} to ${schema.maximum}` : `at least ${minimum}`
    const fallback = typeof schema.default === "number" ? schema.default : DEFAULT_PAGE_SIZE
    return {
      description: `The page size: at most this many records, ${bounds} (default ${fallback}). ` +
        "With `offset`, pages through the list.",
      example: numberIn(schema, 10)
    }
  }
  if (name === "offset") {
    return {
      description: "How many records to skip before the page starts (default 0): the next page's offset is this one plus `limit`.",
      example: numberIn(schema, 0)
    }
  }
  return undefined
}

/**
 * The example of each media type; a request body with a choice (the model
 * source) has one named example per choice, each with only that choice's
 * field (an answer has the first choice's).
 */
const addMediaExamples = (holder: Json, schemas: Json, request: boolean): void => {
  const content = holder.content
  if (!isObject(content)) return
  for (const media of Object.values(content)) {
    if (!isObject(media) || media.example !== undefined || media.examples !== undefined) continue
    const schema = isObject(media.schema) ? resolve(media.schema, schemas) : {}
    const choices = request ? requiredChoices(schema) : undefined
    if (choices === undefined) {
      media.example = exampleOf(media.schema, schemas)
      continue
    }
    const branches = Array.isArray(schema.oneOf) ? schema.oneOf : []
    media.examples = Object.fromEntries(choices.map((choice, index) => {
      const branch = branches[index]
      return [choice.join("-"), {
        summary: isObject(branch) && typeof branch.title === "string" ? branch.title : choice.join(", "),
        value: choiceExample(schema, schemas, choices, index, 0)
      }]
    }))
  }
}
