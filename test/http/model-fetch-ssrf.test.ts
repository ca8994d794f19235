/**
 * The model fetcher's SSRF fence through HTTP: a part whose modelEndpoint.url
 * names a special-purpose address (src/domain/SpecialAddresses.ts), in any
 * spelling the WHATWG URL parser accepts (hex, octal, shortened and integer
 * IPv4; IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6), or a name that
 * resolves to one, is refused before any connection: a 422 of type
 * `ModelUrlRefused` from the model fetcher, naming the address and its
 * range. A local file host listens on 127.0.0.1 so that a URL let through
 * would download a real file instead of failing for another reason.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Schedule } from "effect"
import type { IncomingHttpHeaders } from "node:http"
import type { Socket } from "node:net"
import { defaultOptions, makeModelFetcher, MODEL_FETCHER_SOURCE, modelFetcherLayer, scopedModelFetcher } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { TestApp } from "../support/TestApp.ts"

const Files = FileHostLive({ "/x.stl": binaryStl(box(10, 10, 10)) })

// The default fence (allowPrivate false), short timeouts so a URL let through by mistake fails fast.
const fetcher = modelFetcherLayer({ ...defaultOptions, timeout: Duration.seconds(5), placeholderHosts: ["example"] })

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), Files), { timeout: 60_000, excludeTestServices: true })(
    `Model URLs naming special-purpose addresses are refused (${backend})`,
    (it) => {
      it.effect("every spelling of a refused address is a 422 ModelUrlRefused naming the address and its range", () =>
        Effect.gen(function*() {
          const port = new URL((yield* FileHost).url).port
          const { call, ticket } = yield* appWithTicket("ssrf")
          const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
          const part = (url: string) =>
            call("POST", "/ticket-model", { ticketId: ticket.id, modelEndpoint: { url }, technologyId: "fdm", materialId: material.id, quantity: 1 })

          // [URL, what the message must say]: the host as the WHATWG parser normalised it, and the range.
          const cases: ReadonlyArray<readonly [string, string]> = [
            // The three forms the BlockList missed.
            [`http://[::127.0.0.1]:${port}/x.stl`, "::7f00:1 is a private or reserved address (IPv4-compatible, RFC 4291)"],
            [`http://[::7f00:1]:${port}/x.stl`, "::7f00:1 is a private or reserved address (IPv4-compatible, RFC 4291)"],
            [
              `http://[64:ff9b:1::7f00:1]:${port}/x.stl`,
              "64:ff9b:1::7f00:1 is a private or reserved address (IPv4-IPv6 Translation (local-use NAT64), RFC 8215)"
            ],
            [`http://[2002:7f00:1::]:${port}/x.stl`, "2002:7f00:1:: is a private or reserved address (6to4, RFC 3056)"],
            // IPv4 spellings: all 127.0.0.1 once parsed.
            [`http://0x7f.1:${port}/x.stl`, "127.0.0.1 is a private or reserved address (Loopback, RFC 1122)"],
            [`http://2130706433:${port}/x.stl`, "127.0.0.1 is a private or reserved address (Loopback, RFC 1122)"],
            [`http://0x7f000001:${port}/x.stl`, "127.0.0.1 is a private or reserved address (Loopback, RFC 1122)"],
            [`http://0177.0.0.1:${port}/x.stl`, "127.0.0.1 is a private or reserved address (Loopback, RFC 1122)"],
            [`http://127.1:${port}/x.stl`, "127.0.0.1 is a private or reserved address (Loopback, RFC 1122)"],
            [`http://127.0.0.1.:${port}/x.stl`, "127.0.0.1 is a private or reserved address (Loopback, RFC 1122)"],
            [`http://0:${port}/x.stl`, "0.0.0.0 is a private or reserved address (\"This host on this network\", RFC 1122)"],
            // IPv4-mapped: judged by the IPv4 address carried.
            [`http://[::ffff:127.0.0.1]:${port}/x.stl`, "::ffff:7f00:1 is a private or reserved address (IPv4-mapped 127.0.0.1: Loopback, RFC 1122)"],
            [`http://[0:0:0:0:0:ffff:7f00:1]:${port}/x.stl`, "::ffff:7f00:1 is a private or reserved address (IPv4-mapped 127.0.0.1"],
            [`http://[::ffff:169.254.169.254]/latest/meta-data/x.stl`, "IPv4-mapped 169.254.169.254: Link Local, RFC 3927"],
            // Other IPv6 special-purpose ranges.
            [`http://[::1]:${port}/x.stl`, "::1 is a private or reserved address (Loopback Address, RFC 4291)"],
            [`http://[::]:${port}/x.stl`, ":: is a private or reserved address (Unspecified Address, RFC 4291)"],
            [`http://[64:ff9b::7f00:1]:${port}/x.stl`, "64:ff9b::7f00:1 is a private or reserved address (IPv4-IPv6 Translation (NAT64), RFC 6052)"],
            [`http://[::ffff:0:7f00:1]:${port}/x.stl`, "::ffff:0:7f00:1 is a private or reserved address (Reserved by IETF, RFC 4291)"],
            [`http://[2001::1]:${port}/x.stl`, "(TEREDO, RFC 4380, RFC 8190)"],
            [`http://[fd00::1]:${port}/x.stl`, "fd00::1 is a private or reserved address (Unique-Local"],
            [`http://[fe80::1]:${port}/x.stl`, "(Link-Local Unicast, RFC 4291)"],
            [`http://[fec0::1]:${port}/x.stl`, "(Site-Local (deprecated), RFC 3879)"],
            // IPv4 special-purpose ranges.
            ["http://169.254.169.254/latest/meta-data/x.stl", "169.254.169.254 is a private or reserved address (Link Local, RFC 3927)"],
            ["http://100.64.0.1/x.stl", "(Shared Address Space, RFC 6598)"],
            ["http://192.0.0.170/x.stl", "(NAT64/DNS64 Discovery"],
            ["http://255.255.255.255/x.stl", "(Limited Broadcast"],
            // A name: checked on the addresses it resolves to, at connection time.
            [`http://localhost:${port}/x.stl`, "a private or reserved address (Loopback"]
          ]
          for (const [url, includes] of cases) {
            const reply = yield* part(url)
            assert.strictEqual(reply.status, 422, `${url}: ${reply.text}`)
            const body = reply.json()
            assert.strictEqual(body.type, "ModelUrlRefused", `${url}: ${reply.text}`)
            assert.include(body.message, includes, url)
            // The refusal names the setting that allows such an address.
            assert.include(body.message, "set MODEL_FETCH_ALLOW_PRIVATE=true to allow it", url)
            assert.strictEqual(reply.headers.get("x-error-source"), MODEL_FETCHER_SOURCE, url)
          }
          assert.deepStrictEqual(ok(yield* call("GET", "/ticket-model"), "list"), [], "no part was created")
        }))
    }
  )
}

/** What the redirect tests' host saw of the requests it answered. */
const received: Array<{ readonly url: string; readonly headers: IncomingHttpHeaders; readonly socket: Socket }> = []

const Redirects = FileHostLive({ "/x.stl": binaryStl(box(10, 10, 10)) }, (path, request, response) => {
  received.push({ url: request.url ?? "", headers: request.headers, socket: request.socket })
  if (path === "/endless") {
    // A body that never ends: a download of it is cut short by its byte limit.
    response.writeHead(200, { "content-type": "application/octet-stream" })
    const chunk = Buffer.alloc(64 * 1024)
    const more = () => {
      if (!response.destroyed && response.write(chunk)) setImmediate(more)
    }
    response.on("drain", more)
    more()
    return true
  }
  const port = request.socket.localPort
  const to: Record<string, string> = {
    "/to-file": "file:///etc/passwd",
    "/to-credentials": `http://user:secret@127.0.0.1:${port}/x.stl`,
    "/to-same-host": `http://127.0.0.1:${port}/x.stl`
  }
  const location = to[path]
  if (location === undefined) return false
  response.writeHead(302, { location }).end()
  return true
})

layer(Redirects, { excludeTestServices: true })("every redirect is checked again", (it) => {
  it.effect("a redirect to a refused URL is a 422 ModelUrlRefused naming the hop, even where the first URL may be fetched", () =>
    Effect.gen(function*() {
      const host = yield* FileHost
      // 127.0.0.1 is let through so that the first request is answered; the hops' other checks still apply.
      const open = makeModelFetcher({ ...defaultOptions, allowPrivate: true, timeout: Duration.seconds(5) })
      for (
        const [path, includes] of [
          ["/to-file", "file:///etc/passwd is not fetched: only http and https URLs are fetched, not file"],
          ["/to-credentials", "is not fetched: URLs with credentials are not fetched"]
        ] as const
      ) {
        const error = yield* Effect.flip(open.fetch(`${host.url}${path}`))
        assert.strictEqual(error.status, 422, `${path}: ${error.message}`)
        assert.strictEqual(error.type, "ModelUrlRefused", path)
        assert.strictEqual(error.source, MODEL_FETCHER_SOURCE, path)
        assert.include(error.message, includes, path)
        assert.notInclude(error.message, "secret", path)
      }
    }))

  it.effect("errors show the URL without its query; the host gets the query as given and no trace context", () =>
    Effect.gen(function*() {
      const host = yield* FileHost
      const open = makeModelFetcher({ ...defaultOptions, allowPrivate: true, timeout: Duration.seconds(5) })
      const query = "?X-Amz-Signature=a%2Fb~c&token=SECRET-TOKEN&flag"
      received.length = 0
      const error = yield* Effect.flip(open.fetch(`${host.url}/missing.stl${query}`).pipe(Effect.withSpan("caller")))
      assert.strictEqual(error.status, 502)
      assert.include(error.message, `GET ${host.url}/missing.stl answered 404`)
      assert.notInclude(error.message, "SECRET-TOKEN")
      const [seen] = received
      assert.strictEqual(seen?.url, `/missing.stl${query}`)
      for (const header of ["traceparent", "tracestate", "b3", "x-b3-traceid"]) assert.isUndefined(seen?.headers[header], header)
      assert.strictEqual(seen?.headers["user-agent"], "mfg-engine model-fetcher")
    }))

  it.effect("a fetcher's downloads from one host share a connection, closed with the fetcher or by a download cut short; without one, each download has its own", () =>
    Effect.gen(function*() {
      const host = yield* FileHost
      const options = { ...defaultOptions, allowPrivate: true, timeout: Duration.seconds(5) }
      const connectionsOf = (fetch: (url: string) => Effect.Effect<unknown, unknown>) =>
        Effect.gen(function*() {
          received.length = 0
          for (let i = 0; i < 3; i++) yield* fetch(`${host.url}/to-same-host`)
          assert.deepStrictEqual(received.map((seen) => seen.url), ["/to-same-host", "/to-same-host", "/to-same-host"])
          return new Set(received.map((seen) => seen.socket))
        })

      const shared = yield* Effect.scoped(Effect.flatMap(scopedModelFetcher(options), (fetcher) => connectionsOf(fetcher.fetch)))
      assert.strictEqual(shared.size, 1, "three downloads on one connection")
      const [kept] = shared
      // Closed once the fetcher's scope is: the host sees the connection end.
      yield* Effect.sync(() => kept!.destroyed || kept!.readableEnded).pipe(
        Effect.flatMap((closed) => closed ? Effect.void : Effect.fail("still open")),
        Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 50 })
      )

      // A download cut short mid-body (past maxBytes) ends its connection: the next one opens another.
      const cutShort = yield* Effect.scoped(Effect.gen(function*() {
        const fetcher = yield* scopedModelFetcher({ ...options, maxBytes: 1 << 20 })
        received.length = 0
        for (let i = 0; i < 2; i++) {
          const error = yield* Effect.flip(fetcher.fetch(`${host.url}/endless`))
          assert.strictEqual(error.type, "ModelTooLarge", error.message)
        }
        return new Set(received.map((seen) => seen.socket))
      }))
      assert.strictEqual(cutShort.size, 2, "the second download after a cut-short one on a new connection")

      const own = yield* connectionsOf(makeModelFetcher(options).fetch)
      assert.strictEqual(own.size, 3, "a connection per download")
    }))
})
