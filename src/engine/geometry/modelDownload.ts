/**
 * One download of the model fetcher (ModelFetcher.ts, docs/geometry.md):
 * Effect's HttpClient over undici (@effect/platform-node's NodeHttpClient),
 * fenced in:
 *
 * - each request, the first and every redirect, is checked before it is
 *   sent: `http:` or `https:`, no credentials, and a literal address in
 *   no special-purpose range (src/domain/SpecialAddresses.ts);
 * - a host name is checked on every address it resolves to, at connection
 *   time: the download's undici Agent connects through guardedLookup, so the
 *   addresses checked are the ones the socket connects to;
 * - redirects are followed here (the client follows none), at most
 *   `maxRedirects`; the body is read as a stream and dropped as soon as it
 *   passes `maxBytes`; `timeout` covers the whole download.
 *
 * With `allowPrivate`, the address checks are left out; the others stay.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Duration, Effect, Schema, type Scope, Stream } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { lookup as dnsLookup } from "node:dns"
import { STATUS_CODES } from "node:http"
import { isIP, type LookupFunction } from "node:net"
import { describeSpecial } from "../../domain/SpecialAddresses.ts"
import { EngineError } from "../EngineError.ts"

export const MODEL_FETCHER_SOURCE = "model-fetcher"

/** What fences a download in (the ModelFetcherOptions but the placeholders). */
export interface DownloadLimits {
  /** Whether loopback and private addresses may be fetched (tests, closed networks). */
  readonly allowPrivate: boolean
  readonly maxBytes: number
  readonly timeout: Duration.Duration
  readonly maxRedirects: number
}

// ---------------------------------------------------------------------------
// Errors

export const fetchError = (status: number, type: string, message: string) =>
  EngineError.modelFile({ status, type, message: `model-fetcher: ${message}`, source: MODEL_FETCHER_SOURCE })

/** The URL as errors show it: no query or fragment (they may carry signatures). */
export const shown = (url: URL) => `${url.protocol}//${url.host}${url.pathname}`

// ---------------------------------------------------------------------------
// Addresses

/** The setting that allows such addresses, named in every refusal of one. */
const ALLOW_PRIVATE_HINT = "; set MODEL_FETCH_ALLOW_PRIVATE=true to allow it (tests and closed networks only)"

/** Why a connection to the address is refused: `the host resolves to ::1, a private or reserved address (Loopback Address, RFC 4291)`. */
export class PrivateAddress extends Schema.TaggedError<PrivateAddress>()("PrivateAddress", { address: Schema.String, message: Schema.String }) {
  static of(address: string, why: string) {
    return new PrivateAddress({ address, message: `the host resolves to ${address}, a private or reserved address (${why})${ALLOW_PRIVATE_HINT}` })
  }
}

/**
 * dns.lookup, refusing private addresses. The socket calls it to learn what
 * to connect to, so the addresses checked are the ones connected to: a name
 * cannot resolve to a public address for a check and a private one for the
 * connection (DNS rebinding). Every address is checked, as the socket may
 * try each of them (autoSelectFamily).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, [])
    for (const entry of addresses) {
      const why = describeSpecial(entry.address)
      if (why !== undefined) return callback(PrivateAddress.of(entry.address, why), [])
    }
    if (options.all === true) return callback(null, addresses)
    const first = addresses[0]
    if (first === undefined) return callback(Object.assign(new Error("no address"), { code: "ENOTFOUND" }), [])
    callback(null, first.address, first.family)
  })
}

// ---------------------------------------------------------------------------
// The download

/** Why a URL may not be fetched (or called: webhooks take the same policy), if it may not. */
export const refusal = (options: Pick<DownloadLimits, "allowPrivate">, url: URL): string | undefined => {
  if (url.protocol !== "http:" && url.protocol !== "https:") return `only http and https URLs are fetched, not ${url.protocol.replace(/:$/, "")}`
  if (url.username !== "" || url.password !== "") return "URLs with credentials are not fetched"
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (!options.allowPrivate) {
    // Names are checked on the addresses they resolve to (guardedLookup); literal addresses here, as the socket looks nothing up for them.
    // The WHATWG parser has normalised them already: 0x7f.1 and 2130706433 are 127.0.0.1, [::127.0.0.1] is [::7f00:1].
    if (isIP(host) !== 0) {
      const why = describeSpecial(host)
      if (why !== undefined) return `${host} is a private or reserved address (${why})${ALLOW_PRIVATE_HINT}`
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

/** What one request ends in: the file, or the next URL to request. */
type Hop = Downloaded | { readonly next: URL }

/** The client's failure as a message: the PrivateAddress the guarded lookup raised, else the cause and its code. */
const requestFailure = (url: URL, error: HttpClientError.HttpClientError) => {
  const cause = error.reason.cause
  if (cause instanceof PrivateAddress) return fetchError(422, "ModelUrlRefused", `${shown(url)} is not fetched: ${cause.message}`)
  return fetchError(502, "ModelDownloadFailed", `${shown(url)} could not be downloaded: ${describeCause(cause)}`)
}

/** An error's message and code: `connect ECONNREFUSED 127.0.0.1:9 (ECONNREFUSED)`. */
export const describeCause = (cause: unknown): string => {
  if (!(cause instanceof Error)) return String(cause)
  // A connection that tried several addresses fails with an AggregateError whose own message is empty.
  const message = cause.message !== "" || !(cause instanceof AggregateError)
    ? cause.message
    : cause.errors.map((each: unknown) => each instanceof Error ? each.message : String(each)).join("; ")
  const code = (cause as NodeJS.ErrnoException).code
  return code === undefined ? message : `${message} (${code})`
}

/** The body of a 2xx answer, refused as soon as it is (or says it is) over the limit. */
const readBody = (options: DownloadLimits, url: URL, response: HttpClientResponse.HttpClientResponse) =>
  Effect.suspend(() => {
    const declared = Number(response.headers["content-length"])
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      return Effect.fail(fetchError(422, "ModelTooLarge", `${shown(url)} is ${declared} bytes, over the limit of ${options.maxBytes}`))
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    return response.stream.pipe(
      Stream.mapError(() => fetchError(502, "ModelDownloadFailed", `${shown(url)}: the connection closed before the end of the file`)),
      Stream.runForEach((chunk) => {
        size += chunk.length
        if (size > options.maxBytes) return Effect.fail(fetchError(422, "ModelTooLarge", `${shown(url)} is over the limit of ${options.maxBytes} bytes`))
        chunks.push(chunk)
        return Effect.void
      }),
      Effect.map(() => {
        const bytes = Buffer.concat(chunks, size)
        return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length)
      })
    )
  })

/**
 * One request: a redirect's next URL, or the file. Its scope is the
 * request's: closing it aborts an answer not read to the end (a redirect's
 * or an error's body, a file over the limit), dropping its connection.
 */
const request = (
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, Scope.Scope>,
  options: DownloadLimits,
  start: URL,
  url: URL,
  redirects: number
): Effect.Effect<Hop, EngineError> =>
  Effect.scoped(Effect.gen(function*() {
    const why = refusal(options, url)
    if (why !== undefined) return yield* fetchError(422, "ModelUrlRefused", `${shown(url)} is not fetched: ${why}`)
    // The URL as a string: a URL object would have its query re-encoded as form parameters, breaking signatures.
    const response = yield* client.execute(HttpClientRequest.get(url.href, { headers: { "user-agent": "mfg-engine model-fetcher", accept: "*/*" } })).pipe(
      Effect.mapError((error) => requestFailure(url, error))
    )
    const status = response.status
    if (REDIRECTS.has(status)) {
      const location = response.headers.location
      if (location === undefined) return yield* fetchError(502, "ModelDownloadFailed", `${shown(url)} answered ${status} without a Location`)
      if (redirects >= options.maxRedirects) {
        return yield* fetchError(502, "ModelDownloadFailed", `${shown(start)}: more than ${options.maxRedirects} redirects`)
      }
      if (!URL.canParse(location, url.href)) return yield* fetchError(502, "ModelDownloadFailed", `${shown(url)} redirects to an invalid URL`)
      return { next: new URL(location, url) }
    }
    if (status < 200 || status > 299) {
      // The client gives no reason phrase: the standard one stands in.
      return yield* fetchError(502, "ModelDownloadFailed", `GET ${shown(url)} answered ${status} ${STATUS_CODES[status] ?? ""}`.trimEnd())
    }
    return { bytes: yield* readBody(options, url, response), status }
  }))

/**
 * Connections a fetcher keeps to one host at most; further downloads from
 * it wait for one (within their `timeout`). The bound keeps a burst of
 * downloads from one host from leaving a connection per download open, and
 * holding its memory, until the idle timeout (bench/README.md, "Model
 * downloads on kept connections").
 */
const CONNECTIONS_PER_HOST = 32

/** The undici Agent options of the downloads: HTTP/1.1, and names resolved through guardedLookup unless `allowPrivate`. */
export const downloadAgentOptions = (allowPrivate: boolean) => ({
  // HTTP/1.1 only, and no connection timeout of undici's own: `timeout` covers the connection too (a 504, not a 502).
  allowH2: false,
  connections: CONNECTIONS_PER_HOST,
  connect: allowPrivate ? { timeout: 0 } : { timeout: 0, lookup: guardedLookup }
})

/**
 * One download on Effect's HttpClient over undici, following redirects
 * itself (the client follows none), each hop re-checked. The agent is the
 * fetcher's (`agent`, kept across downloads, so a host's connection serves
 * its next download too), or, without one, the download's own, closed with
 * it. Either resolves names through guardedLookup (without allowPrivate)
 * when it opens a connection, so a kept connection is to an address that
 * was checked. The client's span is off: the download has its own
 * (tracedDownload), and the client's would carry the URL's query and send
 * the trace's ids to the caller's host.
 */
export const download = (options: DownloadLimits, start: URL, agent?: NodeHttpClient.Dispatcher["Service"]): Effect.Effect<Downloaded, EngineError> =>
  Effect.gen(function*() {
    const dispatcher = agent ?? (yield* NodeHttpClient.makeDispatcherOptions(downloadAgentOptions(options.allowPrivate)))
    const client = HttpClient.withScope(yield* NodeHttpClient.makeUndici.pipe(Effect.provideService(NodeHttpClient.Dispatcher, dispatcher)))
    let url = start
    for (let redirects = 0;; redirects++) {
      const hop = yield* request(client, options, start, url, redirects)
      if ("next" in hop) url = hop.next
      else return hop
    }
  }).pipe(
    Effect.scoped,
    Effect.provideService(HttpClient.TracerDisabledWhen, () => true),
    Effect.timeoutOrElse({
      duration: options.timeout,
      orElse: () => Effect.fail(fetchError(504, "ModelDownloadTimeout", `${shown(start)} did not arrive within ${Duration.format(options.timeout)}`))
    })
  )
