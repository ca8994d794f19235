/**
 * The model file metrics come from the process that runs the engine. With
 * the engine on its own (`node src/engineMain.ts`, OTEL_* set) behind a
 * gateway (DOWNSTREAM_URL), the engine's OTLP export (`service.name`
 * mfg-engine) carries the download and the analysis of a part's model, and
 * the gateway's carries its Downstream call and no model metric.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { startNodeServer } from "../support/processes.ts"

const ADMIN_TOKEN = "engine-metrics-admin-token-012345"
const MODEL = binaryStl(box(10, 10, 10))
/** Two embedded databases open at once on a loaded machine take a while. */
const STARTUP_TIMEOUT_MS = 90_000

type Attributes = ReadonlyArray<{ key: string; value: Record<string, unknown> }>

interface DataPoint {
  readonly attributes?: Attributes
  readonly count?: number | string
  readonly sum?: number
}

interface ResourceMetrics {
  readonly resource?: { readonly attributes?: Attributes }
  readonly scopeMetrics: ReadonlyArray<{ readonly metrics: ReadonlyArray<{ name: string; histogram?: { dataPoints: ReadonlyArray<DataPoint> } }> }>
}

const valueOf = (attributes: Attributes | undefined, key: string) => {
  const found = attributes?.find((a) => a.key === key)
  return found === undefined ? undefined : Object.values(found.value)[0]
}

const listen = async (server: Http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return (server.address() as Net.AddressInfo).port
}

describe("Model file metrics from the engine on its own", () => {
  const exports: Array<ResourceMetrics> = []
  const engineDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-engine-metrics-engine-"))
  const gatewayDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-engine-metrics-gateway-"))
  let receiver: Http.Server
  let files: Http.Server
  let filesBase = ""
  let engine: Awaited<ReturnType<typeof startNodeServer>> | undefined
  let gateway: Awaited<ReturnType<typeof startNodeServer>> | undefined

  beforeAll(async () => {
    receiver = Http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (request.url === "/v1/metrics") exports.push(...(JSON.parse(body).resourceMetrics ?? []))
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    files = Http.createServer((request, response) => {
      if (request.url === "/models/cube.stl") {
        response.writeHead(200, { "content-type": "application/octet-stream", "content-length": MODEL.length }).end(Buffer.from(MODEL))
      } else {
        response.writeHead(404).end("not found")
      }
    })
    const otlp = `http://127.0.0.1:${await listen(receiver)}`
    filesBase = `http://127.0.0.1:${await listen(files)}`
    const telemetry = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_METRIC_EXPORT_INTERVAL: "250" }
    engine = await startNodeServer("src/engineMain.ts", {
      DATA_DIR: engineDir,
      DATABASE_URL: undefined,
      ENGINE_TOKEN: undefined,
      MODEL_FETCH_ALLOW_PRIVATE: "true",
      ...telemetry,
      OTEL_SERVICE_NAME: undefined
    }, { timeoutMs: STARTUP_TIMEOUT_MS })
    gateway = await startNodeServer("src/main.ts", {
      DATA_DIR: gatewayDir,
      DATABASE_URL: undefined,
      ENGINE_TOKEN: undefined,
      DOWNSTREAM_URL: `http://127.0.0.1:${engine.port}`,
      ADMIN_TOKEN,
      MODEL_FETCH_ALLOW_PRIVATE: "true",
      ...telemetry,
      OTEL_SERVICE_NAME: "gateway-of-remote-engine"
    }, { timeoutMs: STARTUP_TIMEOUT_MS })
  }, 2 * STARTUP_TIMEOUT_MS + 10_000)

  afterAll(async () => {
    await gateway?.stop()
    await engine?.stop()
    receiver?.close()
    files?.close()
    for (const dir of [engineDir, gatewayDir]) Fs.rmSync(dir, { recursive: true, force: true })
  }, 30_000)

  /** The count of `name`'s points in the latest export of `service` that has them (metrics are cumulative). */
  const countIn = (service: string, name: string, where: Record<string, string> = {}) => {
    for (let i = exports.length - 1; i >= 0; i--) {
      const exported = exports[i]!
      if (valueOf(exported.resource?.attributes, "service.name") !== service) continue
      const points = exported.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.name === name)
        .flatMap((metric) => metric.histogram?.dataPoints ?? [])
      if (points.length === 0) continue
      return points.filter((point) => Object.entries(where).every(([key, value]) => String(valueOf(point.attributes, key)) === value))
        .reduce((total, point) => total + Number(point.count ?? 0), 0)
    }
    return 0
  }

  /** `countIn`, once it reaches `atLeast` (bounded wait). */
  const countReaching = async (atLeast: number, service: string, name: string, where: Record<string, string> = {}) => {
    for (let attempt = 0; attempt < 60 && countIn(service, name, where) < atLeast; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    return countIn(service, name, where)
  }

  it("the engine's export times the download and the analysis; the gateway's, its Downstream call", async () => {
    const base = gateway!.base
    const secret = (await (await fetch(`${base}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId: "remote-models", ipAddresses: ["0.0.0.0/0"] })
    })).json() as { value: string }).value
    const post = async (path: string, body: unknown) => {
      const reply = await fetch(`${base}/v1${path}`, {
        method: "POST",
        headers: { authorization: secret, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const text = await reply.text()
      expect(reply.status, `${path}: ${text}`).toBe(200)
      return JSON.parse(text) as { id: string }
    }
    const customer = await post("/customer", { name: "Acme", email: "buyer@acme.example" })
    const project = await post("/project", { customerId: customer.id, name: "Gearbox" })
    const ticket = await post("/ticket", { projectId: project.id, name: "Prototype run" })
    const material = await post("/material", { name: "PLA", technologyId: "fdm" })
    await post("/ticket-model", {
      ticketId: ticket.id,
      modelEndpoint: { url: `${filesBase}/models/cube.stl` },
      technologyId: "fdm",
      materialId: material.id,
      quantity: 1
    })

    expect(await countReaching(1, "mfg-engine", "model.download.duration")).toBeGreaterThanOrEqual(1)
    expect(await countReaching(1, "mfg-engine", "model.analysis.duration")).toBeGreaterThanOrEqual(1)
    const created = { "downstream.operation": "ticketModel.create" }
    expect(await countReaching(1, "gateway-of-remote-engine", "downstream.call.duration", created)).toBeGreaterThanOrEqual(1)
    expect(countIn("gateway-of-remote-engine", "model.download.duration")).toBe(0)
  }, 60_000)
})
