/** Small helpers the order workflows share: the file name of a model endpoint. */
import type { ModelEndpoint } from "../../domain/resources/modelFiles.ts"

/** The last path segment of a URL, without query or fragment. */
export const lastSegment = (url: string): string | undefined => {
  const path = url.split(/[?#]/)[0] ?? ""
  const segment = path.split("/").pop()
  if (segment === undefined || segment === "") return undefined
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** The file name of a model endpoint: explicit, else the url's last path segment. */
export const fileNameOf = (endpoint: typeof ModelEndpoint.Type | null | undefined): string | null => {
  if (endpoint === undefined || endpoint === null) return null
  return endpoint.fileName ?? lastSegment(endpoint.url) ?? null
}
