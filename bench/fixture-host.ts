/**
 * What the service under benchmark calls out to, as a separate process (so
 * that its work does not share the load generator's event loop):
 *
 *   GET  /models/cube.stl   a small binary STL (a 10 mm cube, 12 triangles, 684 bytes),
 *                           the model file of the part-creation scenario
 *   POST /v1/traces         an OTLP/HTTP sink: reads the export, answers 200
 *   GET  /stats             {"modelDownloads": n, "traceExports": n, "traceBytes": n}
 *
 *   PORT=… node bench/fixture-host.ts
 *
 * Logs "Listening on http://127.0.0.1:PORT" when ready; stops on SIGTERM,
 * SIGINT or when its stdin closes.
 */
import { createServer } from "node:http"
import { binaryStl, box } from "../src/engine/geometry/writers.ts"

export const MODEL_PATH = "/models/cube.stl"
/** What the service computes from the model: the part-creation scenario checks it in every response. */
export const MODEL_GEOMETRY = { volume: 1000, triangleCount: 12 } as const

export interface FixtureStats {
  readonly modelDownloads: number
  readonly traceExports: number
  readonly traceBytes: number
}

const serve = () => {
  const model = Buffer.from(binaryStl(box(10, 10, 10)))
  const stats = { modelDownloads: 0, traceExports: 0, traceBytes: 0 }

  const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    const path = (request.url ?? "/").split("?")[0]
    if (request.method === "GET" && path === MODEL_PATH) {
      stats.modelDownloads += 1
      response.writeHead(200, { "content-type": "application/octet-stream", "content-length": model.length })
      return response.end(model)
    }
    if (request.method === "POST" && path === "/v1/traces") {
      // An empty ExportTraceServiceResponse: success, nothing rejected.
      request.on("data", (chunk: Buffer) => {
        stats.traceBytes += chunk.length
      })
      request.on("end", () => {
        stats.traceExports += 1
        const type = request.headers["content-type"]?.includes("json") ? "application/json" : "application/x-protobuf"
        const body = type === "application/json" ? "{}" : ""
        response.writeHead(200, { "content-type": type, "content-length": Buffer.byteLength(body) })
        response.end(body)
      })
      return
    }
    if (request.method === "GET" && path === "/stats") {
      const body = JSON.stringify(stats)
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      return response.end(body)
    }
    response.writeHead(404, { "content-type": "text/plain" }).end("not found")
  })

  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    server.close()
    server.closeAllConnections()
    process.exit(0)
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
  process.stdin.on("close", stop)
  process.stdin.on("end", stop)
  process.stdin.resume()

  const port = Number(process.env["PORT"])
  server.listen(port, "127.0.0.1", () => {
    console.log(`Listening on http://127.0.0.1:${port}`)
  })
}

// Serves only when run as the script; the benchmark imports the constants above.
if (import.meta.main) serve()
