/**
 * The endpoints of a resource, derived from its definition: list, create,
 * get by id and whole-record replace, with the spec's conventions.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, NotFound, ServiceUnavailable } from "../domain/Errors.ts"
import type { Resource } from "../domain/Resource.ts"
import { IncomingSecretAuth } from "./Authorization.ts"

const IdParam = { id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)) }

const EMPTY_200 = "A missing id (or another app's) reads as 200 with an empty body: check the response for an `id`."

export const crudGroup = <
  const Name extends string,
  const Path extends `/${string}`,
  Input extends Resource["input"],
  Record extends Resource["record"],
  Query extends Resource["listQuery"]
>(resource: {
  readonly name: Name
  readonly path: Path
  readonly title: string
  readonly input: Input
  readonly record: Record
  readonly listQuery: Query
}) =>
  HttpApiGroup.make(resource.name)
    .add(
      HttpApiEndpoint.get("list", resource.path, {
        query: resource.listQuery,
        success: Schema.Array(resource.record),
        error: [BadRequest, ServiceUnavailable]
      }).annotate(OpenApi.Summary, `List ${resource.title} records`),
      HttpApiEndpoint.post("create", resource.path, {
        payload: resource.input,
        success: resource.record,
        error: [BadRequest, ServiceUnavailable]
      }).annotate(OpenApi.Summary, `Create a ${resource.title}`),
      HttpApiEndpoint.get("get", `${resource.path}/:id` as `${Path}/:id`, {
        params: IdParam,
        success: resource.record,
        error: [BadRequest, ServiceUnavailable]
      }).annotate(OpenApi.Summary, `Get a ${resource.title}`).annotate(OpenApi.Description, EMPTY_200),
      HttpApiEndpoint.put("replace", `${resource.path}/:id` as `${Path}/:id`, {
        params: IdParam,
        payload: resource.input,
        success: resource.record,
        error: [BadRequest, NotFound, ServiceUnavailable]
      }).annotate(OpenApi.Summary, `Replace a ${resource.title}`).annotate(
        OpenApi.Description,
        "Whole-record replacement: every required field must be present, omitted optional fields are cleared."
      )
    )
    .middleware(IncomingSecretAuth)
    .annotate(OpenApi.Title, resource.title)
