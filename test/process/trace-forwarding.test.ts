/**
 * With tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT), a gateway still hands
 * the caller's W3C trace context to a remote engine unchanged, so a traced
 * engine joins the caller's trace: the `traceparent` (and `tracestate`)
 * header of a REST call, or the one an MCP request carries in `_meta`.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mcpToolCall } from "../support/mcp.ts"
import { type ServiceProcess, startService } from "../support/processes.ts"

const ADMIN_TOKEN = "trace-forwarding-admin-token-0123"

interface EngineCall {
  readonly url: string
  readonly headers: Http.IncomingHttpHeaders
}

describe("Trace context to a remote engine, tracing off", () => {
  const seen: Array<EngineCall> = []
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-trace-forwarding-"))
  let engine: Http.Server
  let gateway: ServiceProcess | undefined
  let base = ""

  beforeAll(async () => {
    // A scripted engine: records each operation call, answers an empty result.
    engine = Http.createServer((request, response) => {
      request.resume()
      request.on("end", () => {
        seen.push({ url: request.url ?? "", headers: request.headers })
        // A list answers no records; a read answers the engine's "no such record" (204).
        if ((request.url ?? "").startsWith("/engine/v1/ticket-model")) response.writeHead(200, { "content-type": "application/json" }).end("[]")
        else response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => engine.listen(0, "127.0.0.1", resolve))
    gateway = await startService({
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      DOWNSTREAM_URL: `http://127.0.0.1:${(engine.address() as Net.AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined
    })
    base = gateway.base
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    engine?.close()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }, 30_000)

  const secretValue = async () =>
    (await (await fetch(`${base}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId: "forwarded", ipAddresses: ["0.0.0.0/0"] })
    })).json() as { value: string }).value

  it("forwards a REST call's traceparent and tracestate unchanged; sends none when the caller sent none", async () => {
    const secret = await secretValue()
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    const tracestate = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
    const reply = await fetch(`${base}/v1/customer/abc`, { headers: { authorization: secret, traceparent, tracestate } })
    expect(reply.status).toBe(200)
    const call = seen.at(-1)!
    expect(call.url).toBe("/engine/v1/customer/abc")
    expect(call.headers["traceparent"]).toBe(traceparent)
    expect(call.headers["tracestate"]).toBe(tracestate)

    expect((await fetch(`${base}/v1/customer/abc`, { headers: { authorization: secret } })).status).toBe(200)
    expect(seen.at(-1)!.headers["traceparent"]).toBeUndefined()

    // An invalid trace context (all-zero trace id, version ff, not hex) is not passed on.
    for (const invalid of [`00-${"0".repeat(32)}-00f067aa0ba902b7-01`, "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-xyz-abc-01"]) {
      expect((await fetch(`${base}/v1/customer/abc`, { headers: { authorization: secret, traceparent: invalid, tracestate } })).status).toBe(200)
      expect(seen.at(-1)!.headers["traceparent"], invalid).toBeUndefined()
      expect(seen.at(-1)!.headers["tracestate"], invalid).toBeUndefined()
    }
  }, 30_000)

  it("forwards the trace context of an MCP request's _meta", async () => {
    const secret = await secretValue()
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    const reply = await mcpToolCall(base, secret, "list_parts", {}, { traceparent, tracestate: "vendor=value" })
    expect(reply.status, await reply.clone().text()).toBe(200)
    const call = seen.at(-1)!
    expect(call.url).toBe("/engine/v1/ticket-model")
    expect(call.headers["traceparent"]).toBe(traceparent)
    expect(call.headers["tracestate"]).toBe("vendor=value")
  }, 30_000)
})
