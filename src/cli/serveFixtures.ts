/**
 * `cli serve-fixtures`: the example model files over HTTP on 127.0.0.1, so
 * that the docs' quoting walkthrough can create a part from a real file
 * without a public URL. It serves the fixed list of exampleModels.ts (GET
 * and HEAD, nothing else, no other path), prints one JSON line with the
 * base URL and each file's URL once it listens, and runs until SIGINT or
 * SIGTERM.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Console, Effect, FileSystem, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { ServeError } from "effect/http/HttpServerError"
import { createServer } from "node:http"
import * as Path from "node:path"
import { EXAMPLE_MODELS, EXAMPLE_MODELS_DIR, type ExampleModel, exampleModelPath } from "./exampleModels.ts"

/** Loopback only: the files are for the machine's own server. */
const HOST = "127.0.0.1"
export const DEFAULT_FIXTURES_PORT = 8090

const ALLOW = "GET, HEAD"

interface LoadedModel {
  readonly model: ExampleModel
  readonly bytes: Uint8Array
}

const loadModels = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const loaded = yield* Effect.forEach(
    EXAMPLE_MODELS,
    (model) => Effect.map(fs.readFile(Path.join(EXAMPLE_MODELS_DIR, model.name)), (bytes): LoadedModel => ({ model, bytes }))
  )
  return new Map(loaded.map((entry) => [exampleModelPath(entry.model), entry]))
})

/** The answer to every request: a listed file to GET or HEAD, else 404 (unknown path) or 405 (other method). */
const answer = Effect.fnUntraced(function*(models: ReadonlyMap<string, LoadedModel>) {
  const request = yield* HttpServerRequest.HttpServerRequest
  const entry = models.get(request.url.split("?")[0]!)
  if (entry === undefined) return HttpServerResponse.text("not found\n", { status: 404 })
  if (request.method !== "GET" && request.method !== "HEAD") {
    return HttpServerResponse.text(`${request.method} is not allowed: ${ALLOW}\n`, { status: 405, headers: { allow: ALLOW } })
  }
  return HttpServerResponse.uint8Array(entry.bytes, { contentType: entry.model.contentType })
})

/** Why listening failed, in words: a port in use says which and what to do. */
const listenFailure = (port: number, error: ServeError) => {
  const cause = error.cause as NodeJS.ErrnoException | undefined
  return cause?.code === "EADDRINUSE"
    ? `port ${port} is in use: stop what listens there or choose another with --port`
    : `cannot listen on ${HOST}:${port}: ${cause?.message ?? error.message}`
}

const reportListenFailure = (port: number) => (error: ServeError) =>
  Console.error(JSON.stringify({ error: { type: "ServeFailed", message: listenFailure(port, error) } })).pipe(
    Effect.andThen(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

const serve = (port: number) =>
  Effect.gen(function*() {
    const models = yield* loadModels
    yield* HttpServer.serveEffect(answer(models))
    const baseUrl = HttpServer.formatAddress((yield* HttpServer.HttpServer).address)
    const files = Object.fromEntries(EXAMPLE_MODELS.map((model) => [model.name, `${baseUrl}${exampleModelPath(model)}`]))
    yield* Console.log(JSON.stringify({ message: "serving the example models until SIGINT or SIGTERM", baseUrl, files }))
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(NodeHttpServer.layer(createServer, { port, host: HOST })),
    Effect.catchIf((error) => error instanceof ServeError, reportListenFailure(port))
  )

const PortNumber = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }))

export const serveFixtures = Command.make(
  "serve-fixtures",
  {
    port: Flag.Int("port").pipe(
      Flag.withSchema(PortNumber),
      Flag.withDescription(`The port on ${HOST} (default ${DEFAULT_FIXTURES_PORT}; 0: any free one)`),
      Flag.withDefault(DEFAULT_FIXTURES_PORT)
    )
  },
  ({ port }) => serve(port)
).pipe(Command.withDescription(
  `Serve the example model files (${EXAMPLE_MODELS.map((model) => model.name).join(", ")}) on ${HOST} for the docs' walkthrough, until SIGINT or SIGTERM`
))
