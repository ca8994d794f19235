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
 */
import { Config, Context, Duration, Effect, Layer } from "effect"
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import * as Http from "node:http"
import * as Https from "node:https"
import { isIP } from "node:net"
import { InvalidConfig } from "../../domain/Errors.ts"
import { describeSpecial, isFetchable } from "../../domain/SpecialAddresses.ts"
import { EngineError } from "../EngineError.ts"

export const MODEL_FETCHER_SOURCE = "model-fetcher"

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

// ---------------------------------------------------------------------------
// Errors

const fetchError = (status: number, type: string, message: string) =>
  EngineError.modelFile({ status, type, message: `model-fetcher: ${message}`, source: MODEL_FETCHER_SOURCE })

/** The URL as errors show it: no query or fragment (they may carry signatures). */
const shown = (url: URL) => `${url.protocol}//${url.host}${url.pathname}`

// ---------------------------------------------------------------------------
// Addresses

/**
 * Whether an IP address may not be fetched: in a special-purpose range of
 * the IANA registries (loopback, private, link-local, shared, multicast,
 * reserved, documentation, NAT64, 6to4, IPv4-compatible, ... see
 * src/domain/SpecialAddresses.ts), or not an IP address at all. An
 * IPv4-mapped address is judged by the IPv4 address it carries.
 */
export const isPrivateAddress = (address: string): boolean => !isFetchable(address)

/** Why a connection to the address is refused: `the host resolves to ::1, a private or reserved address (Loopback Address, RFC 4291)`. */
class PrivateAddress extends Error {
  readonly address: string
  constructor(address: string, why: string) {
    super(`the host resolves to ${address}, a private or reserved address (${why})`)
    this.address = address
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void

/** dns.lookup, refusing private addresses: the check happens on the addresses connected to (no rebinding). */
const guardedLookup = (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, [])
    for (const entry of addresses) {
      const why = describeSpecial(entry.address)
      if (why !== undefined) return callback(new PrivateAddress(entry.address, why) as NodeJS.ErrnoException, [])
    }
    if (options.all === true) return callback(null, addresses)
    const first = addresses[0]
    if (first === undefined) return callback(Object.assign(new Error("no address"), { code: "ENOTFOUND" }), [])
    callback(null, first.address, first.family)
  })
}

// ---------------------------------------------------------------------------
// The download

const isPlaceholder = (options: ModelFetcherOptions, hostname: string) => {
  const host = hostname.toLowerCase().replace(/\.$/, "")
  return options.placeholderHosts.some((placeholder) => host === placeholder || host.endsWith(`.${placeholder}`))
}

/** Why a URL may not be fetched, if it may not. */
const refusal = (options: ModelFetcherOptions, url: URL): string | undefined => {
  if (url.protocol !== "http:" && url.protocol !== "https:") return `only http and https URLs are fetched, not ${url.protocol.replace(/:$/, "")}`
  if (url.username !== "" || url.password !== "") return "URLs with credentials are not fetched"
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (!options.allowPrivate) {
    // Names are checked on the addresses they resolve to (guardedLookup); literal addresses here.
    // The WHATWG parser has normalised them already: 0x7f.1 and 2130706433 are 127.0.0.1, [::127.0.0.1] is [::7f00:1].
    if (isIP(host) !== 0) {
      const why = describeSpecial(host)
      if (why !== undefined) return `${host} is a private or reserved address (${why})`
    }
  }
  return undefined
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

interface Downloaded {
  readonly bytes: Uint8Array
  /** The final answer's HTTP status (after redirects). */
  readonly status: number
}

/** One download, following redirects; resumes once with the bytes or an EngineError. */
const download = (options: ModelFetcherOptions, start: URL) =>
  Effect.callback<Downloaded, EngineError>((resume, signal) => {
    let done = false
    let current: Http.ClientRequest | undefined
    const finish = (outcome: Effect.Effect<Downloaded, EngineError>) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resume(outcome)
    }
    // A failure drops the connection: nothing more of it is read.
    const fail = (status: number, type: string, message: string) => {
      if (done) return
      current?.destroy()
      finish(Effect.fail(fetchError(status, type, message)))
    }
    const timeoutMs = Duration.toMillis(options.timeout)
    const timer = setTimeout(
      () => fail(504, "ModelDownloadTimeout", `${shown(start)} did not arrive within ${Duration.format(options.timeout)}`),
      timeoutMs
    )
    signal.addEventListener("abort", () => {
      done = true
      clearTimeout(timer)
      current?.destroy()
    })

    const get = (url: URL, redirects: number) => {
      const why = refusal(options, url)
      if (why !== undefined) return fail(422, "ModelUrlRefused", `${shown(url)} is not fetched: ${why}`)
      const client = url.protocol === "https:" ? Https : Http
      const request = client.get(url, {
        headers: { "user-agent": "mfg-engine model-fetcher", accept: "*/*" },
        ...(options.allowPrivate ? {} : { lookup: guardedLookup as unknown as Http.RequestOptions["lookup"] })
      }, (response) => {
        const status = response.statusCode ?? 0
        if (REDIRECTS.has(status)) {
          response.resume()
          const location = response.headers.location
          if (location === undefined) return fail(502, "ModelDownloadFailed", `${shown(url)} answered ${status} without a Location`)
          if (redirects >= options.maxRedirects) {
            return fail(502, "ModelDownloadFailed", `${shown(start)}: more than ${options.maxRedirects} redirects`)
          }
          let next: URL
          try {
            next = new URL(location, url)
          } catch {
            return fail(502, "ModelDownloadFailed", `${shown(url)} redirects to an invalid URL`)
          }
          return get(next, redirects + 1)
        }
        if (status < 200 || status > 299) {
          response.resume()
          return fail(502, "ModelDownloadFailed", `GET ${shown(url)} answered ${status} ${response.statusMessage ?? ""}`.trimEnd())
        }
        const declared = Number(response.headers["content-length"])
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          return fail(422, "ModelTooLarge", `${shown(url)} is ${declared} bytes, over the limit of ${options.maxBytes}`)
        }
        const chunks: Array<Buffer> = []
        let size = 0
        response.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size > options.maxBytes) return fail(422, "ModelTooLarge", `${shown(url)} is over the limit of ${options.maxBytes} bytes`)
          chunks.push(chunk)
        })
        response.on("end", () => {
          if (!response.complete) return fail(502, "ModelDownloadFailed", `${shown(url)}: the connection closed before the end of the file`)
          const bytes = Buffer.concat(chunks, size)
          finish(Effect.succeed({ bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), status }))
        })
        response.on("error", (error) => fail(502, "ModelDownloadFailed", `${shown(url)}: ${error.message}`))
      })
      current = request
      request.on("error", (error: NodeJS.ErrnoException) => {
        if (error instanceof PrivateAddress) {
          return fail(422, "ModelUrlRefused", `${shown(url)} is not fetched: ${error.message}`)
        }
        const code = error.code === undefined ? "" : ` (${error.code})`
        fail(502, "ModelDownloadFailed", `${shown(url)} could not be downloaded: ${error.message}${code}`)
      })
    }

    let url: URL
    try {
      url = new URL(start)
    } catch {
      return fail(422, "ModelUrlRefused", "the URL is not valid")
    }
    get(url, 0)
  })

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
