/**
 * Several gateways on one PostgreSQL: a secret revoked or regenerated through
 * one fails on the other on the very next call; metering totals across both
 * equal the calls made; usedAt only moves forward.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminQuery } from "../support/backends.ts"
import { type ServiceProcess, startService } from "../support/processes.ts"

const POSTGRES_URL = process.env.TEST_DATABASE_URL
const ADMIN_TOKEN = "instances-admin-token-0123456789"

describe.skipIf(POSTGRES_URL === undefined)("Two gateways on one PostgreSQL", () => {
  const database = `mfg_instances_${randomBytes(6).toString("hex")}`
  const gateways: Array<ServiceProcess> = []
  const call = (base: string, path: string, init: RequestInit = {}) => fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(10_000) })
  const admin = async <A = { id: string; value: string }>(base: string, path: string, method = "GET", body?: unknown) => {
    const reply = await call(base, path, {
      method,
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: reply.status, json: async () => (await reply.json()) as A }
  }

  beforeAll(async () => {
    await Effect.runPromise(adminQuery(`CREATE DATABASE ${database}`))
    const url = new URL(POSTGRES_URL!)
    url.pathname = `/${database}`
    const env = { DATABASE_URL: url.toString(), ADMIN_TOKEN }
    // Started together: the migrations' table lock lets only one apply them.
    gateways.push(...(await Promise.all([startService(env), startService(env)])))
  }, 90_000)

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()))
    await Effect.runPromise(adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
  }, 60_000)

  it("fails a secret revoked or regenerated on one gateway on the other's very next call", async () => {
    const [a, b] = gateways as [ServiceProcess, ServiceProcess]
    const secret = await (await admin(a.base, "/api/v1/secret", "POST", { appId: "shared", ipAddresses: ["0.0.0.0/0"] })).json()
    const get = (base: string, value: string) => call(base, "/v1/customer", { headers: { authorization: value } })
    // Both gateways have now verified (and remember) the secret.
    expect((await get(a.base, secret.value)).status).toBe(200)
    expect((await get(b.base, secret.value)).status).toBe(200)

    const regenerated = await (await admin(a.base, `/api/v1/secret/${secret.id}/regenerate`, "POST")).json()
    expect((await get(b.base, secret.value)).status).toBe(401)
    expect((await get(b.base, regenerated.value)).status).toBe(200)

    expect((await admin(b.base, `/api/v1/secret/${secret.id}`, "DELETE")).status).toBe(204)
    expect((await get(a.base, regenerated.value)).status).toBe(401)
  }, 60_000)

  it("meters every call on both, and moves usedAt only forward", async () => {
    const [a, b] = gateways as [ServiceProcess, ServiceProcess]
    const secret = await (await admin(a.base, "/api/v1/secret", "POST", { appId: "counted", ipAddresses: ["0.0.0.0/0"] })).json()
    const calls = Array.from({ length: 60 }, (_, i) => call(i % 2 === 0 ? a.base : b.base, "/v1/customer", { headers: { authorization: secret.value } }))
    const statuses = await Promise.all(calls.map(async (reply) => (await reply).status))
    expect(statuses.every((status) => status === 200)).toBe(true)

    const usage = await (await admin<{ total: number }>(b.base, "/api/v1/usage?appId=counted")).json()
    expect(usage.total).toBe(60)

    const usedAt = async () => Date.parse((await (await admin<Array<{ usedAt: string }>>(a.base, "/api/v1/secret?appId=counted")).json())[0]!.usedAt)
    const first = await usedAt()
    await call(b.base, "/v1/customer", { headers: { authorization: secret.value } })
    const second = await usedAt()
    expect(second).toBeGreaterThanOrEqual(first)
  }, 60_000)
})
