/**
 * The model fetcher: downloads the model file of a part from the URL an API
 * caller gave (docs/geometry.md). Because the URL is the caller's, the
 * download is fenced in:
 *
 * - only `http:` and `https:`, without credentials in the URL;
 * - no loopback, private, link-local, shared, multicast or reserved address:
 *   none in a special-purpose range of the IANA registries
 *   (src/domain/SpecialAddresses.ts), checked on every address the host name
 *   resolves to, at connection time, on a literal address in the URL, and on
 *   every redirect, unless MODEL_FETCH_ALLOW_PRIVATE=true;
 * - at most MODEL_FETCH_MAX_BYTES (100 MiB), MODEL_FETCH_TIMEOUT (20 s) for
 *   the whole download, MODEL_FETCH_MAX_REDIRECTS (3) redirects.
 *
 * Hosts under MODEL_FETCH_PLACEHOLDER_HOSTS (comma-separated domains; none by
 * default) are placeholders: nothing is fetched and the part has no geometry
 * yet. The test configuration names `example` (the TLD RFC 2606 reserves for
 * documentation) so suites about orders need no file host.
 *
 * A failed download is an EngineError whose source is `model-fetcher`.
 *
 * The download itself, on Effect's HttpClient over undici, and how each
 * check is made, is in modelDownload.ts; this file holds the options, their
 * configuration and the ModelFetcher service.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Effect, Layer } from "effect"
import { DEFAULT_MODEL_FETCH, type ModelFetchSettings } from "../../domain/ModelSettings.ts"
import { isFetchable } from "../../domain/SpecialAddresses.ts"
import type { EngineError } from "../EngineError.ts"
import { download, downloadAgentOptions, fetchError, MODEL_FETCHER_SOURCE } from "./modelDownload.ts"
import { measuredDownload } from "./ModelMetrics.ts"

export { MODEL_FETCHER_SOURCE }

/** The fetcher's options (MODEL_FETCH_*, src/domain/ModelSettings.ts). */
export type ModelFetcherOptions = ModelFetchSettings

export interface ModelFetcherShape {
  /** The file at `url`; `undefined` when the host is a placeholder (nothing fetched). */
  readonly fetch: (url: string) => Effect.Effect<Uint8Array | undefined, EngineError>
}

export const defaultOptions: ModelFetcherOptions = DEFAULT_MODEL_FETCH

/**
 * Whether an IP address may not be fetched: in a special-purpose range of
 * the IANA registries (loopback, private, link-local, shared, multicast,
 * reserved, documentation, NAT64, 6to4, IPv4-compatible, ... see
 * src/domain/SpecialAddresses.ts), or not an IP address at all. An
 * IPv4-mapped address is judged by the IPv4 address it carries.
 */
export const isPrivateAddress = (address: string): boolean => !isFetchable(address)

// ---------------------------------------------------------------------------
// The fetcher

const isPlaceholder = (options: ModelFetcherOptions, hostname: string) => {
  const host = hostname.toLowerCase().replace(/\.$/, "")
  return options.placeholderHosts.some((placeholder) => host === placeholder || host.endsWith(`.${placeholder}`))
}

/**
 * The download in its span, `model download`: the host, never the whole URL
 * (its path or query may carry a signature or token); the final status and
 * the size on success; a failure fails the span with the EngineError, whose
 * type is also `error.type`. Timed and sized in the model metrics (ModelMetrics.ts).
 */
const tracedDownload = (options: ModelFetcherOptions, url: URL, agent: DownloadAgent | undefined): Effect.Effect<Uint8Array, EngineError> =>
  measuredDownload(download(options, url, agent)).pipe(
    Effect.tap(({ bytes, status }) => Effect.annotateCurrentSpan({ "http.response.status_code": status, "model.bytes": bytes.length })),
    Effect.map(({ bytes }) => bytes),
    Effect.tapError((error) => Effect.annotateCurrentSpan({ "error.type": error.type })),
    Effect.withSpan("model download", {
      kind: "client",
      attributes: {
        "url.scheme": url.protocol.replace(/:$/, ""),
        "server.address": url.hostname,
        ...(url.port === "" ? {} : { "server.port": Number(url.port) })
      }
    }, { captureStackTrace: false })
  )

type DownloadAgent = NodeHttpClient.Dispatcher["Service"]

/**
 * A fetcher with fixed options. With `agent`, its downloads share that
 * undici Agent and the connections it keeps to each host; without, each
 * download opens and closes its own.
 */
export const makeModelFetcher = (options: ModelFetcherOptions, agent?: DownloadAgent): ModelFetcherShape => ({
  fetch: (raw) =>
    Effect.suspend(() => {
      let url: URL
      try {
        url = new URL(raw)
      } catch {
        return Effect.fail(fetchError(422, "ModelUrlRefused", "modelEndpoint.url is not a valid URL"))
      }
      if (isPlaceholder(options, url.hostname)) return Effect.succeed(undefined)
      return tracedDownload(options, url, agent)
    })
})

/**
 * The model fetcher the engine uses: operations read it from their context,
 * where Engine.run puts the one its layer was built with. The gateway and
 * the engine service provide the one AppConfig read at start
 * (src/app/ModelServices.ts); a test may provide `modelFetcherLayer(options)`.
 */
export class ModelFetcher extends Context.Service<ModelFetcher, ModelFetcherShape>()("mfg/engine/ModelFetcher") {}

/**
 * A fetcher whose downloads share one undici Agent, closed with the scope:
 * a host's connection, once open, serves its next downloads (no new TCP
 * or TLS handshake per part; bench/README.md, "Model downloads on kept
 * connections").
 */
export const scopedModelFetcher = (options: ModelFetcherOptions) =>
  Effect.map(NodeHttpClient.makeDispatcherOptions(downloadAgentOptions(options.allowPrivate)), (agent) => makeModelFetcher(options, agent))

/** The engine's model fetcher with fixed options (tests, hosts that configure it in code), its connections closed with the layer. */
export const modelFetcherLayer = (options: Partial<ModelFetcherOptions>) => Layer.effect(ModelFetcher, scopedModelFetcher({ ...defaultOptions, ...options }))
