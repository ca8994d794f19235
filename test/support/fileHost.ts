/**
 * A local file host for model files: the engine downloads parts' models
 * from it (the tests allow the fetcher to reach 127.0.0.1). Serves `files`
 * by path; `extra` may answer other paths (redirects, slow or endless
 * streams) and returns whether it did; anything else is a 404.
 */
import { Context, Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export class FileHost extends Context.Service<FileHost, {
  readonly url: string
  /** A port where nothing listens: opened, then closed. */
  readonly closedPort: number
}>()("test/FileHost") {}

export type ModelFiles = Readonly<Record<string, Uint8Array | string>>

const listen = (server: Server) =>
  Effect.promise(() => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))))

export const FileHostLive = (
  files: ModelFiles,
  extra: (path: string, request: IncomingMessage, response: ServerResponse) => boolean = () => false
) =>
  Layer.effect(
    FileHost,
    Effect.gen(function*() {
      const server = createServer((request, response) => {
        const path = (request.url ?? "/").split("?")[0]!
        const file = files[path]
        if (file !== undefined) {
          const body = typeof file === "string" ? Buffer.from(file) : Buffer.from(file.buffer, file.byteOffset, file.length)
          response.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length })
          return response.end(body)
        }
        if (extra(path, request, response)) return
        response.writeHead(404, { "content-type": "text/plain" }).end("not found")
      })
      const port = yield* listen(server)
      yield* Effect.addFinalizer(() =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          })
        )
      )
      const spare = createServer()
      const closedPort = yield* listen(spare)
      yield* Effect.promise(() => new Promise<void>((resolve) => spare.close(() => resolve())))
      return FileHost.of({ url: `http://127.0.0.1:${port}`, closedPort })
    })
  )
