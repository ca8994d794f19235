/**
 * The request log as an operator reads it: a real gateway's stdout is JSON,
 * one line per request with the trace id, route, path without its query,
 * status, duration, app and secret ids, the internal cause of a 401, the
 * source of an engine error and the MCP tool; never a secret nor the
 * Authorization header. REQUEST_LOG=false switches the lines off.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mcpToolCall } from "../support/mcp.ts"
import { type ServiceProcess, startService } from "../support/processes.ts"

const ADMIN_TOKEN = "request-log-admin-token-0123456789"
const QUERY_VALUE = "query-value-that-must-not-be-logged"

interface Line {
  readonly time: string
  readonly level: string
  readonly msg: string
  readonly traceId?: string
  readonly spanId?: string
  readonly requestId: string
  readonly method: string
  readonly route?: string
  readonly path: string
  readonly status: number
  readonly durationMs: number
  readonly appId?: string
  readonly secretId?: string
  readonly operation?: string
  readonly tool?: string
  readonly errorSource?: string
  readonly authFailure?: string
}

/** A gateway whose stdout (after start) is kept apart from stderr. */
const startLogged = async (env: Record<string, string>) => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mfg-request-log-"))
  const gateway = await startService({ DATA_DIR: dataDir, ADMIN_TOKEN, ...env })
  let stdout = ""
  gateway.child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
  const stop = async () => {
    await gateway.stop()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  }
  return { gateway, stdout: () => stdout, stop }
}

const createSecret = async (base: string, appId: string) =>
  await (await fetch(`${base}/api/v1/secret`, {
    method: "POST",
    headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
    body: JSON.stringify({ appId, ipAddresses: ["0.0.0.0/0"] })
  })).json() as { id: string; value: string }

/** Waits (bounded) until stdout holds `count` request lines, then parses every line. */
const requestLines = async (stdout: () => string, count: number) => {
  const parse = () => stdout().split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line) as Line)
  for (let attempt = 0; attempt < 40 && parse().filter((line) => line.msg === "request").length < count; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return parse()
}

describe("The request log", () => {
  let logged: Awaited<ReturnType<typeof startLogged>> | undefined
  let base = ""
  let gateway: ServiceProcess

  beforeAll(async () => {
    logged = await startLogged({})
    gateway = logged.gateway
    base = gateway.base
  }, 60_000)

  afterAll(async () => {
    await logged?.stop()
  }, 30_000)

  it("writes one JSON line per request with what an operator needs, and never a secret", async () => {
    const secret = await createSecret(base, "logged")
    const random = secret.value.split(".")[1]!
    const wrongValue = `${secret.id}.${"B".repeat(43)}`
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"

    const read = await fetch(`${base}/v1/customer/missing-id?token=${QUERY_VALUE}`, {
      headers: { authorization: `Bearer ${secret.value}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` }
    })
    // The read takes no query: the 400 naming `token` (its value in no log line, below).
    expect(read.status).toBe(400)
    expect(((await read.json()) as { message: string }).message).toContain("\"token\"")
    const wrong = await fetch(`${base}/v1/customer/missing-id`, { headers: { authorization: wrongValue } })
    expect(wrong.status).toBe(401)
    const malformed = await fetch(`${base}/v1/customer/missing-id`, { headers: { authorization: "Bearer not-a-secret" } })
    expect(malformed.status).toBe(401)
    for (const refused of [wrong, malformed]) expect(await refused.json()).toEqual({ code: 401, message: "Not Authorized" })
    const engineError = await fetch(`${base}/v1/customer/missing-id`, {
      method: "PUT",
      headers: { authorization: secret.value, "content-type": "application/json" },
      body: JSON.stringify({ name: "Acme", email: "buyer@acme.example" })
    })
    expect(engineError.status).toBe(404)
    expect(engineError.headers.get("x-error-source")).toBe("engine")
    const listed = await mcpToolCall(base, secret.value, "list_parts", {})
    expect(listed.status).toBe(200)
    const mcpEngineError = await mcpToolCall(base, secret.value, "update_part", {
      id: "missing-part",
      ticketId: "t",
      modelEndpoint: { url: "https://files.example/a.stl" },
      technologyId: "fdm",
      materialId: "m",
      quantity: 1
    })
    expect(mcpEngineError.status).toBe(200)
    expect((await fetch(`${base}/health`)).status).toBe(200)
    expect((await fetch(`${base}/nowhere?token=${QUERY_VALUE}`)).status).toBe(404)

    // 9 requests: the secret's creation (admin API) and the 8 calls above.
    const lines = await requestLines(logged!.stdout, 9)
    const requests = lines.filter((line) => line.msg === "request")
    expect(requests.map((line) => `${line.method} ${line.path} ${line.status}`)).toEqual([
      "POST /api/v1/secret 201",
      "GET /v1/customer/missing-id 400",
      "GET /v1/customer/missing-id 401",
      "GET /v1/customer/missing-id 401",
      "PUT /v1/customer/missing-id 404",
      "POST /v1/mcp 200",
      "POST /v1/mcp 200",
      "GET /health 200",
      "GET /nowhere 404"
    ])
    const [admin, ok, wrongLine, malformedLine, engineLine, mcpLine, mcpErrorLine, health, unknown] = requests as [
      Line,
      Line,
      Line,
      Line,
      Line,
      Line,
      Line,
      Line,
      Line
    ]
    for (const line of requests) {
      expect(Number.isNaN(Date.parse(line.time))).toBe(false)
      expect(line.level).toBe("INFO")
      expect(typeof line.durationMs).toBe("number")
      expect(line.requestId).toMatch(/^[0-9a-f-]{36}$/)
    }
    expect(admin.route).toBeUndefined()
    expect(health.route).toBe("/health")
    expect(unknown.route).toBeUndefined()

    // Tracing is off: the trace id is the client's, the request id the response's.
    expect(ok).toMatchObject({
      traceId,
      route: "/v1/customer/:id",
      appId: "logged",
      secretId: secret.id,
      operation: "customer.get",
      requestId: read.headers.get("x-request-id")
    })
    expect(ok.spanId).toBeUndefined()
    expect(ok.authFailure).toBeUndefined()

    // A 401: the internal cause, no caller.
    expect(wrongLine).toMatchObject({ route: "/v1/customer/:id", authFailure: "wrong-secret" })
    expect(malformedLine.authFailure).toBe("malformed")
    for (const line of [wrongLine, malformedLine]) {
      expect(line.appId).toBeUndefined()
      expect(line.secretId).toBeUndefined()
      expect(line.traceId).toBeUndefined()
    }

    expect(engineLine).toMatchObject({ errorSource: "engine", operation: "customer.replace", requestId: engineError.headers.get("x-request-id") })
    expect(mcpLine).toMatchObject({ route: "/v1/mcp", tool: "list_parts", operation: "mcp.list_parts", appId: "logged" })
    expect(mcpLine.errorSource).toBeUndefined()
    expect(mcpErrorLine).toMatchObject({ tool: "update_part", errorSource: "engine" })

    // Nothing secret anywhere in the output, stdout or stderr.
    const everything = gateway.output() + logged!.stdout()
    for (const value of [random, wrongValue.split(".")[1]!, "not-a-secret", QUERY_VALUE, ADMIN_TOKEN]) {
      expect(everything).not.toContain(value)
    }
  }, 30_000)

  it("logs an intended refusal (every 4xx, the 501 of DELETE /item) at INFO, never at ERROR", async () => {
    const before = logged!.stdout().length
    const secret = await createSecret(base, "refusals")
    const call = (method: string, path: string, body?: unknown, authorization = secret.value) =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    const statuses = [
      (await call("DELETE", "/v1/item/any-item")).status,
      (await call("POST", "/v1/customer", { name: "" })).status,
      (await call("GET", "/v1/customer", undefined, "wrong")).status,
      (await call("PUT", "/v1/customer/missing-id", { name: "Acme", email: "buyer@acme.example" })).status,
      (await call("POST", "/v1/project", { customerId: "no-such-customer", name: "Order" })).status
    ]
    expect(statuses).toEqual([501, 400, 401, 404, 422])
    // The secret's creation and the 5 calls.
    const lines = await requestLines(() => logged!.stdout().slice(before), 6)
    const requests = lines.filter((line) => line.msg === "request")
    expect(requests.map((line) => `${line.status} ${line.level}`)).toEqual(["201 INFO", "501 INFO", "400 INFO", "401 INFO", "404 INFO", "422 INFO"])
    expect(lines.filter((line) => line.level === "ERROR")).toEqual([])
  }, 30_000)

  it("REQUEST_LOG=false switches the request lines off", async () => {
    const quiet = await startLogged({ REQUEST_LOG: "false" })
    try {
      const secret = await createSecret(quiet.gateway.base, "quiet")
      expect((await fetch(`${quiet.gateway.base}/v1/customer/x`, { headers: { authorization: secret.value } })).status).toBe(200)
      expect((await fetch(`${quiet.gateway.base}/health`)).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(quiet.stdout().split("\n").filter((line) => line.includes("\"msg\":\"request\""))).toEqual([])
    } finally {
      await quiet.stop()
    }
  }, 60_000)
})
