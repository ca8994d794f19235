/**
 * A model file upload bounds its own body: it streams to storage under
 * MODEL_UPLOAD_MAX_BYTES (ModelFileHandlers.ts), so MAX_BODY_BYTES, which
 * RequestLimits applies to every other body, does not apply to it.
 */
import type { LimitedSurface } from "../request/index.ts"

const UPLOAD_PATH = "/v1/model-file"

export const ModelUploadLimits: LimitedSurface = {
  matches: (request) => request.method === "POST" && (request.url === UPLOAD_PATH || request.url.startsWith(`${UPLOAD_PATH}?`)),
  boundsItsBody: true
}
