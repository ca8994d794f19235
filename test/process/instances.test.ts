/**
 * Several gateways on one PostgreSQL: a secret revoked or regenerated through
 * one fails on the other on the very next call, and a change of its scopes or
 * mode holds there from the very next call; metering totals across both
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

  it("decides a secret's next call on the other gateway with the scopes and mode changed through one, and meters it once", async () => {
    const [a, b] = gateways as [ServiceProcess, ServiceProcess]
    const secret = await (await admin(a.base, "/api/v1/secret", "POST", { appId: "granted", ipAddresses: ["0.0.0.0/0"] })).json()
    const send = (base: string, method: string, body?: unknown) =>
      call(base, "/v1/customer", {
        method,
        headers: { authorization: secret.value, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    const create = (base: string) => send(base, "POST", { name: "Acme", email: "buyer@acme.example" })
    const change = async (base: string, grants: Record<string, unknown>) =>
      expect((await admin(base, `/api/v1/secret/${secret.id}`, "PATCH", grants)).status).toBe(200)
    // Both gateways have verified (and remember) the secret with every scope.
    expect((await create(a.base)).status).toBe(200)
    expect((await send(b.base, "GET")).status).toBe(200)

    // A write, which runs after its meter row commits.
    await change(a.base, { scopes: ["read"] })
    const refused = await create(b.base)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toEqual({
      code: 403,
      message: "This secret may not call customer.create: it needs the scope \"write\"",
      type: "InsufficientScope"
    })
    // A read, which runs while its meter row commits.
    await change(b.base, { scopes: ["write"] })
    const unread = await send(a.base, "GET")
    expect(unread.status).toBe(403)
    expect(((await unread.json()) as { type: string }).type).toBe("InsufficientScope")
    expect((await create(a.base)).status).toBe(200)

    // The mode: the next call on the other gateway works on the app's test data.
    await change(b.base, { scopes: ["read", "write"], mode: "test" })
    const inTest = await send(a.base, "GET")
    expect(inTest.headers.get("x-mode")).toBe("test")
    expect(await inTest.json()).toEqual([])
    await change(a.base, { mode: "live" })
    const live = await send(b.base, "GET")
    expect(live.headers.get("x-mode")).toBeNull()
    expect(((await live.json()) as Array<unknown>).length).toBe(2)

    // Every call metered once, the ones decided again included.
    const usage = await (await admin<{ total: number }>(a.base, "/api/v1/usage?appId=granted")).json()
    expect(usage.total).toBe(7)
    const testUsage = await (await admin<{ total: number }>(a.base, "/api/v1/usage?appId=granted&mode=test")).json()
    expect(testUsage.total).toBe(1)
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
