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
import { BadRequest, NotFound, ServiceUnavailable } from "../domain/Errors.ts"
import type { Resource } from "../domain/Resource.ts"

export const IdParam = { id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)) }

const EMPTY_200 = "A missing id (or another app's) reads as 200 with an empty body: check the response for an `id`."

/** The errors every forwarded endpoint may answer besides its own: invalid input, storage down. */
export const COMMON_ERRORS = [BadRequest, ServiceUnavailable] as const

interface Described<Path extends `/${string}`> {
  readonly path: Path
  readonly title: string
}

export const list = <const Path extends `/${string}`, Record extends Schema.Top, Query extends Resource["listQuery"]>(
  resource: Described<Path> & { readonly record: Record; readonly listQuery: Query }
) =>
  HttpApiEndpoint.get("list", resource.path, {
    query: resource.listQuery,
    success: Schema.Array(resource.record),
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `List ${resource.title} records`)

export const create = <const Path extends `/${string}`, Record extends Schema.Top, Input extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record; readonly input: Input }
) =>
  HttpApiEndpoint.post("create", resource.path, {
    payload: resource.input,
    success: resource.record,
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `Create a ${resource.title}`)

export const get = <const Path extends `/${string}`, Record extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record }
) =>
  HttpApiEndpoint.get("get", `${resource.path}/:id` as `${Path}/:id`, {
    params: IdParam,
    success: resource.record,
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `Get a ${resource.title}`).annotate(OpenApi.Description, EMPTY_200)

export const replace = <const Path extends `/${string}`, Record extends Schema.Top, Input extends Schema.Top>(
  resource: Described<Path> & { readonly record: Record; readonly input: Input }
) =>
  HttpApiEndpoint.put("replace", `${resource.path}/:id` as `${Path}/:id`, {
    params: IdParam,
    payload: resource.input,
    success: resource.record,
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
    success: resource.record,
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
    success: resource.record,
    error: COMMON_ERRORS
  }).annotate(OpenApi.Summary, `Look up a ${resource.title} by any of its identifiers`).annotate(
    OpenApi.Description,
    `Finds the ${resource.title} whose id, number or external reference is \`identifier\`. ${EMPTY_200}`
  )
