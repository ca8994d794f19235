/**
 * Traces and metrics as an SRE reads them: a local OTLP/HTTP receiver gets
 * the spans and metrics of a real gateway. One server span per request with
 * the HTTP semantic conventions, app and secret ids, the client's trace
 * continued (header, or MCP `_meta`), child spans for the secret check, the
 * meter, the engine call and a model download; the request, authentication,
 * meter flush, downstream call and error, rate limit, SQL pool and model
 * file metrics; never a secret.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { mcpToolCall } from "../support/mcp.ts"
import { type ServiceProcess, startService } from "../support/processes.ts"

const ADMIN_TOKEN = "telemetry-admin-token-0123456789"

type Attributes = ReadonlyArray<{ key: string; value: Record<string, unknown> }>

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: Attributes
  readonly links?: ReadonlyArray<{ traceId: string; spanId: string }>
  readonly status?: { code?: number; message?: string }
}

interface DataPoint {
  readonly attributes?: Attributes
  readonly count?: number | string
  readonly asDouble?: number
  readonly asInt?: number | string
}

interface MetricData {
  readonly name: string
  readonly unit?: string
  readonly histogram?: { dataPoints: ReadonlyArray<DataPoint> }
  readonly sum?: { dataPoints: ReadonlyArray<DataPoint> }
  readonly gauge?: { dataPoints: ReadonlyArray<DataPoint> }
}

const valueOf = (attributes: Attributes | undefined, key: string) => {
  const found = attributes?.find((a) => a.key === key)
  return found === undefined ? undefined : Object.values(found.value)[0]
}

const attribute = (span: Span, key: string) => valueOf(span.attributes, key)

/** A data point's value: a histogram's count, a sum's value. */
const pointValue = (point: DataPoint) => Number(point.count ?? point.asDouble ?? point.asInt ?? 0)

const MODEL = binaryStl(box(10, 10, 10))
/** A file no model reader accepts: its analysis fails. */
const NOT_A_MODEL = "<!DOCTYPE html><html><body>Please sign in</body></html>"
const QUERY_TOKEN = "sig-0123456789abcdef-query-token"
const STATE = "vendor=opaque-state"

describe("OpenTelemetry traces and metrics", () => {
  const received: Array<string> = []
  const receivedMetrics: Array<string> = []
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-otel-"))
  let receiver: Http.Server
  let files: Http.Server
  let filesBase = ""
  let gateway: ServiceProcess | undefined
  let base = ""

  const listen = async (server: Http.Server) => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return (server.address() as Net.AddressInfo).port
  }

  beforeAll(async () => {
    receiver = Http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (request.url === "/v1/traces") received.push(body)
        if (request.url === "/v1/metrics") receivedMetrics.push(body)
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    // The model files' host: one STL, one page that is no model; anything else is a 404.
    files = Http.createServer((request, response) => {
      const path = (request.url ?? "").split("?")[0]
      if (path === "/models/cube.stl") {
        response.writeHead(200, { "content-type": "application/octet-stream", "content-length": MODEL.length }).end(Buffer.from(MODEL))
      } else if (path === "/models/login.stl") {
        response.writeHead(200, { "content-type": "text/html" }).end(NOT_A_MODEL)
      } else {
        response.writeHead(404).end("not found")
      }
    })
    const otlpPort = await listen(receiver)
    filesBase = `http://127.0.0.1:${await listen(files)}`
    gateway = await startService({
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlpPort}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "gateway-under-test",
      OTEL_METRIC_EXPORT_INTERVAL: "250",
      MODEL_FETCH_ALLOW_PRIVATE: "true"
    })
    base = gateway.base
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    receiver?.close()
    files?.close()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }, 30_000)

  const createSecret = async (appId: string) =>
    await (await fetch(`${base}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId, ipAddresses: ["0.0.0.0/0"] })
    })).json() as { id: string; value: string }

  const call = async (secret: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const reply = await fetch(`${base}/v1${path}`, {
      method,
      headers: { authorization: secret, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await reply.text()
    return { status: reply.status, text, json: () => JSON.parse(text) }
  }

  const allSpans = (): Array<Span> =>
    received.flatMap((body) =>
      (JSON.parse(body).resourceSpans ?? []).flatMap((r: { scopeSpans: Array<{ spans: Array<Span> }> }) => r.scopeSpans.flatMap((s) => s.spans))
    )

  /** Waits (bounded) until the exported spans satisfy `done`. */
  const spansUntil = async (done: (spans: ReadonlyArray<Span>) => boolean) => {
    let spans = allSpans()
    for (let attempt = 0; attempt < 60 && !done(spans); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      spans = allSpans()
    }
    return spans
  }

  /** The gateway's request log line that `matches` (stdout and stderr hold JSON lines only). */
  const logLine = (matches: (line: Record<string, unknown>) => boolean) =>
    gateway!.output().split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === "request" && matches(line))

  /** The data points of `name` in the latest export that has them (metrics are cumulative). */
  const latestPoints = (name: string): ReadonlyArray<DataPoint> => {
    for (let i = receivedMetrics.length - 1; i >= 0; i--) {
      const metrics: Array<MetricData> = (JSON.parse(receivedMetrics[i]!).resourceMetrics ?? []).flatMap((r: {
        scopeMetrics: Array<{ metrics: Array<MetricData> }>
      }) => r.scopeMetrics.flatMap((s) => s.metrics))
      const found = metrics.filter((metric) => metric.name === name)
      if (found.length > 0) {
        return found.flatMap((metric) => [...(metric.histogram?.dataPoints ?? []), ...(metric.sum?.dataPoints ?? []), ...(metric.gauge?.dataPoints ?? [])])
      }
    }
    return []
  }

  const metricUnit = (name: string) => {
    for (const body of receivedMetrics) {
      for (const r of JSON.parse(body).resourceMetrics ?? []) {
        for (const s of r.scopeMetrics) for (const metric of s.metrics as Array<MetricData>) if (metric.name === name) return metric.unit
      }
    }
    return undefined
  }

  /** `name`'s points whose attributes include `where` (an undefined value: the attribute is absent). */
  const pointsWhere = (name: string, where: Record<string, string | undefined>) =>
    latestPoints(name).filter((point) =>
      Object.entries(where).every(([key, value]) => {
        const found = valueOf(point.attributes, key)
        return value === undefined ? found === undefined : String(found) === value
      })
    )

  /** The total of `name`'s points whose attributes include `where`, once it reaches `atLeast` (bounded wait). */
  const metricTotal = async (name: string, where: Record<string, string | undefined>, atLeast: number) => {
    const total = () => pointsWhere(name, where).reduce((sum, point) => sum + pointValue(point), 0)
    for (let attempt = 0; attempt < 60 && total() < atLeast; attempt++) await new Promise((resolve) => setTimeout(resolve, 250))
    return total()
  }

  /** The sum of the values a histogram recorded in `name`'s points matching `where`, once it reaches `atLeast` (bounded wait). */
  const histogramSum = async (name: string, where: Record<string, string | undefined>, atLeast: number) => {
    const sum = () => pointsWhere(name, where).reduce((total, point) => total + Number((point as { sum?: number }).sum ?? 0), 0)
    for (let attempt = 0; attempt < 60 && sum() < atLeast; attempt++) await new Promise((resolve) => setTimeout(resolve, 250))
    return sum()
  }

  it("exports the request's span tree, continuing the client's trace, without the secret", async () => {
    const secret = await (await fetch(`${base}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId: "traced", ipAddresses: ["0.0.0.0/0"] })
    })).json() as { id: string; value: string }
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const reply = await fetch(`${base}/v1/customer/missing-id`, {
      headers: { authorization: secret.value, traceparent: `00-${traceId}-00f067aa0ba902b7-01` }
    })
    expect(reply.status).toBe(200)

    // Spans are exported in batches: wait (bounded) for the request's tree.
    let spans: Array<Span> = []
    for (let attempt = 0; attempt < 40; attempt++) {
      spans = received.flatMap((body) =>
        (JSON.parse(body).resourceSpans ?? []).flatMap((r: { scopeSpans: Array<{ spans: Array<Span> }> }) => r.scopeSpans.flatMap((s) => s.spans))
      ).filter((span: Span) => span.traceId === traceId)
      if (spans.some((s) => s.name === "Downstream.call") && spans.some((s) => s.kind === 2)) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const server = spans.find((span) => span.kind === 2)
    expect(server, JSON.stringify(spans.map((s) => s.name))).toBeDefined()
    expect(server!.parentSpanId).toBe("00f067aa0ba902b7")
    expect(attribute(server!, "http.request.method")).toBe("GET")
    expect(attribute(server!, "http.route")).toBe("/v1/customer/{id}")
    expect(server!.name).toBe("GET /v1/customer/{id}")
    expect(attribute(server!, "url.path")).toBe("/v1/customer/missing-id")
    expect(Number(attribute(server!, "http.response.status_code"))).toBe(200)
    expect(attribute(server!, "client.address")).toBeDefined()
    expect(attribute(server!, "app.id")).toBe("traced")
    expect(attribute(server!, "secret.id")).toBe(secret.id)

    const names = spans.map((span) => span.name)
    for (const child of ["IncomingSecret.verify", "Meter.record", "Downstream.call"]) expect(names).toContain(child)
    const downstream = spans.find((span) => span.name === "Downstream.call")!
    expect(attribute(downstream, "downstream.operation")).toBe("customer.get")
    // The engine's work, and its SQL, belong to the same trace, under the Downstream call.
    const engine = spans.find((span) => span.name === "engine customer.get")
    expect(engine?.parentSpanId, JSON.stringify(names)).toBe(downstream.spanId)
    expect(spans.some((span) => span.parentSpanId === engine!.spanId), "a SQL span under the engine").toBe(true)

    const everything = received.join("\n")
    expect(everything).not.toContain(secret.value.split(".")[1])
    expect(everything).toContain("gateway-under-test")

    // The request's log line names the server span.
    expect(logLine((line) => line.traceId === traceId)).toMatchObject({ spanId: server!.spanId, route: "/v1/customer/:id", status: 200 })
  }, 30_000)
  it("exports request, authentication, meter flush, downstream call and downstream error metrics; a 401's cause never in the answer", async () => {
    const secret = await createSecret("metered")
    expect((await call(secret.value, "GET", "/customer/missing-id")).status).toBe(200)
    expect((await call(secret.value, "GET", "/customer/missing-id")).status).toBe(200)
    // A wrong random part and a malformed header: the same 401, two different causes inside.
    const wrong = await call(`${secret.id}.${"A".repeat(43)}`, "GET", "/customer/missing-id")
    const malformed = await call("not a secret", "GET", "/customer/missing-id")
    for (const refused of [wrong, malformed]) {
      expect(refused.status).toBe(401)
      expect(refused.json()).toEqual({ code: 401, message: "Not Authorized" })
      expect(refused.text).not.toMatch(/wrong|malformed|cause/i)
    }
    // The engine refuses to replace a missing record: a downstream error from `engine`.
    const missing = await call(secret.value, "PUT", "/customer/missing-id", { name: "Acme", email: "buyer@acme.example" })
    expect(missing.status).toBe(404)

    const route = { "http.route": "/v1/customer/{id}", "http.request.method": "GET" }
    expect(await metricTotal("http.server.request.duration", { ...route, "http.response.status_code": "200" }, 2)).toBeGreaterThanOrEqual(2)
    expect(await metricTotal("http.server.request.duration", { ...route, "http.response.status_code": "401" }, 2)).toBeGreaterThanOrEqual(2)
    expect(metricUnit("http.server.request.duration")).toBe("s")
    expect(await metricTotal("auth.failures", { "auth.failure.cause": "wrong-secret" }, 1)).toBeGreaterThanOrEqual(1)
    expect(await metricTotal("auth.failures", { "auth.failure.cause": "malformed" }, 1)).toBeGreaterThanOrEqual(1)
    expect(await metricTotal("downstream.errors", { "error.source": "engine", "http.response.status_code": "404" }, 1))
      .toBeGreaterThanOrEqual(1)
    // Every Downstream call is timed by operation; a failed one names its source.
    expect(await metricTotal("downstream.call.duration", { "downstream.operation": "customer.get", "error.source": undefined }, 2))
      .toBeGreaterThanOrEqual(2)
    expect(await metricTotal("downstream.call.duration", { "downstream.operation": "customer.replace", "error.source": "engine" }, 1))
      .toBeGreaterThanOrEqual(1)
    expect(metricUnit("downstream.call.duration")).toBe("s")
    // Every metered call waited for a flush: at least 3 calls were flushed.
    const flushed = await (async () => {
      for (let attempt = 0; attempt < 60; attempt++) {
        const points = latestPoints("meter.flush.size")
        const calls = points.reduce((sum, point) => sum + Number((point as { sum?: number }).sum ?? 0), 0)
        if (calls >= 3) return calls
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      return 0
    })()
    expect(flushed).toBeGreaterThanOrEqual(3)
    expect(await metricTotal("meter.flush.duration", {}, 1)).toBeGreaterThanOrEqual(1)
    expect(metricUnit("meter.flush.duration")).toBe("s")
    expect(receivedMetrics.join("\n")).not.toContain(secret.value.split(".")[1])

    // The failed engine call's span names its source.
    const spans = await spansUntil((all) => all.some((span) => attribute(span, "downstream.operation") === "customer.replace"))
    const replace = spans.find((span) => attribute(span, "downstream.operation") === "customer.replace")
    expect(replace && attribute(replace, "error.source")).toBe("engine")
    // The meter's flushes have spans of their own (one flush serves many calls), with the batch size.
    const flush = (await spansUntil((all) => all.some((span) => span.name === "Meter.flush"))).find((span) => span.name === "Meter.flush")
    expect(Number(flush && attribute(flush, "meter.batch_size"))).toBeGreaterThanOrEqual(1)
  }, 30_000)

  it("traces a model download by host, without the URL's query, and fails the span of a failed one; times downloads and analyses by outcome", async () => {
    const secret = await createSecret("downloads")
    const customer = (await call(secret.value, "POST", "/customer", { name: "Acme", email: "buyer@acme.example" })).json()
    const project = (await call(secret.value, "POST", "/project", { customerId: customer.id, name: "Gearbox" })).json()
    const ticket = (await call(secret.value, "POST", "/ticket", { projectId: project.id, name: "Prototype run" })).json()
    const material = (await call(secret.value, "POST", "/material", { name: "PLA", technologyId: "fdm" })).json()
    const part = (url: string, traceId: string) =>
      call(secret.value, "POST", "/ticket-model", {
        ticketId: ticket.id,
        modelEndpoint: { url },
        technologyId: "fdm",
        materialId: material.id,
        quantity: 1
      }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` })

    const okTrace = "5bf92f3577b34da6a3ce929d0e0e4736"
    const created = await part(`${filesBase}/models/cube.stl?token=${QUERY_TOKEN}`, okTrace)
    expect(created.status, created.text).toBe(200)
    const failedTrace = "6bf92f3577b34da6a3ce929d0e0e4736"
    const failed = await part(`${filesBase}/models/missing.stl`, failedTrace)
    expect(failed.status, failed.text).toBe(502)
    const unreadable = await part(`${filesBase}/models/login.stl`, "8bf92f3577b34da6a3ce929d0e0e4736")
    expect(unreadable.status, unreadable.text).toBe(422)

    // The downloads and analyses, timed by outcome, and the bytes downloaded.
    expect(await metricTotal("model.download.duration", { "error.type": undefined }, 2)).toBeGreaterThanOrEqual(2)
    expect(await metricTotal("model.download.duration", { "error.type": "ModelDownloadFailed" }, 1)).toBeGreaterThanOrEqual(1)
    expect(metricUnit("model.download.duration")).toBe("s")
    expect(await histogramSum("model.download.size", {}, MODEL.length + NOT_A_MODEL.length)).toBeGreaterThanOrEqual(MODEL.length + NOT_A_MODEL.length)
    expect(metricUnit("model.download.size")).toBe("By")
    expect(await metricTotal("model.analysis.duration", { "error.type": undefined }, 1)).toBeGreaterThanOrEqual(1)
    expect(await metricTotal("model.analysis.duration", { "error.type": "UnreadableModel" }, 1)).toBeGreaterThanOrEqual(1)
    expect(metricUnit("model.analysis.duration")).toBe("s")

    const spans = await spansUntil((all) =>
      [okTrace, failedTrace].every((traceId) => all.some((span) => span.traceId === traceId && span.name === "model download"))
    )
    const download = spans.find((span) => span.traceId === okTrace && span.name === "model download")
    expect(download, JSON.stringify(spans.filter((span) => span.traceId === okTrace).map((span) => span.name))).toBeDefined()
    expect(attribute(download!, "server.address")).toBe("127.0.0.1")
    expect(Number(attribute(download!, "server.port"))).toBe(Number(new URL(filesBase).port))
    expect(Number(attribute(download!, "model.bytes"))).toBe(MODEL.length)
    expect(Number(attribute(download!, "http.response.status_code"))).toBe(200)
    expect(download!.status?.code ?? 0).not.toBe(2)
    // The download belongs to the request's trace, under the engine's work.
    const engine = spans.find((span) => span.traceId === okTrace && span.name === "engine ticketModel.create")
    expect(engine, JSON.stringify(spans.filter((span) => span.traceId === okTrace).map((span) => span.name))).toBeDefined()

    const failedDownload = spans.find((span) => span.traceId === failedTrace && span.name === "model download")!
    expect(failedDownload.status?.code).toBe(2)
    expect(attribute(failedDownload, "error.type")).toBe("ModelDownloadFailed")
    expect(received.join("\n")).not.toContain(QUERY_TOKEN)
  }, 30_000)

  it("continues the trace an MCP request carries in params._meta when no traceparent header came", async () => {
    const secret = await createSecret("mcp-traced")
    const traceId = "7bf92f3577b34da6a3ce929d0e0e4736"
    const parent = "00f067aa0ba902b7"
    const reply = await mcpToolCall(base, secret.value, "list_parts", {}, { traceparent: `00-${traceId}-${parent}-01`, tracestate: STATE })
    expect(reply.status, await reply.clone().text()).toBe(200)

    const spans = await spansUntil((all) => all.some((span) => span.traceId === traceId && span.name === "Downstream.call"))
    const inTrace = spans.filter((span) => span.traceId === traceId)
    const mcp = inTrace.find((span) => span.name === "tools/call list_parts")
    expect(mcp, JSON.stringify(inTrace.map((span) => span.name))).toBeDefined()
    expect(mcp!.parentSpanId).toBe(parent)
    expect(mcp!.kind).toBe(2)
    expect(attribute(mcp!, "mcp.method.name")).toBe("tools/call")
    expect(attribute(mcp!, "gen_ai.tool.name")).toBe("list_parts")
    // The meter and the engine call run in the continued trace, under the MCP span.
    const tree = JSON.stringify(inTrace.map((span) => [span.name, span.spanId, span.parentSpanId]))
    expect(inTrace.find((span) => span.name === "Meter.record")?.parentSpanId, tree).toBe(mcp!.spanId)
    const ancestors = (span: Span | undefined): Array<string> =>
      span?.parentSpanId === undefined ? [] : [span.parentSpanId, ...ancestors(inTrace.find((s) => s.spanId === span.parentSpanId))]
    expect(ancestors(inTrace.find((span) => span.name === "Downstream.call")), tree).toContain(mcp!.spanId)
    // The tool's Downstream call is timed as a REST call's is.
    expect(await metricTotal("downstream.call.duration", { "downstream.operation": "ticketModel.list" }, 1)).toBeGreaterThanOrEqual(1)
    // The HTTP server span (its own trace: the header brought none) is linked from the MCP span.
    const server = spans.find((span) => span.kind === 2 && attribute(span, "http.route") === "/v1/mcp" && attribute(span, "secret.id") === secret.id)
    expect(server).toBeDefined()
    expect(mcp!.links?.map((link) => link.spanId)).toContain(server!.spanId)
    // The log line carries the continued trace and the MCP span.
    expect(logLine((line) => line.traceId === traceId)).toMatchObject({ spanId: mcp!.spanId, tool: "list_parts", route: "/v1/mcp" })
  }, 30_000)

  it("counts the calls refused over an app's rate limit", async () => {
    const secret = await createSecret("limited")
    const limit = await fetch(`${base}/api/v1/app/limited/rate-limit`, {
      method: "PUT",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ limit: 1, windowSeconds: 3600 })
    })
    expect(limit.status, await limit.text()).toBe(200)
    expect((await call(secret.value, "GET", "/customer/missing-id")).status).toBe(200)
    expect((await call(secret.value, "GET", "/customer/missing-id")).status).toBe(429)
    expect(await metricTotal("rate_limit.refusals", {}, 1)).toBeGreaterThanOrEqual(1)
  }, 30_000)

  it("exports the SQL pool's connections, its maximum and the statements' wait for a connection", async () => {
    const secret = await createSecret("pooled")
    expect((await call(secret.value, "GET", "/customer/missing-id")).status).toBe(200)
    // The embedded database: the SqlClient's pool of 4 connections to its bridge.
    const main = { "db.client.connection.pool.name": "main" }
    expect(await metricTotal("db.client.connection.max", main, 4)).toBe(4)
    expect(await metricTotal("db.client.connection.open", main, 1)).toBeGreaterThanOrEqual(1)
    expect(await metricTotal("db.client.connection.open", main, 1)).toBeLessThanOrEqual(4)
    expect(await metricTotal("db.client.connection.wait_time", main, 1)).toBeGreaterThanOrEqual(1)
    expect(metricUnit("db.client.connection.wait_time")).toBe("s")
    expect(metricUnit("db.client.connection.open")).toBe("{connection}")
  }, 30_000)
})
