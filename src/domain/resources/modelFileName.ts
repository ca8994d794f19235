/**
 * The file-name rule of a model endpoint, shared by parts and catalogue
 * models: the engine reads a model file by its extension, so a url whose
 * last path segment is not a model file name (a download endpoint, a long
 * pre-signed url) needs an explicit `fileName`.
 */
import type { Schema } from "effect"
import type { ModelEndpoint } from "./modelFiles.ts"

/** A url path whose last segment is a model file name. */
const CLEAN_FILE_NAME = /\/[^/?#]+\.(stl|3mf|obj)$/i

/** The 400 issue of an endpoint without a file name, at `modelEndpoint.fileName`; true when it has one. */
export const fileNameRule = (endpoint: typeof ModelEndpoint.Type | undefined): Schema.FilterOutput => {
  if (endpoint === undefined || endpoint.fileName !== undefined) return true
  const path = endpoint.url.split(/[?#]/)[0] ?? ""
  return CLEAN_FILE_NAME.test(path) ? true : { path: ["modelEndpoint", "fileName"], issue: "required when the url does not end in a model file name" }
}
