/**
 * Benchmark: webhooks from a state change to its receipt (issue 20). Target:
 * p50 under 1 s at 500 events/s.
 *
 * Per setup (PostgreSQL with one instance, with two sharing the database, and
 * embedded PGlite with one):
 *
 * 1. Fresh storage; the instances (`node src/main.ts`, each its own cluster
 *    runner on a free port) started together; an app, and one endpoint
 *    subscribed to every event pointing at a local receiver that answers 204
 *    at once. The receiver runs in a worker thread of its own, so that the
 *    load made here does not delay its clock.
 * 2. A warm-up: WARM_UP_SECONDS of events at a low rate, all waited for (the
 *    runners see each other within the cluster's 3 s refresh of shard
 *    assignments).
 * 3. The load: `POST /v1/service-job` at `--rate` calls per second (open loop,
 *    spread over the instances in turn) for `--seconds`; each call writes one
 *    `service_job.created` event in its transaction.
 * 4. Wait until the receiver has every event (at most `--drain` seconds);
 *    then every request received is verified with the `standardwebhooks`
 *    library.
 *
 * Latency is the receipt (the receiver's clock) minus the event's `createdAt`
 * (PostgreSQL's clock at the insert, same machine), at the first receipt of
 * each event; "from the API's answer" measures from the moment the call that
 * made the change returned. The deliveries' own times (GET
 * /v1/webhook-delivery) split it: the event's insert to its delivery row
 * (the fan-out: the dispatcher of the instance whose call wrote it, or the
 * relay for one it missed), the row to the first attempt's start (the
 * dispatcher reading the delivery, then a wait for one of the endpoint's
 * PER_ENDPOINT_CONCURRENCY slots; a delivery handed to its workflow waits
 * for the cluster's message storage too), the attempt's start to receipt
 * (signing, HTTP). On PostgreSQL it counts the deliveries that had a
 * workflow (`started`): none when every first attempt succeeds in time.
 *
 * Exits non-zero when a setup misses the target (p50, the rate made, or an
 * event not received).
 *
 *   node bench/webhooks.ts [--setups postgres-1,postgres-2,pglite-1] [--rate 500] [--seconds 10] [--drain 120]
 */
import * as Fs from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { isMainThread, parentPort, Worker } from "node:worker_threads"
import { Webhook } from "standardwebhooks"
import { listOf, positiveNumber } from "./options.ts"
import { createBenchDatabase, withClient } from "./postgres.ts"
import { freePort, postgresCpuBetween, postgresCpuSnapshot, type Server, startServer, stopAll } from "./servers.ts"
import { fixed, median, percentile, renderTable, thousands } from "./stats.ts"

const USAGE = "usage: node bench/webhooks.ts [--setups postgres-1,postgres-2,pglite-1] [--rate 500] [--seconds 10] [--drain 120]"
const TARGET_P50_MS = 1_000
/** The rate made must reach this share of `--rate` for the target to count as met at that rate. */
const RATE_MADE_SHARE = 0.95
const WARM_UP_SECONDS = 5
const WARM_UP_RATE = 20
/** Calls of the load in flight at most: past it the load falls behind (and says so) rather than piling up. */
const MAX_IN_FLIGHT = 256
const ADMIN_TOKEN = "bench-webhooks-admin-token-0123456789"
const APP_ID = "bench-webhooks"

// ---------------------------------------------------------------- the receiver (worker thread)

/** One request as the receiver saw it. */
interface Receipt {
  readonly receivedAt: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

type ToReceiver = { readonly type: "count" } | { readonly type: "collect" }
type FromReceiver =
  | { readonly type: "listening"; readonly port: number }
  | { readonly type: "count"; readonly distinct: number }
  | { readonly type: "collected"; readonly receipts: ReadonlyArray<Receipt> }

const runReceiver = () => {
  const port = parentPort!
  let receipts: Array<Receipt> = []
  let ids = new Set<string>()
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const receivedAt = performance.timeOrigin + performance.now()
      const headers: Record<string, string> = {}
      for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) headers[name] = String(request.headers[name] ?? "")
      receipts.push({ receivedAt, headers, body: Buffer.concat(chunks).toString("utf8") })
      ids.add(headers["webhook-id"]!)
      response.writeHead(204).end()
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, "127.0.0.1", () => port.postMessage({ type: "listening", port: (server.address() as AddressInfo).port } satisfies FromReceiver))
  port.on("message", (message: ToReceiver) => {
    if (message.type === "count") port.postMessage({ type: "count", distinct: ids.size } satisfies FromReceiver)
    else {
      port.postMessage({ type: "collected", receipts } satisfies FromReceiver)
      receipts = []
      ids = new Set()
    }
  })
}

interface Receiver {
  readonly url: string
  readonly distinct: () => Promise<number>
  /** Every request received since the last collect. */
  readonly collect: () => Promise<ReadonlyArray<Receipt>>
  readonly close: () => Promise<number>
}

const startReceiver = async (): Promise<Receiver> => {
  const worker = new Worker(new URL(import.meta.url))
  const next = <T extends FromReceiver["type"]>(type: T) =>
    new Promise<Extract<FromReceiver, { type: T }>>((resolve, reject) => {
      const onMessage = (message: FromReceiver) => {
        if (message.type !== type) return
        worker.off("message", onMessage)
        worker.off("error", reject)
        resolve(message as Extract<FromReceiver, { type: T }>)
      }
      worker.on("message", onMessage)
      worker.once("error", reject)
    })
  const { port } = await next("listening")
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    distinct: async () => {
      const reply = next("count")
      worker.postMessage({ type: "count" } satisfies ToReceiver)
      return (await reply).distinct
    },
    collect: async () => {
      const reply = next("collected")
      worker.postMessage({ type: "collect" } satisfies ToReceiver)
      return (await reply).receipts
    },
    close: () => worker.terminate()
  }
}

// ---------------------------------------------------------------- the load

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

interface Call {
  readonly status: number
  /** The service job made (its event's `data.object.id`). */
  readonly jobId: string | undefined
  /** When its answer came (epoch ms). */
  readonly answeredAt: number
}

interface Load {
  readonly calls: ReadonlyArray<Call>
  readonly seconds: number
  readonly failures: number
}

/** `count` calls at `rate` per second (each at its time, or as soon as fewer than MAX_IN_FLIGHT are in flight). */
const load = async (makeEvent: (index: number) => Promise<Call>, rate: number, count: number): Promise<Load> => {
  const calls: Array<Call> = []
  const running = new Set<Promise<void>>()
  let failures = 0
  const startedAt = performance.now()
  for (let index = 0; index < count; index++) {
    const due = startedAt + (index * 1000) / rate
    while (performance.now() < due || running.size >= MAX_IN_FLIGHT) {
      await (running.size >= MAX_IN_FLIGHT ? Promise.race(running) : sleep(Math.max(0, Math.min(5, due - performance.now()))))
    }
    const call: Promise<void> = makeEvent(index).then((made) => void calls.push(made), () => void failures++).finally(() => running.delete(call))
    running.add(call)
  }
  await Promise.all(running)
  return { calls, seconds: (performance.now() - startedAt) / 1000, failures }
}

// ---------------------------------------------------------------- one setup

const SETUPS = ["postgres-1", "postgres-2", "pglite-1"] as const
type Setup = typeof SETUPS[number]

interface Delivery {
  readonly eventId: string
  readonly status: string
  readonly createdAt: string
  readonly attempts: ReadonlyArray<{ readonly at: string; readonly latencyMs: number; readonly error?: string }>
}

interface Measured {
  readonly setup: Setup
  readonly rateMade: number
  readonly events: number
  readonly received: number
  readonly duplicates: number
  readonly unverified: number
  readonly deliveredPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly fromAnswerP50: number
  readonly fanOutP50: number
  readonly startP50: number
  readonly httpP50: number
  /** The first attempt's whole time as the sender measured it, answer read: how long it held one of the endpoint's slots. */
  readonly attemptP50: number
  /** Deliveries with more than one attempt, and the first failed attempt's reason. */
  readonly retried: number
  readonly retryReason: string | undefined
  /** A repeated request's time after the event's first (median, max). */
  readonly duplicateGapP50: number
  readonly duplicateGapMax: number
  readonly notSucceeded: number
  readonly failures: number
  readonly cpuPercent: number | undefined
  readonly postgresCpuPercent: number | undefined
  /** PostgreSQL transactions committed per event made (the API call's and its delivery's); PostgreSQL only. */
  readonly commitsPerEvent: number | undefined
  /** Deliveries of the measured events that had a workflow (handed on by the dispatcher, or the relay's); PostgreSQL only. */
  readonly workflows: number | undefined
}

const measure = async (setup: Setup, rate: number, seconds: number, drainSeconds: number): Promise<Measured> => {
  const [storage, count] = setup.split("-") as ["postgres" | "pglite", string]
  const instances = Number(count)
  const database = storage === "postgres" ? await createBenchDatabase("mfg_bench_webhooks") : undefined
  const dataDir = storage === "pglite" ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "bench-webhooks-")) : undefined
  const receiver = await startReceiver()
  const servers: Array<Server> = []
  try {
    servers.push(
      ...(await Promise.all(Array.from({ length: instances }, async (_, index) => {
        const port = await freePort()
        return startServer({
          name: `service ${index + 1} (${storage})`,
          args: ["src/main.ts"],
          port,
          env: {
            PORT: String(port),
            HOST: "127.0.0.1",
            ADMIN_TOKEN,
            RATE_LIMIT: "off",
            REQUEST_LOG: "false",
            MODEL_FETCH_ALLOW_PRIVATE: "true",
            CLUSTER_RUNNER_PORT: "0",
            ...(database === undefined ? { DATA_DIR: dataDir! } : { DATABASE_URL: database.url })
          },
          unset: database === undefined ? ["DATABASE_URL"] : [],
          readyPath: "/ready"
        })
      })))
    )
    const created = await fetch(`${servers[0]!.baseUrl}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId: APP_ID, ipAddresses: ["127.0.0.1/32"] })
    })
    const { value: secret } = (await created.json()) as { value: string }
    const call = async (server: Server, method: string, path: string, body?: unknown) => {
      const reply = await fetch(`${server.baseUrl}${path}`, {
        method,
        headers: { authorization: secret, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: reply.status, answeredAt: Date.now(), total: Number(reply.headers.get("x-total-count")), json: (await reply.json()) as any }
    }
    const endpoint = await call(servers[0]!, "POST", "/v1/webhook-endpoint", { url: receiver.url, events: ["*"] })
    if (endpoint.status !== 200) throw new Error(`the endpoint was not created: ${endpoint.status} ${JSON.stringify(endpoint.json)}`)
    const makeEvent = async (index: number): Promise<Call> => {
      const made = await call(servers[index % servers.length]!, "POST", "/v1/service-job", {
        name: `Bench ${index}`,
        technologyId: "fdm",
        ticketModelIds: []
      })
      return { status: made.status, jobId: made.json?.id, answeredAt: made.answeredAt }
    }
    const drained = async (expected: number, within: number) => {
      const deadline = Date.now() + within * 1000
      while ((await receiver.distinct()) < expected) {
        if (Date.now() > deadline) return false
        await sleep(50)
      }
      return true
    }

    const warmUp = await load(makeEvent, WARM_UP_RATE, WARM_UP_SECONDS * WARM_UP_RATE)
    const warmedUp = warmUp.calls.filter((made) => made.status === 200).length
    if (!(await drained(warmedUp, 60))) throw new Error(`${setup}: the warm-up's events were not all received`)
    await receiver.collect()
    const commits = () =>
      database === undefined
        ? Promise.resolve(undefined)
        : withClient(database.name, async (client) =>
          Number(
            (await client.query<{ commits: string }>("SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()")).rows[0]!.commits
          ))
    const commitsBefore = await commits()

    const cpuBefore = servers.map((server) => server.cpuSeconds())
    const postgresBefore = database === undefined ? undefined : postgresCpuSnapshot(database.name)
    const wallBefore = performance.now()
    console.error(`${setup}: ${rate} events/s for ${seconds} s`)
    const measured = await load(makeEvent, rate, Math.round(rate * seconds))
    const made = measured.calls.filter((one) => one.status === 200)
    await drained(made.length, drainSeconds)
    const commitsAfter = await commits()
    const cpuAfter = servers.map((server) => server.cpuSeconds())
    const postgresCpu = database === undefined ? undefined : postgresCpuBetween(postgresBefore, postgresCpuSnapshot(database.name))
    const wall = (performance.now() - wallBefore) / 1000
    const receipts = await receiver.collect()

    // Verified as a receiver would; the first receipt of each event is its latency.
    const webhook = new Webhook(endpoint.json.secret)
    const answeredAt = new Map(made.map((one) => [one.jobId, one.answeredAt]))
    const first = new Map<string, { receivedAt: number; createdAt: number; jobId: string }>()
    const duplicateGaps: Array<number> = []
    let unverified = 0
    for (const receipt of receipts) {
      let event: { id: string; createdAt: string; data: { object: { id: string } } }
      try {
        event = webhook.verify(receipt.body, receipt.headers) as typeof event
      } catch {
        unverified++
        continue
      }
      const earlier = first.get(event.id)
      if (earlier === undefined) {
        first.set(event.id, { receivedAt: receipt.receivedAt, createdAt: Date.parse(event.createdAt), jobId: event.data.object.id })
      } else {
        duplicateGaps.push(receipt.receivedAt - earlier.receivedAt)
      }
    }
    const firsts = [...first.values()]
    const latencies = Float64Array.from(firsts.map((one) => one.receivedAt - one.createdAt)).sort()
    const fromAnswer = firsts.flatMap((one) => {
      const answered = answeredAt.get(one.jobId)
      return answered === undefined ? [] : [one.receivedAt - answered]
    })
    const span = (Math.max(...firsts.map((one) => one.receivedAt)) - Math.min(...firsts.map((one) => one.createdAt))) / 1000

    // Where the time goes, from the deliveries' own records, once they are (the receipt comes before the record).
    const succeededDeadline = Date.now() + 30_000
    const succeeded = () => call(servers[0]!, "GET", `/v1/webhook-delivery?endpointId=${endpoint.json.id}&status=succeeded&limit=1`)
    while ((await succeeded()).total < warmedUp + made.length && Date.now() < succeededDeadline) await sleep(200)
    const deliveries: Array<Delivery> = []
    for (let offset = 0;; offset += 1000) {
      const page = await call(servers[0]!, "GET", `/v1/webhook-delivery?endpointId=${endpoint.json.id}&limit=1000&offset=${offset}`)
      deliveries.push(...(page.json as Array<Delivery>))
      if ((page.json as Array<Delivery>).length < 1000) break
    }
    const stages = deliveries.flatMap((delivery) => {
      const event = first.get(delivery.eventId)
      const attempt = delivery.attempts[0]
      if (event === undefined || attempt === undefined) return []
      const rowAt = Date.parse(delivery.createdAt)
      const attemptAt = Date.parse(attempt.at)
      return [{ fanOut: rowAt - event.createdAt, start: attemptAt - rowAt, http: event.receivedAt - attemptAt, attempt: attempt.latencyMs }]
    })
    const cpu = cpuBefore.every((value) => value !== undefined) && cpuAfter.every((value) => value !== undefined)
      ? cpuAfter.reduce((sum, after, index) => sum + after! - cpuBefore[index]!, 0)
      : undefined
    return {
      setup,
      rateMade: made.length / measured.seconds,
      events: made.length,
      received: first.size,
      duplicates: receipts.length - unverified - first.size,
      unverified,
      deliveredPerSecond: first.size / span,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? Number.NaN,
      fromAnswerP50: median(fromAnswer),
      fanOutP50: median(stages.map((stage) => stage.fanOut)),
      startP50: median(stages.map((stage) => stage.start)),
      httpP50: median(stages.map((stage) => stage.http)),
      attemptP50: median(stages.map((stage) => stage.attempt)),
      duplicateGapP50: median(duplicateGaps),
      duplicateGapMax: Math.max(...duplicateGaps),
      retried: deliveries.filter((delivery) => delivery.attempts.length > 1).length,
      retryReason: deliveries.flatMap((delivery) => delivery.attempts.flatMap((attempt) => attempt.error === undefined ? [] : [attempt.error]))[0],
      notSucceeded: deliveries.filter((delivery) => first.has(delivery.eventId) && delivery.status !== "succeeded").length,
      failures: measured.failures + measured.calls.length - made.length,
      cpuPercent: cpu === undefined ? undefined : (100 * cpu) / wall,
      postgresCpuPercent: postgresCpu === undefined ? undefined : (100 * postgresCpu) / wall,
      commitsPerEvent: commitsBefore === undefined || commitsAfter === undefined ? undefined : (commitsAfter - commitsBefore) / made.length,
      workflows: database === undefined ? undefined : await withClient(database.name, async (client) => {
        const measuredIds = [...first.keys()]
        const counted = await client.query<{ workflows: string }>(
          "SELECT count(*) AS workflows FROM engine_webhook_delivery WHERE started AND event_id = ANY($1::text[])",
          [measuredIds]
        )
        return Number(counted.rows[0]!.workflows)
      })
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    await receiver.close()
    await database?.drop()
    if (dataDir !== undefined) Fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------- run

const main = async () => {
  const { values } = parseArgs({
    options: {
      setups: { type: "string", default: SETUPS.join(",") },
      rate: { type: "string", default: "500" },
      seconds: { type: "string", default: "10" },
      drain: { type: "string", default: "120" }
    }
  })
  const setups = listOf("setups", values.setups, SETUPS, USAGE)
  const rate = positiveNumber("rate", values.rate, false, USAGE)
  const seconds = positiveNumber("seconds", values.seconds, false, USAGE)
  const drain = positiveNumber("drain", values.drain, false, USAGE)

  const rows: Array<Measured> = []
  try {
    for (const setup of setups) rows.push(await measure(setup, rate, seconds, drain))
  } catch (error) {
    await stopAll()
    console.error(error)
    process.exit(1)
  }

  const met = (row: Measured) =>
    row.p50 < TARGET_P50_MS && row.rateMade >= RATE_MADE_SHARE * rate && row.received === row.events && row.unverified === 0 && row.notSucceeded === 0
  /** The target column: met, or what missed it first (the API not making the rate is not a delivery's fault, but no delivery was measured at it). */
  const verdict = (row: Measured) =>
    met(row)
      ? "met"
      : row.received !== row.events || row.unverified > 0 || row.notSucceeded > 0
      ? "MISSED (events lost or unverified)"
      : row.rateMade < RATE_MADE_SHARE * rate
      ? `MISSED (the API made ${fixed(row.rateMade, 0)} events/s, under ${fixed(RATE_MADE_SHARE * rate, 0)})`
      : `MISSED (p50 ${ms(row.p50)} ms)`
  const ms = (value: number) => fixed(value, 0)
  console.log(
    `\nwebhooks: ${rate} events/s for ${seconds} s; target p50 < ${TARGET_P50_MS} ms at ${rate} events/s; ` +
      `${Os.cpus().length} CPUs (${Os.cpus()[0]?.model.trim() ?? "?"}), load average ${Os.loadavg().map((load) => load.toFixed(1)).join(" ")}\n`
  )
  console.log(renderTable(
    ["setup", "events/s made", "delivered/s", "events", "received", "dupes", "p50 ms", "p99 ms", "max ms", "p50 from answer ms", "CPU %", "PG CPU %", "target"],
    rows.map((row) => [
      row.setup,
      fixed(row.rateMade, 0),
      fixed(row.deliveredPerSecond, 0),
      thousands(row.events),
      thousands(row.received),
      thousands(row.duplicates),
      ms(row.p50),
      ms(row.p99),
      ms(row.max),
      ms(row.fromAnswerP50),
      fixed(row.cpuPercent, 0),
      fixed(row.postgresCpuPercent, 0),
      verdict(row)
    ]),
    1,
    [12]
  ))
  console.log(
    "\nwhere the time goes (medians, ms): event -> delivery row (fan-out), row -> first attempt's start (endpoint slot; workflow if handed on), " +
      "attempt -> receipt\n"
  )
  console.log(renderTable(
    ["setup", "fan-out", "start", "http", "attempt", "commits/event", "workflows", "retried", "unverified", "not succeeded", "failed calls"],
    rows.map((row) => [
      row.setup,
      ms(row.fanOutP50),
      ms(row.startP50),
      ms(row.httpP50),
      ms(row.attemptP50),
      fixed(row.commitsPerEvent, 1),
      row.workflows === undefined ? "-" : thousands(row.workflows),
      String(row.retried),
      String(row.unverified),
      String(row.notSucceeded),
      String(row.failures)
    ])
  ))
  for (const row of rows.filter((row) => row.retryReason !== undefined)) console.log(`${row.setup}: a failed attempt: ${row.retryReason}`)
  for (const row of rows.filter((row) => row.duplicates > 0)) {
    console.log(
      `${row.setup}: ${row.duplicates} requests repeated an event, ${ms(row.duplicateGapP50)} ms after its first (median; max ${ms(row.duplicateGapMax)} ms)`
    )
  }
  if (!rows.every(met)) process.exitCode = 1
}

if (isMainThread) await main()
else runReceiver()
