/**
 * Traces as an SRE reads them: a local OTLP/HTTP receiver gets the spans of
 * a real gateway. One server span per request with the HTTP semantic
 * conventions, app and secret ids, the client's trace continued, child spans
 * for the secret check, the meter and the engine call; never a secret.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ServiceProcess, startService } from "../support/processes.ts"

const ADMIN_TOKEN = "telemetry-admin-token-0123456789"

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ key: string; value: Record<string, unknown> }>
}

const attribute = (span: Span, key: string) => {
  const found = span.attributes.find((a) => a.key === key)
  return found === undefined ? undefined : Object.values(found.value)[0]
}

describe("OpenTelemetry traces", () => {
  const received: Array<string> = []
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-otel-"))
  let receiver: Http.Server
  let gateway: ServiceProcess | undefined
  let base = ""

  beforeAll(async () => {
    receiver = Http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (request.url === "/v1/traces") received.push(body)
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const otlpPort = (receiver.address() as Net.AddressInfo).port
    gateway = await startService({
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlpPort}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "gateway-under-test"
    })
    base = gateway.base
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    receiver?.close()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }, 30_000)

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
        (JSON.parse(body).resourceSpans ?? []).flatMap((r: { scopeSpans: Array<{ spans: Array<Span> }> }) =>
          r.scopeSpans.flatMap((s) => s.spans))
      ).filter((span: Span) => span.traceId === traceId)
      if (spans.some((s) => s.name === "Downstream.invoke") && spans.some((s) => s.kind === 2)) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const server = spans.find((span) => span.kind === 2)
    expect(server, JSON.stringify(spans.map((s) => s.name))).toBeDefined()
    expect(server!.parentSpanId).toBe("00f067aa0ba902b7")
    expect(attribute(server!, "http.request.method")).toBe("GET")
    expect(attribute(server!, "http.route")).toBe("/v1/customer/:id")
    expect(attribute(server!, "url.path")).toBe("/v1/customer/missing-id")
    expect(Number(attribute(server!, "http.response.status_code"))).toBe(200)
    expect(attribute(server!, "client.address")).toBeDefined()
    expect(attribute(server!, "app.id")).toBe("traced")
    expect(attribute(server!, "secret.id")).toBe(secret.id)

    const names = spans.map((span) => span.name)
    for (const child of ["IncomingSecret.verify", "Meter.record", "Downstream.invoke"]) expect(names).toContain(child)
    const downstream = spans.find((span) => span.name === "Downstream.invoke")!
    expect(attribute(downstream, "downstream.operation")).toBe("customer.get")
    // The engine's work, and its SQL, belong to the same trace, under the Downstream call.
    const engine = spans.find((span) => span.name === "engine customer.get")
    expect(engine?.parentSpanId, JSON.stringify(names)).toBe(downstream.spanId)
    expect(spans.some((span) => span.parentSpanId === engine!.spanId), "a SQL span under the engine").toBe(true)

    const everything = received.join("\n")
    expect(everything).not.toContain(secret.value.split(".")[1])
    expect(everything).toContain("gateway-under-test")
  }, 30_000)
})
