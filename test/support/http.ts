/**
 * Helpers the HTTP suites share: a successful reply's body, a fresh app with
 * a ticket to put parts in, fields of a stored record set directly, and the
 * check that every operation of some groups had a successful call.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { RecordRepository, type StoredRecord } from "../../src/engine/RecordRepository.ts"
import { type Reply, TestClient } from "./TestApp.ts"

/** The JSON body of a 200 reply; anything else fails the test with the reply in the message. */
export const ok = (reply: Reply, what: string) => {
  assert.strictEqual(reply.status, 200, `${what}: ${reply.status} ${reply.text}`)
  return reply.json()
}

/**
 * A new app (a secret of its own, so tests never see each other's records)
 * with a customer, a project and a ticket; `call` calls /v1 with its secret.
 */
export const appWithTicket = (prefix: string) =>
  Effect.gen(function*() {
    const client = yield* TestClient
    const appId = `${prefix}-${Math.random().toString(36).slice(2)}`
    const { value } = yield* client.createSecret(appId)
    const call = Object.assign(
      (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret: value, body }),
      {
        /** The same call with request headers of its own (If-Match, Idempotency-Key...). */
        withHeaders: (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
          client.call(method, `/v1${path}`, { secret: value, body, headers })
      }
    )
    const customer = ok(yield* call("POST", "/customer", { name: "Acme", email: "buyer@acme.example" }), "customer")
    const project = ok(yield* call("POST", "/project", { customerId: customer.id, name: "Gearbox" }), "project")
    const ticket = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Prototype run" }), "ticket")
    return { appId, call, customer, project, ticket }
  })

/** Sets fields of a stored record directly (what the later analysis and pricing will set). */
export const patch = (resource: string, appId: string, id: string, changes: StoredRecord) =>
  Effect.gen(function*() {
    const records = yield* RecordRepository
    const record = yield* records.find(resource, appId, id)
    if (record === undefined) return yield* Effect.die(new Error(`${resource} ${id} missing`))
    return yield* records.replace(resource, appId, id, { ...record, ...changes })
  }).pipe(Effect.provide(RecordRepository.layer))

/** The endpoints of `groups`, to check that each had a successful call. */
export interface Described {
  readonly identifier: string
  readonly endpoints: Readonly<Record<string, { readonly identifier: string; readonly method: string; readonly path: string }>>
}
export const coverage = (groups: ReadonlyArray<Described>, excluded: ReadonlyArray<string> = []) => {
  const endpoints = groups.flatMap((group) =>
    Object.values(group.endpoints).map((endpoint) => ({
      id: `${group.identifier}.${endpoint.identifier}`,
      method: endpoint.method,
      pattern: new RegExp(`^/v1${endpoint.path.replace(/:[^/]+/g, "[^/]+")}$`),
      params: endpoint.path.split(":").length
    }))
  ).filter((endpoint) => !excluded.includes(endpoint.id))
  const answered = new Set<string>()
  return {
    /** Notes the operation a successful call reached (the literal path wins over a parameter: `/lookup` before `/:id`). */
    record: (method: string, path: string, reply: Reply) => {
      const bare = path.split("?")[0]!
      const match = endpoints
        .filter((endpoint) => endpoint.method === method && endpoint.pattern.test(bare))
        .sort((a, b) => a.params - b.params)[0]
      if (match !== undefined && reply.status < 300) answered.add(match.id)
    },
    missing: () => endpoints.map((endpoint) => endpoint.id).filter((id) => !answered.has(id))
  }
}
