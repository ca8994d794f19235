/**
 * The webhook sender: one signed POST of an event to an endpoint, and what
 * came of it (docs/webhooks.md).
 *
 * - Signed as Standard Webhooks says, with the `standardwebhooks` library:
 *   `webhook-id` is the event's id (the same in every delivery of it, for the
 *   receiver's deduplication), `webhook-timestamp` the attempt's time in
 *   seconds, `webhook-signature` one `v1,<base64 HMAC-SHA256>` per secret
 *   (two for 24 h after a rotation).
 * - Fenced in like a model download (src/engine/geometry/modelDownload.ts):
 *   http(s) only, no credentials, no private or reserved address (checked on
 *   a literal address and, at connection time, on every address a name
 *   resolves to), unless MODEL_FETCH_ALLOW_PRIVATE; no redirect is followed
 *   (a 3xx is a failed attempt).
 * - A 2xx within WEBHOOK_TIMEOUT is success; anything else is a failed
 *   attempt with its reason, never an error: the workflow decides what next.
 * - At most PER_ENDPOINT_CONCURRENCY requests to one endpoint at a time in
 *   this instance (lanes.ts), so a slow receiver holds its own deliveries
 *   back and no one else's. `sendWithin` waits for one of those slots a
 *   bounded time only (the dispatcher's first attempts: one not made in time
 *   goes to a workflow instead).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Duration, Effect, identity, Layer, type Option } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { Webhook } from "standardwebhooks"
import { describeCause, guardedLookup, PrivateAddress, refusal, shown } from "../geometry/modelDownload.ts"
import { makeLanes } from "./lanes.ts"

export const PER_ENDPOINT_CONCURRENCY = 4
const SNIPPET_CHARS = 500

export interface WebhookRequest {
  readonly endpointId: string
  readonly url: string
  readonly eventId: string
  /** The event as JSON: the body, byte for byte as signed. */
  readonly body: string
  /** The endpoint's secrets (`whsec_…`): the current one, and the previous one during a rotation's 24 h. */
  readonly secrets: ReadonlyArray<string>
}

export interface AttemptOutcome {
  readonly at: string
  readonly statusCode: number | null
  readonly latencyMs: number
  readonly succeeded: boolean
  readonly error?: string
  readonly responseSnippet?: string
}

export interface WebhookSenderOptions {
  readonly timeout: Duration.Duration
  readonly allowPrivate: boolean
}

export interface WebhookSenderShape {
  /** Why the URL is refused as an endpoint, if it is (its scheme, credentials, a literal private address). */
  readonly refusal: (url: string) => string | undefined
  readonly send: (request: WebhookRequest) => Effect.Effect<AttemptOutcome>
  /** The attempt if one of the endpoint's slots is free within `wait`; none, and no request, if not. */
  readonly sendWithin: (request: WebhookRequest, wait: Duration.Duration) => Effect.Effect<Option.Option<AttemptOutcome>>
}

/** The Standard Webhooks headers of one attempt. */
export const signedHeaders = (request: Pick<WebhookRequest, "eventId" | "body" | "secrets">, at: Date) => ({
  "webhook-id": request.eventId,
  "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
  "webhook-signature": request.secrets.map((secret) => new Webhook(secret).sign(request.eventId, at, request.body)).join(" ")
})

const urlRefusal = (options: WebhookSenderOptions, raw: string): string | undefined => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return "url: not a valid URL"
  }
  const why = refusal(options, url)
  return why === undefined ? undefined : `url: ${why.replace("are not fetched", "are not called").replace("are fetched", "are called")}`
}

const failed = (at: Date, started: number, error: string, statusCode: number | null = null, responseSnippet?: string): AttemptOutcome => ({
  at: at.toISOString(),
  statusCode,
  latencyMs: Math.round(performance.now() - started),
  succeeded: false,
  error,
  ...(responseSnippet === undefined || responseSnippet === "" ? {} : { responseSnippet })
})

/** A sender over one keep-alive undici agent, closed with the scope. */
export const makeWebhookSender = (options: WebhookSenderOptions) =>
  Effect.gen(function*() {
    const dispatcher = yield* NodeHttpClient.makeDispatcherOptions({
      allowH2: false,
      connect: options.allowPrivate ? { timeout: 0 } : { timeout: 0, lookup: guardedLookup }
    })
    // The client's own span would carry the URL (its query may hold a token) and send trace ids to the receiver.
    const client = (yield* NodeHttpClient.makeUndici.pipe(Effect.provideService(NodeHttpClient.Dispatcher, dispatcher))).pipe(
      HttpClient.transformResponse(Effect.provideService(HttpClient.TracerDisabledWhen, () => true))
    )
    const lanes = yield* makeLanes(PER_ENDPOINT_CONCURRENCY)

    const attempt = (request: WebhookRequest): Effect.Effect<AttemptOutcome> =>
      Effect.suspend(() => {
        const at = new Date()
        const started = performance.now()
        const refused = urlRefusal(options, request.url)
        if (refused !== undefined) return Effect.succeed(failed(at, started, refused))
        const post = HttpClientRequest.post(request.url).pipe(
          HttpClientRequest.setHeaders({ ...signedHeaders(request, at), "user-agent": "mfg-webhooks/1" }),
          HttpClientRequest.bodyText(request.body, "application/json")
        )
        return client.execute(post).pipe(
          Effect.flatMap((response) =>
            Effect.map(Effect.orElseSucceed(response.text, () => ""), (text): AttemptOutcome => {
              const snippet = text.slice(0, SNIPPET_CHARS)
              const ok = response.status >= 200 && response.status < 300
              return ok
                ? {
                  at: at.toISOString(),
                  statusCode: response.status,
                  latencyMs: Math.round(performance.now() - started),
                  succeeded: true,
                  ...(snippet === "" ? {} : { responseSnippet: snippet })
                }
                : failed(at, started, `the endpoint answered ${response.status}`, response.status, snippet)
            })
          ),
          Effect.scoped,
          Effect.timeoutOrElse({
            duration: options.timeout,
            orElse: () => Effect.succeed(failed(at, started, `no answer within ${Duration.format(options.timeout)} (WEBHOOK_TIMEOUT)`))
          }),
          Effect.catch((error) => {
            const cause = error.reason.cause
            const why = cause instanceof PrivateAddress
              ? `${shown(new URL(request.url))} is not called: ${cause.message}`
              : `${shown(new URL(request.url))} could not be reached: ${describeCause(cause)}`
            return Effect.succeed(failed(at, started, why))
          })
        )
      })

    return identity<WebhookSenderShape>({
      refusal: (url) => urlRefusal(options, url),
      send: (request) => lanes.run(request.endpointId, attempt(request)),
      sendWithin: (request, wait) => lanes.runWithin(request.endpointId, attempt(request), wait)
    })
  })

/**
 * The sender the engine uses: operations read it from their context, where
 * Engine.run puts the one its layer was built with. The gateway and the
 * engine service provide the one AppConfig configured (src/app/Webhooks.ts);
 * a test may provide `webhookSenderLayer(options)`.
 */
export class WebhookSender extends Context.Service<WebhookSender, WebhookSenderShape>()("mfg/engine/WebhookSender") {}

export const webhookSenderLayer = (options: WebhookSenderOptions) => Layer.effect(WebhookSender, makeWebhookSender(options))
