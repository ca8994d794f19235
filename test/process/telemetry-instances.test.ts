/**
 * Two gateways exporting to one OTLP/HTTP receiver (protobuf, decoded with
 * the official protos), as an SRE runs them: each is its own series
 * (`service.instance.id`), the standard OTEL_* variables work (headers,
 * sampler, resource attributes, a signal's own endpoint), server spans are
 * named by route with the status the HTTP conventions give, an idle instance
 * exports no span, and an export that fails is counted and said.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mcpToolCall } from "../support/mcp.ts"
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlpReceiver.ts"
import { freePort, type ServiceProcess, startService } from "../support/processes.ts"

const ADMIN_TOKEN = "telemetry-instances-admin-token"
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Trace ids whose lower 56 bits are below, and above, half of 2^56: `traceidratio` at 0.5 keeps the first, drops the second. */
const KEPT_TRACE = "0af7651916cd43dd8448eb211c000001"
const DROPPED_TRACE = "0af7651916cd43dd84fffffffffffff0"
/** A trace whose caller did not sample it (flags 00): `always_on` records it all the same. */
const UNSAMPLED_TRACE = "1bf7651916cd43dd8448eb211c80319c"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits (bounded) until `check` holds, and returns its last value. */
const until = async <A>(read: () => A, check: (value: A) => boolean, timeoutMs = 15_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let value = read()
  while (!check(value) && Date.now() < deadline) {
    await sleep(200)
    value = read()
  }
  return value
}

describe("telemetry of two instances on one receiver", () => {
  const dirs = [0, 1].map(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-otel-two-")))
  let receiver: OtlpReceiver
  /** Gateway B's spans only (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): stopped at the end. */
  let tracesOfB: OtlpReceiver
  let a: ServiceProcess
  let b: ServiceProcess

  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    tracesOfB = await startOtlpReceiver()
    const common = { ADMIN_TOKEN, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRIC_EXPORT_INTERVAL: "500" }
    ;[a, b] = await Promise.all([
      startService({
        ...common,
        DATA_DIR: dirs[0],
        OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=eu1,x-api-key=key%20one",
        OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-tenant=metrics-eu1",
        OTEL_TRACES_SAMPLER: "always_on",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,service.namespace=shop%20floor"
      }),
      startService({
        ...common,
        DATA_DIR: dirs[1],
        OTEL_SERVICE_NAME: "gateway-b",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${tracesOfB.url}/v1/traces`,
        OTEL_TRACES_SAMPLER: "traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.5",
        // An engine that is not there: every API call of B is a 5xx.
        DOWNSTREAM_URL: `http://127.0.0.1:${await freePort()}`
      })
    ])
  }, 90_000)

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await Promise.all([receiver?.stop(), tracesOfB?.stop()])
    for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
  }, 30_000)

  const secretOf = async (gateway: ServiceProcess, appId: string) =>
    (await (await fetch(`${gateway.base}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId, ipAddresses: ["0.0.0.0/0"] })
    })).json() as { value: string }).value

  const inTrace = (spans: ReadonlyArray<ReceivedSpan>, traceId: string) => spans.filter((span) => span.traceId === traceId)

  it("exports each instance as its own resource, with the headers, names, statuses and sampling the variables ask for", async () => {
    const [secretA, secretB] = await Promise.all([secretOf(a, "app-a"), secretOf(b, "app-b")])

    // A: a read (200), a replace of a missing record (404), a refused secret (401), an MCP tool call; a caller's unsampled trace.
    const read = await fetch(`${a.base}/v1/customer/c-1`, {
      headers: { authorization: secretA, traceparent: `00-${UNSAMPLED_TRACE}-00f067aa0ba902b7-00` }
    })
    expect(read.status).toBe(200)
    const missing = await fetch(`${a.base}/v1/customer/missing`, {
      method: "PUT",
      headers: { authorization: secretA, "content-type": "application/json" },
      body: JSON.stringify({ name: "Acme", email: "buyer@acme.example" })
    })
    expect(missing.status).toBe(404)
    expect((await fetch(`${a.base}/v1/customer/c-1`, { headers: { authorization: "not-a-secret" } })).status).toBe(401)
    expect((await mcpToolCall(a.base, secretA, "list_parts", {})).status).toBe(200)
    // B: two sampled callers' traces, one its ratio keeps and one it drops; its engine is not there (5xx).
    for (const traceId of [KEPT_TRACE, DROPPED_TRACE]) {
      const failed = await fetch(`${b.base}/v1/customer/c-1`, { headers: { authorization: secretB, traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })
      expect(failed.status).toBeGreaterThanOrEqual(500)
    }

    // Two instances, two resources: each its own service.instance.id, the package's version, the namespace.
    const points = await until(
      () => receiver.exports.filter((each) => each.path === "/v1/metrics").flatMap((each) => each.points),
      (all) =>
        new Set(all.map((point) => point.resource["service.instance.id"])).size >= 2 &&
        all.some((point) => point.metric === "http.server.request.duration" && point.resource["service.name"] === "mfg-public-api")
    )
    const byName = new Map(points.map((point) => [point.resource["service.name"], point.resource]))
    const resourceA = byName.get("mfg-public-api")
    const resourceB = byName.get("gateway-b")
    expect(resourceA, JSON.stringify([...byName.keys()])).toBeDefined()
    expect(resourceB).toBeDefined()
    expect(String(resourceA!["service.instance.id"])).toMatch(UUID)
    expect(String(resourceB!["service.instance.id"])).toMatch(UUID)
    expect(resourceA!["service.instance.id"]).not.toBe(resourceB!["service.instance.id"])
    expect(resourceA).toMatchObject({ "service.version": "1.0.0", "service.namespace": "shop floor", "deployment.environment.name": "test" })
    expect(resourceB).toMatchObject({ "service.version": "1.0.0", "service.namespace": "mfg" })
    // Each instance's request counts are its own series.
    const requestsOf = (instance: unknown) =>
      points.filter((point) => point.metric === "http.server.request.duration" && point.resource["service.instance.id"] === instance)
    expect(requestsOf(resourceA!["service.instance.id"]).length).toBeGreaterThan(0)

    // The headers of OTEL_EXPORTER_OTLP_HEADERS on every export, a signal's own over them; none from B, which set none.
    // Traces and metrics are exported on their own schedules: wait for both of A's.
    const exportsOfA = await until(
      () => receiver.exports.filter((each) => each.resources.some((r) => r["service.instance.id"] === resourceA!["service.instance.id"])),
      (all) => all.some((each) => each.path === "/v1/traces") && all.some((each) => each.path === "/v1/metrics")
    )
    const tracesOfA = exportsOfA.filter((each) => each.path === "/v1/traces")
    const metricsOfA = exportsOfA.filter((each) => each.path === "/v1/metrics")
    expect(tracesOfA.length).toBeGreaterThan(0)
    expect(metricsOfA.length).toBeGreaterThan(0)
    for (const each of tracesOfA) expect(each.headers).toMatchObject({ "x-tenant": "eu1", "x-api-key": "key one" })
    for (const each of metricsOfA) expect(each.headers).toMatchObject({ "x-tenant": "metrics-eu1", "x-api-key": "key one" })
    expect(
      receiver.exports.filter((each) => each.resources.some((r) => r["service.name"] === "gateway-b")).every((each) => each.headers["x-tenant"] === undefined)
    )
      .toBe(true)

    // Server spans named by their route; a 2xx and a 4xx leave the status unset.
    const spansOfA = await until(() => receiver.spans(), (all) => all.some((span) => span.name === "tools/call list_parts"))
    const server = (name: string, status: number) =>
      spansOfA.find((span) => span.kind === 2 && span.name === name && span.attributes["http.response.status_code"] === status)
    const get = server("GET /v1/customer/{id}", 200)
    expect(get, JSON.stringify(spansOfA.filter((span) => span.kind === 2).map((span) => span.name))).toBeDefined()
    expect(get!.attributes["http.route"]).toBe("/v1/customer/{id}")
    expect(get!.status).toBe(0)
    expect(server("PUT /v1/customer/{id}", 404)?.status).toBe(0)
    expect(server("GET /v1/customer/{id}", 401)?.status).toBe(0)
    expect(server("POST /v1/mcp", 200)?.status).toBe(0)
    // The MCP call: the method and the tool, as the MCP semantic conventions name them.
    const tool = spansOfA.find((span) => span.name === "tools/call list_parts")!
    expect(tool.attributes).toMatchObject({ "mcp.method.name": "tools/call", "gen_ai.tool.name": "list_parts" })
    // The engine's span keeps its operation's name; the embedded database's statements claim no TCP server.
    expect(spansOfA.some((span) => span.name === "engine customer.get")).toBe(true)
    const statements = spansOfA.filter((span) => span.attributes["db.system.name"] !== undefined)
    expect(statements.length).toBeGreaterThan(0)
    for (const statement of statements) {
      expect(statement.attributes["server.address"]).toBeUndefined()
      expect(statement.attributes["server.port"]).toBeUndefined()
    }
    // always_on: the caller's unsampled trace is recorded all the same.
    expect(inTrace(spansOfA, UNSAMPLED_TRACE).some((span) => span.kind === 2)).toBe(true)

    // B: traceidratio 0.5 keeps the trace whose id says so and drops the other; its 5xx is an error.
    const spansOfB = await until(() => tracesOfB.spans(), (all) => inTrace(all, KEPT_TRACE).some((span) => span.kind === 2))
    const failed = inTrace(spansOfB, KEPT_TRACE).find((span) => span.kind === 2)
    expect(failed?.name).toBe("GET /v1/customer/{id}")
    expect(failed?.status).toBe(2)
    expect(failed?.resource["service.name"]).toBe("gateway-b")
    expect(inTrace(spansOfB, DROPPED_TRACE)).toEqual([])
    expect(inTrace(receiver.spans(), KEPT_TRACE)).toEqual([])
  }, 60_000)

  it("exports no span while the instances are idle", async () => {
    // What the calls above left (meter outcomes, webhook fan-out) is exported within a second or two.
    await sleep(3_000)
    const from = Date.now()
    await sleep(10_000)
    const idle = [...receiver.spans(), ...tracesOfB.spans()].filter((span) => span.receivedAt > from + 1_000)
    expect(idle.filter((span) => span.parentSpanId === "").map((span) => `${span.resource["service.name"]}: ${span.name}`)).toEqual([])
  }, 30_000)

  it("counts and says the exports that fail while a receiver is down", async () => {
    const instanceB = () =>
      receiver.exports.flatMap((each) => each.points).find((point) => point.resource["service.name"] === "gateway-b")?.resource["service.instance.id"]
    await tracesOfB.stop()
    // A call in a trace B's sampler keeps makes spans to export; their export finds no receiver.
    await fetch(`${b.base}/v1/customer/c-1`, { headers: { authorization: "not-a-secret", traceparent: `00-${KEPT_TRACE}-00f067aa0ba902b7-01` } })
    const failures = await until(
      () =>
        receiver.exports.filter((each) => each.path === "/v1/metrics").flatMap((each) => each.points).filter((point) =>
          point.metric === "telemetry.export.failures" && point.resource["service.instance.id"] === instanceB()
        ),
      (found) => found.length > 0,
      20_000
    )
    expect(failures[0]?.attributes).toMatchObject({ signal: "traces", "error.type": "unreachable" })
    expect(failures[0]!.value).toBeGreaterThanOrEqual(1)
    const warnings = b.output().split("\n").filter((line) => line.includes("telemetry export failed")).map((line) => JSON.parse(line))
    expect(warnings.length).toBe(1)
    expect(warnings[0]).toMatchObject({ level: "WARN", signal: "traces", endpoint: `${tracesOfB.url}/v1/traces`, reason: "connection refused" })
  }, 40_000)
})
