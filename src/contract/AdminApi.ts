/**
 * The regular API's secret management, outside the public interface:
 * Incoming Secrets (with their scopes, mode and spend limit), metering
 * totals, per-app rate limits and emptying an app's test data, guarded by
 * `X-Admin-Token`.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import { BadRequest, NotAuthorized, NotFound, ServiceUnavailable } from "../domain/Errors.ts"
import { Mode, TestDataEmptied } from "../domain/Grants.ts"
import { AppRateLimit, RateLimitSetting } from "../domain/RateLimit.ts"
import { IsoDateParam } from "../domain/Resource.ts"
import { AppId, SecretCreateRequest, SecretGrantsUpdate, SecretId, SecretIssued, SecretView } from "../domain/Secret.ts"
import { UsageTotals } from "../domain/Usage.ts"

export class AdminAuth extends HttpApiMiddleware.Service<AdminAuth>()("mfg/api/AdminAuth", {
  error: [NotAuthorized, NotFound],
  security: { adminToken: HttpApiSecurity.apiKey({ in: "header", key: "X-Admin-Token" }) }
}) {}

/** Answers a request that fails its schema with the standard 400 naming the field or parameter. */
export class AdminBadRequests extends HttpApiMiddleware.Service<AdminBadRequests>()("mfg/api/AdminBadRequests", {
  error: BadRequest
}) {}

const SecretIdParam = { id: SecretId }

export class SecretsGroup extends HttpApiGroup.make("secrets")
  .add(
    HttpApiEndpoint.post("create", "/secret", {
      payload: SecretCreateRequest,
      success: SecretIssued.pipe(HttpApiSchema.status(201)),
      error: [BadRequest, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Create an Incoming Secret; its value is shown only in this response"),
    HttpApiEndpoint.get("list", "/secret", {
      query: { appId: Schema.optional(AppId) },
      success: Schema.Array(SecretView),
      error: [BadRequest, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "List Incoming Secrets (never their values)"),
    HttpApiEndpoint.post("regenerate", "/secret/:id/regenerate", {
      params: SecretIdParam,
      success: SecretIssued,
      error: [BadRequest, NotFound, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Issue a new value; the old one fails at once"),
    HttpApiEndpoint.patch("update", "/secret/:id", {
      params: SecretIdParam,
      payload: SecretGrantsUpdate,
      success: SecretView,
      error: [BadRequest, NotFound, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Change a secret's scopes, mode or spend limit (the fields given); the next call decides with them, on every instance"),
    HttpApiEndpoint.delete("remove", "/secret/:id", {
      params: SecretIdParam,
      success: HttpApiSchema.NoContent,
      error: [BadRequest, NotFound, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Delete a secret; its value fails at once"),
    HttpApiEndpoint.get("usage", "/usage", {
      query: {
        appId: Schema.optional(AppId),
        mode: Schema.optional(Mode.annotate({ description: "Only the calls of secrets of this mode; both when absent" })),
        from: Schema.optional(IsoDateParam),
        to: Schema.optional(IsoDateParam)
      },
      success: UsageTotals,
      error: [BadRequest, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Metering totals by operation")
  )
  // The first is innermost: it sees the schema failures before the token check wraps them.
  .middleware(AdminBadRequests)
  .middleware(AdminAuth)
{}

const AppIdParam = { appId: AppId }

/** An app's budget: its override of RATE_LIMIT, set, read and cleared; in force on every instance within seconds. */
export class RateLimitsGroup extends HttpApiGroup.make("rateLimits")
  .add(
    HttpApiEndpoint.get("get", "/app/:appId/rate-limit", {
      params: AppIdParam,
      success: AppRateLimit,
      error: [BadRequest, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "The app's rate limit: its override, else the default (RATE_LIMIT)"),
    HttpApiEndpoint.put("set", "/app/:appId/rate-limit", {
      params: AppIdParam,
      payload: RateLimitSetting,
      success: AppRateLimit,
      error: [BadRequest, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Set the app's own rate limit"),
    HttpApiEndpoint.delete("clear", "/app/:appId/rate-limit", {
      params: AppIdParam,
      success: HttpApiSchema.NoContent,
      error: [BadRequest, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Back to the default rate limit (RATE_LIMIT)")
  )
  .middleware(AdminBadRequests)
  .middleware(AdminAuth)
{}

/** An app's test data: emptied in one call (records, numbers, events, webhooks and their deliveries, model files). */
export class TestDataGroup extends HttpApiGroup.make("testData")
  .add(
    HttpApiEndpoint.delete("empty", "/app/:appId/test-data", {
      params: AppIdParam,
      success: TestDataEmptied,
      error: [BadRequest, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Empty the app's test data (never its live data); answers what was removed")
  )
  .middleware(AdminBadRequests)
  .middleware(AdminAuth)
{}

export class AdminApi extends HttpApi.make("admin")
  .add(SecretsGroup)
  .add(RateLimitsGroup)
  .add(TestDataGroup)
  .prefix("/api/v1")
{}
