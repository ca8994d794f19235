/**
 * A local webhook receiver for the tests: it records every request (path,
 * headers, body as received) and answers as planned per path (a status,
 * after a delay), 204 otherwise. The tests verify what it received with the
 * `standardwebhooks` library, as an integrator's receiver would.
 */
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly at: number
}

export interface PlannedAnswer {
  readonly status: number
  readonly delayMs?: number
}

export class WebhookReceiver extends Context.Service<WebhookReceiver, {
  readonly url: (path: string) => string
  readonly received: (path: string) => ReadonlyArray<Received>
  /** The answers to the next requests to `path`, in order; then 204. */
  readonly plan: (path: string, answers: ReadonlyArray<PlannedAnswer>) => void
  /** The most requests to `path` that were waiting for their answer at one time. */
  readonly maxInFlight: (path: string) => number
  /** The requests to `path` once there are at least `count` (fails after `timeoutMs`). */
  readonly waitFor: (path: string, count: number, timeoutMs?: number) => Effect.Effect<ReadonlyArray<Received>>
}>()("test/WebhookReceiver") {}

export const WebhookReceiverLive = Layer.effect(
  WebhookReceiver,
  Effect.gen(function*() {
    const received = new Map<string, Array<Received>>()
    const plans = new Map<string, Array<PlannedAnswer>>()
    const inFlight = new Map<string, number>()
    const maxInFlight = new Map<string, number>()
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const path = request.url ?? "/"
        const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
        const list = received.get(path) ?? []
        list.push({ path, headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() })
        received.set(path, list)
        const answer = plans.get(path)?.shift() ?? { status: 204 }
        const now = (inFlight.get(path) ?? 0) + 1
        inFlight.set(path, now)
        maxInFlight.set(path, Math.max(now, maxInFlight.get(path) ?? 0))
        const reply = () => {
          inFlight.set(path, (inFlight.get(path) ?? 1) - 1)
          if (!response.destroyed) response.writeHead(answer.status, { "content-type": "text/plain" }).end(`answered ${answer.status}`)
        }
        if (answer.delayMs === undefined) reply()
        else setTimeout(reply, answer.delayMs)
      })
    })
    const port = yield* Effect.acquireRelease(
      Effect.promise(() => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))),
      () =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            server.close(() => resolve())
            server.closeAllConnections()
          })
        )
    )
    const url = (path: string) => `http://127.0.0.1:${port}${path}`
    const waitFor = (path: string, count: number, timeoutMs = 20_000) =>
      Effect.gen(function*() {
        const deadline = Date.now() + timeoutMs
        while (Date.now() < deadline) {
          const list = received.get(path) ?? []
          if (list.length >= count) return list
          yield* Effect.sleep("50 millis")
        }
        return yield* Effect.die(new Error(`${path}: ${(received.get(path) ?? []).length} of ${count} requests within ${timeoutMs} ms`))
      })
    return WebhookReceiver.of({
      url,
      received: (path) => received.get(path) ?? [],
      plan: (path, answers) => plans.set(path, [...answers]),
      maxInFlight: (path) => maxInFlight.get(path) ?? 0,
      waitFor
    })
  })
)
