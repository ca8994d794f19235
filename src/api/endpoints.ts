/**
 * Endpoint builders: the record endpoints of a resource, derived from its
 * definition with the spec's conventions. A group lists the ones the spec
 * gives the resource, e.g.
 *
 *   HttpApiGroup.make("customer").add(list(Customer), create(Customer), get(Customer), replace(Customer))
 *
 * Workflow endpoints are plain `HttpApiEndpoint`s beside them.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, OpenApi } from "effect/http-api"
import { BadRequest, NotFound, PayloadTooLarge, ServiceUnavailable } from "../domain/Errors.ts"
import type { Resource } from "../domain/Resource.ts"
import { emptyOk } from "./openapi.ts"

export const IdParam = { id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)) }

const EMPTY_200 = "A missing id (or another app's) reads as 200 with an empty body: check the response for an `id`."

/** The tag of a group in the OpenAPI document: its title and what the resource is. */
export const tag = (title: string, description: string) => OpenApi.annotations({ title, description })

/** The errors every forwarded endpoint may answer besides its own: invalid input, a body too large, storage down. */
export const COMMON_ERRORS = [BadRequest, PayloadTooLarge, ServiceUnavailable] as const

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
      "`[from]`/`[to]` range; `limit` and `offset` page the result."
  )

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
    success: recordOf(resource),
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `Get a ${resource.title}`).annotate(OpenApi.Description, EMPTY_200)
    .annotate(OpenApi.Transform, emptyOk)

export const replace = <const Path extends `/${string}`, Record extends Schema.Top, Input extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record; readonly input: Input }
) =>
  HttpApiEndpoint.put("replace", `${resource.path}/:id` as `${Path}/:id`, {
    params: IdParam,
    payload: resource.input,
    success: recordOf(resource),
    error: [...COMMON_ERRORS, NotFound]
  }).annotate(OpenApi.Summary, `Replace a ${resource.title}`).annotate(
    OpenApi.Description,
    "Whole-record replacement: every required field must be present, omitted optional fields are cleared."
  )

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
    success: recordOf(resource),
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `Look up a ${resource.title} by any of its identifiers`).annotate(
    OpenApi.Description,
    `Finds the ${resource.title} whose id, number or external reference is \`identifier\`. ${EMPTY_200}`
  ).annotate(OpenApi.Transform, emptyOk)
