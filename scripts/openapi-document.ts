/**
 * Writes the OpenAPI document the gateway serves at /openapi.json (derived
 * from PublicApi) to a file, for the tools that read one: `npm run
 * lint:openapi` lints it with Spectral (.spectral.js).
 * `node scripts/openapi-document.ts <file>`.
 */
import { OpenApi } from "effect/http-api"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { PublicApi } from "../src/contract/PublicApi.ts"

if (import.meta.main) {
  const file = process.argv[2]
  if (file === undefined) throw new Error("usage: node scripts/openapi-document.ts <file>")
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  Fs.writeFileSync(file, JSON.stringify(OpenApi.fromApi(PublicApi), null, 2))
}
