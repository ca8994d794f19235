/**
 * The database connection cut during a write (issue 37, item 2), through a
 * TCP proxy in front of PostgreSQL (test/support/pgProxy.ts). A keyed write,
 * at its COMMIT:
 *
 *   - cut after PostgreSQL committed, its answer lost: the service cannot
 *     know, and says so: 503 `StorageOutcomeUnknown`, not the plain outage's
 *     `StorageUnavailable`. The write is there; the retry with the same
 *     Idempotency-Key answers it (replayed), and nothing is written twice;
 *   - cut after the service sent the COMMIT, before PostgreSQL got it:
 *     rolled back, but the service cannot tell this from the first case: 503
 *     `StorageOutcomeUnknown` again; the retry runs it, once;
 *   - cut during the transaction, before any COMMIT was sent: PostgreSQL
 *     rolled back, which the service knows: 503 `StorageUnavailable`, nothing
 *     written; the retry with the key runs it, once.
 *
 * A write without a key (a create): cut once its statement or its COMMIT
 * was sent, committed or not, the service cannot know: 503
 * `StorageOutcomeUnknown`, never a 500, in a transaction (whose ROLLBACK then
 * meets the dead connection) or not; cut before anything of it was sent (its
 * connection refused), the plain 503 `StorageUnavailable`. Either way the
 * next call is served.
 */
import { Effect } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import pg from "pg"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { adminQuery } from "../support/backends.ts"
import { type PgProxy, startPgProxy } from "../support/pgProxy.ts"
import { startNodeServer } from "../support/processes.ts"

const POSTGRES_URL = process.env.TEST_DATABASE_URL
const ADMIN_TOKEN = "commit-cut-admin-token-0123456789"

describe.skipIf(POSTGRES_URL === undefined)("A write whose database connection is cut", () => {
  const database = `mfg_commit_cut_${randomBytes(6).toString("hex")}`
  let proxy: PgProxy | undefined
  let gateway: Awaited<ReturnType<typeof startNodeServer>> | undefined
  let direct: pg.Client | undefined
  let secret = ""

  beforeAll(async () => {
    await Effect.runPromise(adminQuery(`CREATE DATABASE ${database}`))
    const target = new URL(POSTGRES_URL!)
    proxy = await startPgProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const throughProxy = new URL(POSTGRES_URL!)
    throughProxy.port = String(proxy.port)
    throughProxy.pathname = `/${database}`
    gateway = await startNodeServer("src/main.ts", { DATABASE_URL: throughProxy.toString(), ADMIN_TOKEN, REQUEST_LOG: "false" })
    const created = await fetch(`${gateway.base}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId: "commit-cut", ipAddresses: ["0.0.0.0/0"] })
    })
    assert.strictEqual(created.status, 201)
    secret = ((await created.json()) as { value: string }).value
    const url = new URL(POSTGRES_URL!)
    url.pathname = `/${database}`
    direct = new pg.Client({ connectionString: url.toString() })
    await direct.connect()
  }, 90_000)

  afterAll(async () => {
    await direct?.end()
    await gateway?.stop()
    await proxy?.close()
    await Effect.runPromise(adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
  }, 60_000)

  const create = async (key: string | undefined, name: string, externalReference?: string) => {
    const reply = await fetch(`${gateway!.base}/v1/customer`, {
      method: "POST",
      headers: { authorization: secret, "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
      body: JSON.stringify({ name, email: "cut@example.com", externalReference }),
      signal: AbortSignal.timeout(15_000)
    })
    const text = await reply.text()
    // A defect's 500 may come without a body: the status is what the assertions then report.
    const body = (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>
    return { status: reply.status, replayed: reply.headers.get("idempotent-replayed"), source: reply.headers.get("x-error-source"), body }
  }
  const stored = async (name: string) =>
    (await direct!.query<{ id: string }>("SELECT id FROM engine_record WHERE resource = 'customer' AND data->>'name' = $1", [name])).rows.map((row) => row.id)

  it("cut once PostgreSQL committed: 503 StorageOutcomeUnknown; the keyed retry replays the write, which exists once", async () => {
    const key = randomUUID()
    const name = `Committed ${key}`
    const cut = proxy!.arm("after-commit")
    const first = await create(key, name)
    await cut
    assert.strictEqual(first.status, 503, JSON.stringify(first.body))
    assert.strictEqual(first.body.type, "StorageOutcomeUnknown")
    assert.include(String(first.body.message), "Idempotency-Key")
    const [id, ...others] = await stored(name)
    assert.isDefined(id, "the write was committed")
    assert.deepStrictEqual(others, [])

    const retried = await create(key, name)
    assert.strictEqual(retried.status, 200, JSON.stringify(retried.body))
    assert.strictEqual(retried.replayed, "true")
    assert.strictEqual(retried.body.id, id)
    assert.deepStrictEqual(await stored(name), [id])
    // And again, now from the gateway's own record of the key.
    const again = await create(key, name)
    assert.deepStrictEqual([again.status, again.replayed, again.body.id], [200, "true", id])
  }, 60_000)

  for (
    const [mode, type, what] of [
      ["before-commit", "StorageOutcomeUnknown", "cut as the COMMIT was sent, before PostgreSQL got it: 503 StorageOutcomeUnknown"],
      ["before-statement", "StorageUnavailable", "cut during the transaction, before any COMMIT: 503 StorageUnavailable"]
    ] as const
  ) {
    it(`${what}; nothing written; the keyed retry writes it once`, async () => {
      const key = randomUUID()
      const name = `Rolled back ${mode} ${key}`
      const cut = proxy!.arm(mode)
      const first = await create(key, name)
      await cut
      assert.strictEqual(first.status, 503, JSON.stringify(first.body))
      assert.strictEqual(first.body.type, type)
      assert.deepStrictEqual(await stored(name), [])

      const retried = await create(key, name)
      assert.strictEqual(retried.status, 200, JSON.stringify(retried.body))
      assert.isNull(retried.replayed)
      assert.deepStrictEqual(await stored(name), [retried.body.id])
    }, 60_000)
  }

  /** What the unkeyed create answered, and whether its record is there; then the next create, once the proxy relays again. */
  const createCut = async (cut: () => Promise<void>, externalReference: boolean) => {
    const name = `Unkeyed ${randomUUID()}`
    const reference = () => externalReference ? `ext-${randomUUID()}` : undefined
    const first = await create(undefined, name, reference())
    await cut()
    const written = (await stored(name)).length
    const next = await create(undefined, `${name} again`, reference())
    assert.strictEqual(next.status, 200, JSON.stringify(next.body))
    assert.deepStrictEqual(await stored(`${name} again`), [next.body.id])
    return { ...first, written }
  }

  // One statement, committed on its own; with an external reference, a transaction (its unique index may refuse it).
  for (
    const [mode, externalReference, written] of [
      ["after-statement", false, 1],
      ["before-statement", false, 0],
      ["after-statement", true, 0],
      ["before-statement", true, 0],
      ["before-commit", true, 0],
      ["after-commit", true, 1]
    ] as const
  ) {
    const what = externalReference ? "in a transaction" : "one statement"
    // A write that may have been kept is always an unknown outcome. One that was not may also be the plain outage,
    // when the service saw its connection gone before the statement left (which of the two depends on timing).
    const answers = written === 1 ? ["StorageOutcomeUnknown"] : ["StorageOutcomeUnknown", "StorageUnavailable"]
    it(`a create without a key, ${what}, cut ${mode}: 503 ${answers.join(" or ")} (${written} written); the next call is served`, async () => {
      const armed = proxy!.arm(mode, "record")
      const first = await createCut(() => armed, externalReference)
      assert.strictEqual(first.status, 503, JSON.stringify(first.body))
      assert.include(answers, first.body.type)
      if (first.body.type === "StorageOutcomeUnknown") assert.include(String(first.body.message), "read before you retry")
      assert.strictEqual(first.written, written)
    }, 60_000)
  }

  it("a create without a key whose connection is refused before anything was sent: 503 StorageUnavailable; the next call is served", async () => {
    proxy!.refuseConnections()
    const first = await createCut(async () => proxy!.acceptConnections(), false)
    assert.strictEqual(first.status, 503, JSON.stringify(first.body))
    assert.strictEqual(first.body.type, "StorageUnavailable")
    assert.strictEqual(first.source, "engine", "the engine answered, once the gateway's meter row was committed")
    assert.strictEqual(first.written, 0)
  }, 60_000)
})
