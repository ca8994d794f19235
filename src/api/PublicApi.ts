/** The public REST API, v1: every operation of the spec under /v1. */
import { HttpApi, OpenApi } from "effect/http-api"
import { CustomerGroup } from "./groups/customer.ts"

export class PublicApi extends HttpApi.make("public-v1")
  .add(CustomerGroup)
  .prefix("/v1")
  // A misspelt filter or field is a 400 naming it, not silently ignored.
  .annotate(HttpApi.QueryParseOptions, { onExcessProperty: "error" })
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
  .annotateMerge(OpenApi.annotations({
    title: "Manufacturing engine public API",
    version: "1.0.0",
    description: "Customers, orders, tickets and parts of a manufacturing quoting and production engine. " +
      "Every call is authenticated with an Incoming Secret and metered."
  }))
{}
