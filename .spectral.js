/**
 * Spectral's rulesets for the OpenAPI document (`npm run lint:openapi`):
 * `spectral:oas` (recommended) and the OWASP API Security ruleset. An error
 * fails the run. docs/integration.md lists every rule relaxed here, and why.
 */
import owasp from "@stoplight/spectral-owasp-ruleset"
import { oas } from "@stoplight/spectral-rulesets"

/** The schemas of what a client sends: parameters and request bodies (references followed). */
const inputsOfType = (type) => [
  `$.paths[*][*].parameters[*]..[?(@ && @.type=="${type}")]`,
  `$.paths[*][*].requestBody..[?(@ && @.type=="${type}")]`
]

/** An OWASP rule on what a client sends only: its bounds protect the service from its input, not a client from an answer. */
const onInputs = (rule, type) => ({ ...owasp.rules[rule], given: inputsOfType(type) })

export default {
  extends: [[oas, "recommended"], owasp],
  rules: {
    "owasp:api4:2023-string-limit": onInputs("owasp:api4:2023-string-limit", "string"),
    "owasp:api4:2023-array-limit": onInputs("owasp:api4:2023-array-limit", "array"),
    "owasp:api4:2023-integer-limit": onInputs("owasp:api4:2023-integer-limit", "integer"),
    // A repeatable filter's schema has no single `type`, which this rule reads as numeric; reel group ids are numbers by the spec.
    "owasp:api1:2023-no-numeric-ids": "warn",
    // The request log's `secretId` filter is a secret's public id, never its value: the rule matches the name only.
    "owasp:api2:2023-no-credentials-in-url": {
      ...owasp.rules["owasp:api2:2023-no-credentials-in-url"],
      given: "$.paths[?(@property != '/v1/request-log')][*].parameters[?(@ && @.in && @.in.match(/query|path/))].name"
    },
    // Effect's OpenAPI annotations have no `x-internal` for a server: the one server is this public gateway.
    "owasp:api9:2023-inventory-access": "warn"
  }
}
