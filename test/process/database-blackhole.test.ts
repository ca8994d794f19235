/**
 * PostgreSQL behind a network that drops everything while connections stay
 * open (a "black hole"): a TCP proxy in the test sits between the gateway
 * and the database and, when told, swallows every byte both ways. Every call
 * answers the standard 503 `StorageUnavailable` within DATABASE_QUERY_TIMEOUT,
 * the log says so in a few short lines, and when the proxy forwards again
 * the gateway serves again by itself.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminQuery } from "../support/backends.ts"
import { type ServiceProcess, startService } from "../support/processes.ts"

const POSTGRES_URL = process.env.TEST_DATABASE_URL
const ADMIN_TOKEN = "blackhole-admin-token-0123456789"
const QUERY_TIMEOUT_MS = 2_000
/** Time on top of the bound for the answer to travel and the machine to be busy. */
const SLACK_MS = 1_500

/** A proxy to `target`; `blackHole(true)` swallows every byte from then on, on every connection, old and new. */
const startProxy = async (target: { host: string; port: number }) => {
  let swallowing = false
  const sockets = new Set<Net.Socket>()
  const server = Net.createServer((client) => {
    const upstream = Net.connect(target)
    sockets.add(client).add(upstream)
    client.on("data", (chunk) => swallowing || upstream.write(chunk))
    upstream.on("data", (chunk) => swallowing || client.write(chunk))
    const close = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on("close", close).on("error", close)
    upstream.on("close", close).on("error", close)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as Net.AddressInfo).port,
    blackHole: (on: boolean) => {
      swallowing = on
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

describe.skipIf(POSTGRES_URL === undefined)("PostgreSQL black-holed behind a proxy", () => {
  const database = `mfg_blackhole_${randomBytes(6).toString("hex")}`
  let proxy: Awaited<ReturnType<typeof startProxy>>
  let gateway: ServiceProcess
  let secret = ""

  beforeAll(async () => {
    await Effect.runPromise(adminQuery(`CREATE DATABASE ${database}`))
    const url = new URL(POSTGRES_URL!)
    proxy = await startProxy({ host: url.hostname, port: Number(url.port || 5432) })
    url.host = `127.0.0.1:${proxy.port}`
    url.pathname = `/${database}`
    gateway = await startService({ DATABASE_URL: url.toString(), ADMIN_TOKEN, DATABASE_QUERY_TIMEOUT: `${QUERY_TIMEOUT_MS / 1000}s` })
    secret = ((await (await fetch(`${gateway.base}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId: "blackhole", ipAddresses: ["0.0.0.0/0"] })
    })).json()) as { value: string }).value
  }, 90_000)

  afterAll(async () => {
    await gateway?.stop()
    await proxy?.stop()
    await Effect.runPromise(adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
  }, 60_000)

  /** A call of each kind: a read, a create, an MCP tool call; its status, body and time. */
  const calls = () =>
    Promise.all([
      ["GET", "/v1/customer/c-1", undefined],
      ["POST", "/v1/customer", { name: "Acme", email: "buyer@acme.example" }],
      ["GET", "/v1/material", undefined]
    ].map(async ([method, path, body]) => {
      const startedAt = performance.now()
      const reply = await fetch(`${gateway.base}${path as string}`, {
        method: method as string,
        headers: { authorization: secret, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000)
      })
      return { path, status: reply.status, body: await reply.text(), ms: performance.now() - startedAt }
    }))

  it("answers every call 503 within DATABASE_QUERY_TIMEOUT while the database is black-holed, and recovers by itself", async () => {
    for (const answer of await calls()) expect(answer.status, answer.body).toBeLessThan(300)

    proxy.blackHole(true)
    const outageStartedAt = Date.now()
    const during = []
    for (let round = 0; round < 4; round++) during.push(...(await calls()))
    for (const answer of during) {
      expect(answer.status, `${answer.path}: ${answer.body}`).toBe(503)
      expect(JSON.parse(answer.body)).toEqual({ code: 503, message: "Storage is unavailable", type: "StorageUnavailable" })
      expect(answer.ms, String(answer.path)).toBeLessThan(QUERY_TIMEOUT_MS + SLACK_MS)
    }
    const outageMs = Date.now() - outageStartedAt

    proxy.blackHole(false)
    // Recovered by itself: new connections answer; the ones the black hole held were closed.
    let recovered: Awaited<ReturnType<typeof calls>> = []
    for (let attempt = 0; attempt < 40; attempt++) {
      recovered = await calls()
      if (recovered.every((answer) => answer.status < 300)) break
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    for (const answer of recovered) expect(answer.status, `${answer.path}: ${answer.body}`).toBeLessThan(300)

    // The log during the outage: short lines, a few per second at most, no stack traces.
    const lines = gateway.output().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>)
    const warnings = lines.filter((line) => line.msg !== "request" && (line.level === "WARN" || line.level === "ERROR"))
    for (const line of warnings) expect(JSON.stringify(line).length, JSON.stringify(line)).toBeLessThan(600)
    expect(warnings.length, JSON.stringify(warnings.map((line) => line.msg))).toBeLessThanOrEqual(Math.ceil(outageMs / 1000) * 3 + 6)
  }, 120_000)
})
