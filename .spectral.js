/**
 * Spectral's rulesets for the OpenAPI document (`npm run lint:openapi`):
 * `spectral:oas` (recommended) and the OWASP API Security ruleset. Errors fail
 * the run; docs/integration.md ("The document and the tools") lists every
 * rule relaxed here and why.
 */
import owasp from "@stoplight/spectral-owasp-ruleset"
import { oas } from "@stoplight/spectral-rulesets"

export default {
  extends: [[oas, "recommended"], owasp],
  rules: {}
}
