/**
 * The meter's ceiling on one PostgreSQL primary: how many calls a second the
 * meter can record (its row committed before the call's answer, then its
 * outcome written) before its flushes fall behind. Run by bench/capacity.ts,
 * or alone:
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> node bench/meter-ceiling.ts [--seconds 5] [--rates 2000,4000,...]
 *
 * It drives the service's own Meter (src/adapters/sql/MeterSql.ts: group commit,
 * two flushes in flight, outcomes in batches) with events at a fixed rate,
 * step after step. A step is sustained when the rows committed keep up with
 * the rate offered (at least 95 %) and a call's wait for its row stays short
 * (p99 at most 50 ms); the first step that is not marks the ceiling. One
 * process offers the load, as the calls of several gateways would reach one
 * database: the figure is per primary, whatever the number of gateways.
 * Prints one JSON line: the steps and the ceiling.
 */
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { MeterSql } from "../src/adapters/sql/MeterSql.ts"
import { SecretStoreSql } from "../src/adapters/sql/SecretStoreSql.ts"
import { StorageLive } from "../src/adapters/storage/Storage.ts"
import type { Caller } from "../src/domain/Secret.ts"
import { InstrumentsNoOp } from "../src/platform/telemetry/Instruments.ts"
import { AppConfig } from "../src/services/AppConfig.ts"
import { Meter } from "../src/services/Meter.ts"
import { SecretStore } from "../src/services/SecretStore.ts"
import { parseFlags, positiveNumber } from "./options.ts"
import { percentile } from "./stats.ts"

const USAGE = "usage: DATABASE_URL=... node bench/meter-ceiling.ts [--seconds S] [--rates R1,R2,...]"
const flags = parseFlags({
  seconds: { type: "string", default: "5" },
  rates: { type: "string", default: "1000,2000,4000,8000,12000,16000,24000,32000" }
}, USAGE)
const SECONDS = positiveNumber("seconds", flags.seconds, false, USAGE)
const RATES = flags.rates.split(",").map((rate) => positiveNumber("rates", rate.trim(), true, USAGE))
const TICK_MS = 5
const KEEP_UP = 0.95
const MAX_P50_MS = 25

export interface MeterStep {
  readonly offered: number
  readonly committedPerSecond: number
  readonly waitP50Ms: number
  readonly waitP99Ms: number
  readonly failed: number
  readonly sustained: boolean
}

const step = (meter: Meter["Service"], caller: Caller, rate: number) =>
  Effect.gen(function*() {
    const waits: Array<number> = []
    let failed = 0
    const outstanding: Array<Promise<void>> = []
    const run = Effect.runPromiseWith(yield* Effect.context<never>())
    const started = performance.now()
    const ends = started + SECONDS * 1000
    let sent = 0
    while (performance.now() < ends) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate)
      for (; sent < due; sent++) {
        const submittedAt = performance.now()
        const requestId = randomUUID()
        const occurredAt = new Date()
        const receipt = yield* meter.submit({
          ...caller,
          grantsVersion: caller.grants.version,
          mode: caller.grants.mode,
          clientAddress: "127.0.0.1",
          requestId,
          operation: "customer.get",
          method: "GET",
          route: "/v1/customer/:id",
          occurredAt
        })
        outstanding.push(
          run(receipt).then(
            () => {
              waits.push(performance.now() - submittedAt)
              meter.complete(requestId, occurredAt, 200, 1)
            },
            () => {
              failed++
            }
          )
        )
      }
      yield* Effect.sleep(TICK_MS)
    }
    const offeredFor = (performance.now() - started) / 1000
    yield* Effect.promise(() => Promise.all(outstanding))
    const committedPerSecond = waits.length / ((performance.now() - started) / 1000)
    const sorted = Float64Array.from(waits).sort()
    const waitP99Ms = percentile(sorted, 99)
    return {
      offered: Math.round(sent / offeredFor),
      committedPerSecond: Math.round(committedPerSecond),
      waitP50Ms: Number(percentile(sorted, 50).toFixed(2)),
      waitP99Ms: Number(waitP99Ms.toFixed(2)),
      failed,
      sustained: failed === 0 && committedPerSecond >= KEEP_UP * rate && percentile(sorted, 50) <= MAX_P50_MS
    } satisfies MeterStep
  })

const program = Effect.gen(function*() {
  const secrets = yield* SecretStore
  const meter = yield* Meter
  const created = yield* secrets.create({ appId: "meter-ceiling", ipAddresses: ["0.0.0.0/0"] })
  const caller = yield* secrets.authenticate(created.value, "127.0.0.1")
  // Warm: the flush's statements prepared, the pools open.
  yield* step(meter, caller, 500)
  const steps: Array<MeterStep> = []
  for (const rate of RATES) {
    const measured = yield* step(meter, caller, rate)
    steps.push(measured)
    // Let the outcomes of the step be written before the next.
    yield* Effect.sleep("1 second")
    if (!measured.sustained) break
  }
  const sustained = steps.filter((one) => one.sustained)
  const ceiling = sustained.length === 0 ? 0 : sustained[sustained.length - 1]!.offered
  const firstBehind = steps.find((one) => !one.sustained)
  console.log(JSON.stringify({ seconds: SECONDS, steps, ceiling, firstBehind: firstBehind?.offered ?? null }))
})

const Services = Layer.mergeAll(MeterSql, SecretStoreSql).pipe(
  Layer.provideMerge(StorageLive("tool")),
  Layer.provide(InstrumentsNoOp),
  Layer.provideMerge(AppConfig.layer)
)

await Effect.runPromise(program.pipe(Effect.provide(Services), Effect.scoped))
