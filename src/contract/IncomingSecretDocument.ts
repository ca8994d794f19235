/**
 * The Incoming Secret in the OpenAPI document: its security scheme, the
 * requirement on the API and on every operation, and the exact 401.
 *
 * A document transform, not a `security` declaration of the
 * IncomingSecretAuth middleware: the guard reads the raw `Authorization`
 * header itself (the raw secret or `Bearer`, exactly one header, the same 401
 * for every failure). A middleware with `security` has HttpApiBuilder decode
 * the header on every call and hand the guard the handler with its failures
 * wrapped in the builder's own error, and Effect's document would still lack
 * the API-wide requirement, the 401's exact body and its challenge header.
 */
import { NOT_AUTHORIZED_HEADERS } from "./Authorization.ts"

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

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const

/** How a call authenticates, and how every failure answers. */
export const AUTHENTICATION = "Every /v1 operation needs an Incoming Secret in the `Authorization` header: the raw secret " +
  "(`Authorization: <SECRET>`) or, equivalently, `Authorization: Bearer <SECRET>`. Exactly one `Authorization` header. " +
  "Any failure (missing, malformed, unknown, revoked or regenerated secret, or a client address outside the " +
  "secret's ranges) answers the same 401: body `{\"code\":401,\"message\":\"Not Authorized\"}` and " +
  "`WWW-Authenticate: Bearer realm=\"v1\"`."

/**
 * The 401 Effect derives from NotAuthorized (its description, which names the exact body, and the body's schema,
 * whose example is that body), with the one challenge header and what it says: the HttpApi declares a response
 * header only as a field of its schema, without a description of its own, and would encode it on the answer.
 */
const notAuthorizedResponse = (previous: Json): Json => ({
  ...previous,
  headers: {
    "www-authenticate": {
      description: "Always the same challenge",
      schema: { type: "string", const: NOT_AUTHORIZED_HEADERS["www-authenticate"] },
      required: true
    }
  }
})

/** Document transform: the scheme, the requirement on the API and on every operation, the exact 401. */
export const withIncomingSecret = (spec: Json): Json => {
  const components = objectAt(spec, "components")
  objectAt(components, "securitySchemes")[SECURITY_SCHEME] = {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: AUTHENTICATION
  }
  spec.security = [{ [SECURITY_SCHEME]: [] }]
  for (const item of Object.values(objectAt(spec, "paths"))) {
    if (!isObject(item)) continue
    for (const method of METHODS) {
      const operation = item[method]
      if (!isObject(operation)) continue
      operation.security = [{ [SECURITY_SCHEME]: [] }]
      const responses = objectAt(operation, "responses")
      const unauthorized = responses["401"]
      if (isObject(unauthorized)) responses["401"] = notAuthorizedResponse(unauthorized)
    }
  }
  return spec
}
