/**
 * Endpoint builders: the record endpoints of a resource, derived from its
 * definition with the spec's conventions. A group lists the ones the spec
 * gives the resource, e.g.
 *
 *   HttpApiGroup.make("customer").add(list(Customer), create(Customer), get(Customer), replace(Customer))
 *
 * Workflow endpoints are plain `HttpApiEndpoint`s beside them.
 */
import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, InsufficientScope, NotFound, PayloadTooLarge, ServiceUnavailable, TooManyRequests } from "../domain/Errors.ts"
import { INT32_MAX } from "../domain/Integers.ts"
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Resource } from "../domain/Resource.ts"
import { emptyOk } from "./openapi.ts"

export const IdParam = { id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)) }

const EMPTY_200 = "A missing id (or another app's) reads as 200 with an empty body: check the response for an `id`."

/** The media type of the spec's empty 200: an empty text, which no client takes for the record's JSON. */
export const MISSING_RECORD_MEDIA_TYPE = "text/plain"

/**
 * The spec's answer to a read of a record the app does not have: 200 with an
 * empty body, sent as an empty `text/plain` so that a validator and a client
 * tell it from the record's JSON. A read's success is the record or this; the
 * typed client reads it as `null`.
 */
export const MissingRecord = Schema.Literal("").pipe(
  Schema.decodeTo(Schema.Null, SchemaTransformation.transform({ decode: () => null, encode: () => "" as const })),
  HttpApiSchema.asText({ contentType: MISSING_RECORD_MEDIA_TYPE }),
  HttpApiSchema.status(200)
).annotate({ description: "No such record for this app: an empty body (`Content-Length: 0`); the spec's empty 200" })

/** The tag of a group in the OpenAPI document: its title and what the resource is. */
export const tag = (title: string, description: string) => OpenApi.annotations({ title, description })

/**
 * The errors every forwarded endpoint may answer besides its own: invalid input, a body too large, a scope the
 * secret lacks (src/contract/Scopes.ts), the rate limit, storage down.
 */
export const COMMON_ERRORS = [BadRequest, PayloadTooLarge, InsufficientScope, TooManyRequests, ServiceUnavailable] as const

interface Described<Path extends `/${string}`> {
  readonly name: string
  readonly path: Path
  readonly title: string
}

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1)
const named = new WeakMap<Schema.Top, Schema.Top>()
const withIdentifier = <S extends Schema.Top>(schema: S, identifier: string, description: string): S => {
  let annotated = named.get(schema)
  if (annotated === undefined) {
    annotated = schema.annotate({ identifier, description }) as Schema.Top
    named.set(schema, annotated)
  }
  return annotated as S
}

/**
 * A resource's record as read, named in the OpenAPI components (`Customer`):
 * the same schema, annotated once so that every endpoint shares the component.
 */
export const recordOf = <Record extends Schema.Top>(
  resource: { readonly name: string; readonly title: string; readonly record: Record }
): Record =>
  withIdentifier(
    resource.record,
    pascal(resource.name),
    `A ${resource.title} as read: its fields, the \`id\` and the \`createdAt\`/\`updatedAt\` timestamps the engine sets.`
  )

type Json = Record<string, unknown>

const PAGING_PARAMETERS: Readonly<Record<string, Json>> = {
  limit: { type: "integer", format: "int32", minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  offset: { type: "integer", format: "int32", minimum: 0, maximum: INT32_MAX, default: 0 }
}

const PAGE_HEADERS = {
  "X-Total-Count": {
    description: "How many records match the filters in all, whatever the page",
    schema: { type: "integer", format: "int32", minimum: 0, maximum: INT32_MAX }
  },
  Link: {
    description: "RFC 8288 links to the neighbouring pages: `rel=\"next\"` (absent on the last page) and `rel=\"prev\"` " +
      "(absent on the first), each this request with `offset` moved by `limit`",
    schema: { type: "string", maxLength: 2000 },
    example: "</v1/customer?limit=100&offset=100>; rel=\"next\""
  }
}

/**
 * Endpoint transform of a paged list: `limit` and `offset` are the integers
 * clients send (the query string's text decodes to them), with their bounds
 * and defaults; the 200 carries `X-Total-Count` and `Link`.
 */
export const pagedList = (operation: Json): Json => {
  const parameters = Array.isArray(operation.parameters) ? (operation.parameters as Array<Json>) : []
  for (const parameter of parameters) {
    const schema = typeof parameter.name === "string" ? PAGING_PARAMETERS[parameter.name] : undefined
    if (schema === undefined || parameter.in !== "query") continue
    parameter.schema = { ...schema }
  }
  const responses = operation.responses as Record<string, Json> | undefined
  const ok = responses?.["200"]
  if (ok !== undefined) ok.headers = { ...(ok.headers as Json | undefined), ...PAGE_HEADERS }
  return operation
}

/** What every list says of its order and paging. */
export const PAGING = "Records come in creation order, then id (stable across pages); `limit` (default " +
  `${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE}) and \`offset\` page them. The answer's \`X-Total-Count\` counts every match and its ` +
  "`Link` header names the next and previous pages."

export const list = <const Path extends `/${string}`, Record extends Schema.Top, Query extends Resource["listQuery"]>(
  resource: Described<Path> & { readonly record: Record; readonly listQuery: Query }
) =>
  HttpApiEndpoint.get("list", resource.path, {
    query: resource.listQuery,
    success: Schema.Array(recordOf(resource)),
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `List ${resource.title} records`).annotate(
    OpenApi.Description,
    "Filters are repeatable (`?ids=a&ids=b`) and combine with AND; each date field takes one date or a " +
      `\`[from]\`/\`[to]\` range. ${PAGING}`
  ).annotate(OpenApi.Transform, pagedList)

export const create = <const Path extends `/${string}`, Record extends Schema.Top, Input extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record; readonly input: Input }
) =>
  HttpApiEndpoint.post("create", resource.path, {
    payload: resource.input,
    success: recordOf(resource),
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `Create a ${resource.title}`).annotate(
    OpenApi.Description,
    "Answers the created record, with its `id`. An unknown field is a 400 naming it."
  )

export const get = <const Path extends `/${string}`, Record extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record }
) =>
  HttpApiEndpoint.get("get", `${resource.path}/:id` as `${Path}/:id`, {
    params: IdParam,
    success: [recordOf(resource), MissingRecord],
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `Get a ${resource.title}`).annotate(OpenApi.Description, EMPTY_200)
    .annotate(OpenApi.Transform, emptyOk)

export const replace = <const Path extends `/${string}`, Record extends Schema.Top, Input extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record; readonly replaceInput: Input }
) =>
  HttpApiEndpoint.put("replace", `${resource.path}/:id` as `${Path}/:id`, {
    params: IdParam,
    payload: resource.replaceInput,
    success: recordOf(resource),
    error: [...COMMON_ERRORS, NotFound]
  }).annotate(OpenApi.Summary, `Replace a ${resource.title}`).annotate(
    OpenApi.Description,
    "Whole-record replacement: every required field must be present, omitted optional fields are cleared. " +
      "The record as read is accepted (read-modify-write): its `id` must be the path's (else a 400 naming `id`), " +
      "and the timestamps and the fields the engine sets are ignored."
  )

/** The 201 of a replace that created its record says where it is: `Location`, as a create's answer does. */
const withCreatedLocation = (operation: Json): Json => {
  const created = (operation.responses as Record<string, Json> | undefined)?.["201"]
  if (created !== undefined) {
    created.description = "Created: the app had no record with this id"
    created.headers = {
      ...(created.headers as Json | undefined),
      Location: { description: "The created record's path (`/v1/<resource>/{id}`)", schema: { type: "string" } }
    }
  }
  return operation
}

/**
 * `PUT <path>/{id}` that replaces the record, or creates it when the app has
 * no record with that id (200 for a replace, 201 with `Location` for a
 * create, both declared): for resources that nothing else creates.
 */
export const replaceOrCreate = <const Path extends `/${string}`, Record extends Schema.Top, Input extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record; readonly replaceInput: Input }
) =>
  HttpApiEndpoint.put("replace", `${resource.path}/:id` as `${Path}/:id`, {
    params: IdParam,
    payload: resource.replaceInput,
    // The record as read either way: replaced (200), or created (201).
    success: [recordOf(resource), recordOf(resource).pipe(HttpApiSchema.status(201))],
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `Replace or create a ${resource.title}`).annotate(
    OpenApi.Description,
    "Whole-record replacement of the record with this id, or its creation when the app has none with it: 200 with the record " +
      "replaced, or 201 with the record created and its path in `Location`. A new id is yours to choose: 1 to 100 letters, digits, " +
      "`-`, `_`, `.` or `~`, starting with a letter or digit (else a 422 naming `id`); another app's ids are not in the way. " +
      "Every required field must be present, omitted optional fields are cleared; the record as read is accepted " +
      "(read-modify-write): its `id` must be the path's (else a 400 naming `id`), and the timestamps are ignored."
  ).annotate(OpenApi.Transform, withCreatedLocation)

export const remove = <const Path extends `/${string}`, Record extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record }
) =>
  HttpApiEndpoint.delete("remove", `${resource.path}/:id` as `${Path}/:id`, {
    params: IdParam,
    success: recordOf(resource),
    error: [...COMMON_ERRORS, NotFound]
  }).annotate(OpenApi.Summary, `Delete a ${resource.title}`).annotate(OpenApi.Description, "Answers the deleted record.")

/** `GET <path>/lookup?identifier=`: a record by its id, number or external reference. */
export const lookup = <const Path extends `/${string}`, Record extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record }
) =>
  HttpApiEndpoint.get("lookup", `${resource.path}/lookup` as `${Path}/lookup`, {
    query: {
      identifier: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)).annotate({
        description: "The record's id, number or external reference"
      })
    },
    success: [recordOf(resource), MissingRecord],
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `Look up a ${resource.title} by any of its identifiers`).annotate(
    OpenApi.Description,
    `Finds the ${resource.title} whose id, number or external reference is \`identifier\`. ${EMPTY_200}`
  ).annotate(OpenApi.Transform, emptyOk)
