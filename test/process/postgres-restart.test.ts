/**
 * Fault drill: PostgreSQL stopped and started again under load.
 *
 * The service (`node src/main.ts`) runs on a private PostgreSQL cluster (the
 * shared server on :5432 serves everybody's tests and must stay up) while
 * loops of authenticated reads run. The cluster is stopped (`-m fast`, then
 * in a second round `-m immediate`, a crash) and started again. Expected:
 *
 *   - during the outage every call answers 503 with the standard body, fast
 *     (no hang, no 500, and never the 401: the caller's secret is fine);
 *   - once PostgreSQL is back, 2xx resume within seconds, without restarting
 *     the service;
 *   - after a graceful stop, every 2xx the client saw has its `meter_event`
 *     row (by request id, so counted by secret too), with its outcome.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { type PrivatePostgres, privatePostgresUnavailable, type ServiceProcess, startPrivatePostgres, startService } from "../support/processes.ts"
import { type Answer, type Call, isOk, sleep, timedClient } from "../support/timedClient.ts"

const ADMIN_TOKEN = "postgres-restart-drill-admin-token"
const APP_ID = "drill"
const LOOPS = 8
/** A call that takes longer than this during the outage is not failing fast. */
const FAIL_FAST_MS = 1_000
/** A call that takes longer than this hangs: the client gives up and the drill fails. */
const REQUEST_TIMEOUT_MS = 5_000
/** PostgreSQL accepts connections again: the first 2xx must follow within this. */
const RECOVERY_MS = 5_000
const STEADY_MS = 1_000
/** After the first 2xx, calls already under way may still fail (they are logged); none may after this. */
const SETTLE_MS = 500
const OUTAGE_MS = 1_500
/** Calls that started during the outage: enough that the 503 path was really exercised. */
const MIN_OUTAGE_CALLS = 10

const unavailable = privatePostgresUnavailable()

// ---------------------------------------------------------------------------
// The client side: loops of reads, every answer recorded with its timing.

const makeClient = (base: string, epoch: number) => timedClient(base, epoch, REQUEST_TIMEOUT_MS)

/** The 503 of a storage outage: the gateway's own, or the embedded engine's passed through. */
const assertStorageUnavailable = (answer: Answer, what: string) => {
  assert.strictEqual(answer.status, 503, `${what}: ${answer.status} ${answer.body} ${answer.error ?? ""}`)
  const body = JSON.parse(answer.body) as Record<string, unknown>
  assert.deepStrictEqual(Object.keys(body).sort(), ["code", "message", "type"], what)
  assert.strictEqual(body.code, 503, what)
  assert.strictEqual(body.type, "StorageUnavailable", what)
  assert.isString(body.message, what)
}

// ---------------------------------------------------------------------------
// The drill

interface Round {
  readonly mode: "fast" | "immediate"
  readonly stopBegan: number
  readonly stopEnded: number
  readonly startBegan: number
  readonly startEnded: number
  /** Calls made during the outage besides the load: other paths must also answer 503. */
  readonly probes: ReadonlyArray<readonly [string, Answer]>
}

const queryMeter = async (url: string) => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    const rows = await client.query<{ request_id: string; secret_id: string; status: number | null }>(
      "SELECT request_id, secret_id, status FROM meter_event WHERE app_id = $1",
      [APP_ID]
    )
    return rows.rows
  } finally {
    await client.end()
  }
}

const acquireCluster = Effect.acquireRelease(
  Effect.promise(() => startPrivatePostgres()),
  (cluster) => Effect.promise(() => cluster.remove())
)

const acquireService = (cluster: PrivatePostgres) =>
  Effect.acquireRelease(
    Effect.promise(() => startService({ DATABASE_URL: cluster.url, ADMIN_TOKEN, DATA_DIR: undefined, DOWNSTREAM_URL: undefined })),
    (service: ServiceProcess) => Effect.promise(() => service.stop())
  )

describe.skipIf(unavailable !== undefined)(
  `PostgreSQL stopped and restarted under load${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`,
  () => {
    it.live("answers 503 fast during the outage, recovers on its own, and meters every 2xx it answered", () =>
      Effect.gen(function*() {
        const cluster = yield* acquireCluster
        const service = yield* acquireService(cluster)
        const epoch = Date.now()
        const now = () => Date.now() - epoch
        const call = makeClient(service.base, epoch)

        // A secret and a record; a second secret that this instance has never verified.
        const admin = { "x-admin-token": ADMIN_TOKEN }
        const issue = async () => {
          const answer = await call({ method: "POST", path: "/api/v1/secret", headers: admin, body: { appId: APP_ID, ipAddresses: ["0.0.0.0/0"] } })
          assert.strictEqual(answer.status, 201, answer.body)
          return JSON.parse(answer.body) as { id: string; value: string }
        }
        const { secret, fresh, customer, created } = yield* Effect.promise(async () => {
          const secret = await issue()
          const fresh = await issue()
          const created = await call({
            method: "POST",
            path: "/v1/customer",
            headers: { authorization: secret.value },
            body: { name: "Drill", email: "drill@example.com" }
          })
          assert.strictEqual(created.status, 200, created.body)
          return { secret, fresh, customer: JSON.parse(created.body) as { id: string }, created }
        })
        const read: Call = { method: "GET", path: `/v1/customer/${customer.id}`, headers: { authorization: secret.value } }

        // Steady load, all through the drill.
        const answers: Array<Answer> = []
        let loading = true
        const loop = async () => {
          while (loading) answers.push(await call(read))
        }
        const load = Promise.all(Array.from({ length: LOOPS }, loop))

        const firstOkAfter = async (from: number) => {
          while (now() - from < RECOVERY_MS + REQUEST_TIMEOUT_MS) {
            const ok = answers.find((answer) => answer.startedAt >= from && isOk(answer))
            if (ok !== undefined) return ok
            await sleep(25)
          }
          return undefined
        }

        const drill = async (mode: Round["mode"]): Promise<Round> => {
          await sleep(STEADY_MS)
          const stopBegan = now()
          await cluster.stop(mode)
          const stopEnded = now()
          const probes: Array<readonly [string, Answer]> = []
          probes.push(["a secret not yet verified by this instance", await call({ ...read, headers: { authorization: fresh.value } })])
          probes.push([
            "a create",
            await call({ method: "POST", path: "/v1/customer", headers: { authorization: secret.value }, body: { name: "X", email: "x@example.com" } })
          ])
          probes.push(["the admin API", await call({ method: "GET", path: "/api/v1/secret", headers: admin })])
          await sleep(Math.max(0, OUTAGE_MS - (now() - stopEnded)))
          const ready = await call({ method: "GET", path: "/ready" })
          assert.strictEqual(ready.status, 503, `/ready during the outage: ${ready.body}`)
          const readiness = JSON.parse(ready.body) as { status: string; reason: string; checks: Record<string, string> }
          assert.deepStrictEqual([readiness.status, readiness.reason], ["unavailable", "storage unreachable"], ready.body)
          assert.deepStrictEqual(Object.keys(readiness.checks), ["storage"], ready.body)
          assert.match(readiness.checks.storage!, /^unreachable: \S/, ready.body)
          const health = await call({ method: "GET", path: "/health" })
          assert.deepStrictEqual([health.status, JSON.parse(health.body)], [200, { status: "ok" }], "/health during the outage")
          const startBegan = now()
          await cluster.start()
          const startEnded = now()
          const ok = await firstOkAfter(startEnded)
          assert.isDefined(ok, `no 2xx within ${RECOVERY_MS} ms of PostgreSQL accepting connections again (${mode})`)
          await sleep(STEADY_MS)
          return { mode, stopBegan, stopEnded, startBegan, startEnded, probes }
        }

        const rounds = yield* Effect.promise(async () => {
          try {
            return [await drill("fast"), await drill("immediate")]
          } finally {
            loading = false
            await load
          }
        })

        // The secret never verified before the outage works now: it was a 503 then, not a 401 remembered.
        const later = yield* Effect.promise(() => call({ ...read, headers: { authorization: fresh.value } }))
        assert.strictEqual(later.status, 200, `the second secret after recovery: ${later.body}`)

        // What the client saw, round by round.
        const summary = rounds.map((round, index) => {
          const during = answers.filter((a) => a.startedAt >= round.stopEnded && a.startedAt < round.startBegan)
          // Answered before the next round's stop began: the calls of the service back on its feet.
          const until = rounds[index + 1]?.stopBegan ?? Infinity
          const after = answers.filter((a) => a.startedAt >= round.startEnded && a.endedAt < until)
          const firstOk = after.find(isOk)
          return {
            mode: round.mode,
            stopMs: round.stopEnded - round.stopBegan,
            startMs: round.startEnded - round.startBegan,
            outageCalls: during.length,
            outageStatuses: countBy(during.map((a) => String(a.status ?? a.error))),
            outageSlowestMs: Math.max(0, ...during.map((a) => a.endedAt - a.startedAt)),
            recoveryMs: firstOk === undefined ? undefined : firstOk.endedAt - round.startEnded,
            // Stragglers: calls that failed although one had succeeded again.
            stragglers: firstOk === undefined ? [] : after.filter((a) => a.startedAt > firstOk.endedAt && !isOk(a)).slice(0, 8)
              .map((a) => ({ sinceFirstOk: a.startedAt - firstOk.endedAt, ms: a.endedAt - a.startedAt, status: a.status, source: a.errorSource })),
            notOkAfterSettling: firstOk === undefined
              ? undefined
              : after.filter((a) => a.startedAt > firstOk.endedAt + SETTLE_MS && !isOk(a)).length
          }
        })
        const oks = answers.filter(isOk)
        console.log(`postgres-restart ${
          JSON.stringify({
            calls: answers.length,
            ok: oks.length,
            statuses: countBy(answers.map((a) => String(a.status ?? a.error))),
            rounds: summary
          })
        }`)

        for (const [index, round] of rounds.entries()) {
          const during = answers.filter((a) => a.startedAt >= round.stopEnded && a.startedAt < round.startBegan)
          assert.isAtLeast(during.length, MIN_OUTAGE_CALLS, `${round.mode}: too few calls during the outage`)
          for (const answer of during) {
            assertStorageUnavailable(answer, `${round.mode}: a read during the outage`)
            assert.isBelow(answer.endedAt - answer.startedAt, FAIL_FAST_MS, `${round.mode}: a 503 that took too long`)
          }
          for (const [what, answer] of round.probes) {
            assertStorageUnavailable(answer, `${round.mode}: ${what} during the outage`)
            assert.isBelow(answer.endedAt - answer.startedAt, FAIL_FAST_MS, `${round.mode}: ${what} took too long`)
          }
          assert.isBelow(summary[index]!.recoveryMs!, RECOVERY_MS, `${round.mode}: recovery`)
          // Once a call has succeeded again the service is back: past a short settling, nothing but 2xx.
          assert.strictEqual(summary[index]!.notOkAfterSettling, 0, `${round.mode}: failures after recovery`)
        }
        // Whatever the moment, only 2xx or the 503: never a 500, a 401 or a hang.
        for (const answer of answers) {
          if (!isOk(answer)) assertStorageUnavailable(answer, `a read at ${answer.startedAt} ms`)
        }

        // Graceful stop, then the meter: every 2xx the client saw is a row, with its outcome.
        yield* Effect.promise(() => service.stop())
        // Its own exit, not a signal's: a graceful stop ends with 0.
        assert.strictEqual(service.child.signalCode, null, "the service was killed instead of stopping")
        assert.strictEqual(service.child.exitCode, 0, `the service's exit; its output ends:\n${service.output().slice(-2_000)}`)
        const rows = yield* Effect.promise(() => queryMeter(cluster.url))
        const byRequest = new Map(rows.map((row) => [row.request_id, row]))
        const seen = [created, ...oks, later]
        const missing = seen.filter((answer) => answer.requestId === null || !byRequest.has(answer.requestId))
        assert.deepStrictEqual(missing.map((a) => a.requestId), [], "2xx answers without their meter_event row")
        assert.strictEqual(new Set(seen.map((a) => a.requestId)).size, seen.length, "request ids are unique")
        const okOfSecret = 1 + oks.length // the create and the reads, all with the first secret
        assert.isAtLeast(rows.filter((row) => row.secret_id === secret.id).length, okOfSecret)
        assert.isAtLeast(rows.filter((row) => row.secret_id === fresh.id).length, 1)
        assert.isAtLeast(rows.length, seen.length)
        const withoutOutcome = seen.filter((answer) => byRequest.get(answer.requestId!)!.status !== answer.status)
        assert.strictEqual(withoutOutcome.length, 0, "2xx rows whose status was not written (outcomes lost in the outage)")

        // The outage is in the log, without a line per failed call: at most one warning a second, each with its count.
        const warnings = service.output().split("\n").filter((line) => line.includes("\"msg\":\"storage unavailable"))
          .map((line) => JSON.parse(line) as { level: string; failures: number })
        const outageSeconds = rounds.reduce((total, round) => total + (round.startEnded - round.stopBegan) / 1000, 0)
        const failed = answers.filter((answer) => !isOk(answer)).length
        assert.isAbove(warnings.length, 0, "no storage warning during two outages")
        assert.isAtMost(warnings.length, Math.ceil(outageSeconds) + 2 * rounds.length + 2, `${warnings.length} warnings for ${failed} failed calls`)
        for (const warning of warnings) {
          assert.strictEqual(warning.level, "WARN")
          assert.isAtLeast(warning.failures, 1)
        }
      }), 90_000)
  }
)

const countBy = (keys: ReadonlyArray<string>) => {
  const counts: Record<string, number> = {}
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1
  return counts
}
