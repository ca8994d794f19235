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
 * configuration and the ModelFetcher reference.
 */
import { Config, Context, Duration, Effect, Layer } from "effect"
import { InvalidConfig } from "../../domain/Errors.ts"
import { isFetchable } from "../../domain/SpecialAddresses.ts"
import type { EngineError } from "../EngineError.ts"
import { download, fetchError, MODEL_FETCHER_SOURCE } from "./modelDownload.ts"

export { MODEL_FETCHER_SOURCE }

export interface ModelFetcherOptions {
  /** Whether loopback and private addresses may be fetched (tests, closed networks). */
  readonly allowPrivate: boolean
  readonly maxBytes: number
  readonly timeout: Duration.Duration
  readonly maxRedirects: number
  /** Host names (and their subdomains) that are placeholders: not fetched. */
  readonly placeholderHosts: ReadonlyArray<string>
}

export interface ModelFetcherShape {
  /** The file at `url`; `undefined` when the host is a placeholder (nothing fetched). */
  readonly fetch: (url: string) => Effect.Effect<Uint8Array | undefined, EngineError>
}

export const defaultOptions: ModelFetcherOptions = {
  allowPrivate: false,
  maxBytes: 100 * 1024 * 1024,
  timeout: Duration.seconds(20),
  maxRedirects: 3,
  placeholderHosts: []
}

/** The options from the environment (MODEL_FETCH_*), defaults for what is not set. */
export const optionsFromConfig = Config.all({
  allowPrivate: Config.Boolean("MODEL_FETCH_ALLOW_PRIVATE").pipe(Config.withDefault(defaultOptions.allowPrivate)),
  maxBytes: Config.Int("MODEL_FETCH_MAX_BYTES").pipe(Config.withDefault(defaultOptions.maxBytes)),
  timeout: Config.Duration("MODEL_FETCH_TIMEOUT").pipe(Config.withDefault(defaultOptions.timeout)),
  maxRedirects: Config.Int("MODEL_FETCH_MAX_REDIRECTS").pipe(Config.withDefault(defaultOptions.maxRedirects)),
  placeholderHosts: Config.String("MODEL_FETCH_PLACEHOLDER_HOSTS").pipe(
    Config.withDefault(defaultOptions.placeholderHosts.join(",")),
    // `none` (or empty) for no placeholders.
    Config.map((list) =>
      list.trim().toLowerCase() === "none"
        ? []
        : list.split(",").map((host) => host.trim().toLowerCase().replace(/^\.+/, "")).filter((host) => host !== "")
    )
  )
})

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
 * type is also `error.type`.
 */
const tracedDownload = (options: ModelFetcherOptions, url: URL): Effect.Effect<Uint8Array, EngineError> =>
  download(options, url).pipe(
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

/** A fetcher with fixed options. */
export const makeModelFetcher = (options: ModelFetcherOptions): ModelFetcherShape => ({
  fetch: (raw) =>
    Effect.suspend(() => {
      let url: URL
      try {
        url = new URL(raw)
      } catch {
        return Effect.fail(fetchError(422, "ModelUrlRefused", "modelEndpoint.url is not a valid URL"))
      }
      if (isPlaceholder(options, url.hostname)) return Effect.succeed(undefined)
      return tracedDownload(options, url)
    })
})

/** The fetcher configured by MODEL_FETCH_* (read on every fetch, so the environment in effect applies). */
const fromConfig: ModelFetcherShape = {
  fetch: (url) =>
    optionsFromConfig.pipe(
      Effect.mapError((error) => fetchError(500, "InvalidConfig", `MODEL_FETCH_* configuration is invalid: ${error.message}`)),
      Effect.flatMap((options) => makeModelFetcher(options).fetch(url))
    )
}

/**
 * The model fetcher the engine uses: a reference, so operations need not
 * declare it; by default configured from MODEL_FETCH_*. A host (or a test)
 * replaces it with `modelFetcherLayer(options)` provided to the Engine.
 */
export const ModelFetcher = Context.Reference<ModelFetcherShape>("mfg/engine/ModelFetcher", { defaultValue: () => fromConfig })

/** The engine's model fetcher with fixed options (tests, hosts that configure it in code). */
export const modelFetcherLayer = (options: Partial<ModelFetcherOptions>) => Layer.succeed(ModelFetcher, makeModelFetcher({ ...defaultOptions, ...options }))

/**
 * The fetcher configured by MODEL_FETCH_*, read once when the layer is built:
 * an invalid value stops the start with a message naming it (the default
 * reference reads them on each fetch instead).
 */
export const ModelFetcherLive = Layer.effect(
  ModelFetcher,
  optionsFromConfig.pipe(
    Effect.map(makeModelFetcher),
    Effect.catch((error) => Effect.die(new InvalidConfig({ message: `MODEL_FETCH_*: ${error.message}` })))
  )
)
