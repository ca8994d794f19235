/**
 * Webhooks across two gateways on one PostgreSQL, one of them SIGKILLed while
 * its deliveries are in flight (issue 20): every event of the app still
 * reaches the receiver (at least once: a request the killed instance had
 * sent is sent again by the survivor, which starts the workflows of the
 * deliveries the killed one's dispatcher had leased once their lease runs
 * out, and takes over the workflows on its shards), every request verifies
 * with the `standardwebhooks` library, and every delivery ends `succeeded`,
 * one per event.
 *
 * The receiver is a node http server that answers 200 after ANSWER_DELAY_MS,
 * so that each instance has requests in flight (four at a time per endpoint)
 * when the kill comes. It tells which instance sent each request by the
 * process that owns the connection's other end (Linux /proc), so the test
 * knows both instances delivered, and kills one with a request of its own in
 * flight.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import pg from "pg"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminQuery } from "../support/backends.ts"
import { startNodeServer } from "../support/processes.ts"

const POSTGRES_URL = process.env.TEST_DATABASE_URL
const ADMIN_TOKEN = "webhook-instances-admin-token-0123"
/** The drill's events, after the warm-up's. */
const EVENTS = 200
const WARM_UP_ROUND = 6
const ANSWER_DELAY_MS = 400
/** Received before the kill, so that it comes mid-delivery rather than at the start. */
const RECEIVED_BEFORE_KILL = 40
/**
 * The killed instance's leased deliveries are the survivor's relay's once the
 * lease (WEBHOOK_TIMEOUT, 10 s, + 20 s: src/engine/events/dispatcher.ts) has
 * run out, its workflows once its shards are free (15 s after its last lock
 * refresh, src/app/Webhooks.ts), and the relay itself moves then if it ran
 * there; then the rest is delivered, ten a second.
 */
const ALL_RECEIVED_WITHIN_MS = 120_000

type Gateway = Awaited<ReturnType<typeof startNodeServer>>

interface Received {
  readonly webhookId: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly at: number
  /** The pid of the process that sent it, when /proc tells. */
  readonly sender: number | undefined
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const until = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMs: number, detail: () => string = () => "") => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms ${detail()}`)
    await sleep(50)
  }
}

/** `/ready` answers 200: "Listening on" is logged by the cluster's runner too, before the HTTP server listens. */
const ready = (gateway: Gateway) =>
  until(`${gateway.base}/ready`, async () => {
    try {
      const reply = await fetch(`${gateway.base}/ready`, { signal: AbortSignal.timeout(2_000) })
      await reply.arrayBuffer()
      return reply.status === 200
    } catch {
      return false
    }
  }, 30_000)

// ---------------------------------------------------------------------------
// Which process sent a request: the owner of the connection's client end

const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, "0")

/** The inode of the IPv4 socket bound to 127.0.0.1:`localPort` and connected to 127.0.0.1:`remotePort`. */
const socketInode = (localPort: number, remotePort: number): string | undefined => {
  const local = `0100007F:${hexPort(localPort)}`
  const remote = `0100007F:${hexPort(remotePort)}`
  for (const line of Fs.readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/)
    if (fields[1] === local && fields[2] === remote) return fields[9]
  }
  return undefined
}

const ownsSocket = (pid: number, inode: string) => {
  const link = `socket:[${inode}]`
  try {
    return Fs.readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return Fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === link
      } catch {
        return false
      }
    })
  } catch {
    return false
  }
}

const senderOf = (socket: Socket, receiverPort: number, candidates: ReadonlyArray<number>): number | undefined => {
  if (socket.remotePort === undefined) return undefined
  const inode = socketInode(socket.remotePort, receiverPort)
  return inode === undefined ? undefined : candidates.find((pid) => ownsSocket(pid, inode))
}

// ---------------------------------------------------------------------------
// The receiver

const startReceiver = async (candidates: () => ReadonlyArray<number>) => {
  const received: Array<Received> = []
  /** The webhook-ids of the requests each sender awaits the answer to. */
  const inFlight = new Map<number | undefined, Set<string>>()
  const senders = new WeakMap<Socket, number | undefined>()
  let port = 0
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const sender = senders.get(request.socket)
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
      const webhookId = headers["webhook-id"] ?? ""
      received.push({ webhookId, headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now(), sender })
      const awaiting = inFlight.get(sender) ?? new Set<string>()
      inFlight.set(sender, awaiting.add(webhookId))
      setTimeout(() => {
        awaiting.delete(webhookId)
        if (!response.destroyed) response.writeHead(200, { "content-type": "text/plain" }).end("received")
      }, ANSWER_DELAY_MS)
    })
  })
  server.on("connection", (socket: Socket) => senders.set(socket, senderOf(socket, port, candidates())))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    inFlight: (pid: number): ReadonlyArray<string> => [...(inFlight.get(pid) ?? [])],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

// ---------------------------------------------------------------------------

// The sender of a request is known from Linux's /proc only.
describe.skipIf(POSTGRES_URL === undefined || process.platform !== "linux")("Webhooks from two gateways on one PostgreSQL, one SIGKILLed mid-delivery", () => {
  const database = `mfg_webhooks_${randomBytes(6).toString("hex")}`
  const databaseUrl = (() => {
    if (POSTGRES_URL === undefined) return ""
    const url = new URL(POSTGRES_URL)
    url.pathname = `/${database}`
    return url.toString()
  })()
  const gateways: Array<Gateway> = []
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined

  beforeAll(async () => {
    await Effect.runPromise(adminQuery(`CREATE DATABASE ${database}`))
    const env = {
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN,
      CLUSTER_RUNNER_PORT: "0",
      MODEL_FETCH_ALLOW_PRIVATE: "true",
      RATE_LIMIT: "off",
      REQUEST_LOG: "false"
    }
    // Started together: the migrations' table lock lets only one apply them.
    gateways.push(...(await Promise.all([startNodeServer("src/main.ts", env), startNodeServer("src/main.ts", env)])))
    await Promise.all(gateways.map(ready))
    receiver = await startReceiver(() => gateways.map((gateway) => gateway.child.pid!))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()))
    await receiver?.close()
    await Effect.runPromise(adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
  }, 60_000)

  it("delivers every event at least once, signed, and every delivery ends succeeded", async () => {
    const startedAt = Date.now()
    const [a, b] = gateways as [Gateway, Gateway]
    const hooks = receiver!
    const created = await fetch(`${a.base}/api/v1/secret`, {
      method: "POST",
      headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ appId: "webhook-drill", ipAddresses: ["0.0.0.0/0"] })
    })
    expect(created.status).toBe(201)
    const { value: secret } = (await created.json()) as { value: string }
    const call = async (gateway: Gateway, method: string, path: string, body?: unknown) => {
      const reply = await fetch(`${gateway.base}${path}`, {
        method,
        headers: { authorization: secret, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(15_000)
      })
      return { status: reply.status, total: Number(reply.headers.get("x-total-count")), json: (await reply.json()) as any }
    }

    const endpoint = await call(a, "POST", "/v1/webhook-endpoint", { url: hooks.url, events: ["*"] })
    expect(endpoint.status, JSON.stringify(endpoint.json)).toBe(200)
    const signingSecret: string = endpoint.json.secret

    // An event: a service job created through a gateway writes `service_job.created` with it.
    let made = 0
    const makeEvents = async (count: number) => {
      const replies = await Promise.all(Array.from({ length: count }, () => {
        const index = made++
        return call(index % 2 === 0 ? a : b, "POST", "/v1/service-job", { name: `Drill ${index}`, technologyId: "fdm", ticketModelIds: [] })
      }))
      expect(replies.filter((reply) => reply.status !== 200).map((reply) => reply.json)).toEqual([])
    }

    // Each instance makes the first attempts of its own calls' events; a runner sees the other within the cluster's
    // 3 s refresh of shard assignments, and workflows (retries, hand-offs) may run on either. Rounds of a few events
    // until both instances deliver one round's.
    const warmUpStartedAt = Date.now()
    await until("both instances delivering", async () => {
      const from = hooks.received.length
      await makeEvents(WARM_UP_ROUND)
      await until("a warm-up round received", () => hooks.received.length >= from + WARM_UP_ROUND, 30_000)
      const round = hooks.received.slice(from)
      return gateways.every((gateway) => round.some((request) => request.sender === gateway.child.pid))
    }, 45_000)
    const warmUpMs = Date.now() - warmUpStartedAt

    const drillStartedAt = Date.now()
    const firstOfDrill = hooks.received.length
    for (let next = 0; next < EVENTS; next += 10) await makeEvents(Math.min(10, EVENTS - next))
    const madeMs = Date.now() - drillStartedAt
    const fromInDrill = (gateway: Gateway) => hooks.received.slice(firstOfDrill).filter((request) => request.sender === gateway.child.pid).length

    // The kill: once the drill's deliveries are under way from both instances, the one with a request in flight right now.
    let victim: Gateway | undefined
    await until(
      "a request in flight from a gateway, both delivering",
      () => {
        if (hooks.received.length - firstOfDrill < RECEIVED_BEFORE_KILL || !gateways.every((gateway) => fromInDrill(gateway) > 0)) return false
        victim = [b, a].find((gateway) => hooks.inFlight(gateway.child.pid!).length > 0)
        return victim !== undefined
      },
      60_000,
      () => JSON.stringify({ received: hooks.received.length - firstOfDrill, a: fromInDrill(a), b: fromInDrill(b) })
    )
    const killedPid = victim!.child.pid!
    const survivor = victim === a ? b : a
    // Never answered to the killed instance, so never recorded: the survivor must send each again.
    const inFlightAtKill = hooks.inFlight(killedPid)
    const receivedAtKill = hooks.received.length - firstOfDrill
    const fromVictimBeforeKill = fromInDrill(victim!)
    const fromSurvivorBeforeKill = fromInDrill(survivor)
    await victim!.kill()
    const killedAt = Date.now()
    expect(victim!.child.signalCode).toBe("SIGKILL")

    const sql = new pg.Client({ connectionString: databaseUrl })
    await sql.connect()
    let eventIds: ReadonlyArray<string>
    try {
      eventIds = (await sql.query<{ id: string }>("SELECT id FROM engine_event WHERE app_id = $1", ["webhook-drill"])).rows.map((row) => row.id)
    } finally {
      await sql.end()
    }
    expect(eventIds.length, "one service_job.created event per service job made").toBe(made)

    const distinctReceived = () => new Set(hooks.received.map((request) => request.webhookId))
    const missing = () => eventIds.filter((id) => !distinctReceived().has(id))
    await until("every event received", () => missing().length === 0, ALL_RECEIVED_WITHIN_MS, () => `${missing().length} missing`)
    const allReceivedMs = Date.now() - killedAt

    // The deliveries as the API reports them, through the surviving gateway.
    const listed = () => call(survivor, "GET", `/v1/webhook-delivery?endpointId=${endpoint.json.id}&status=succeeded&limit=1`)
    await until("every delivery succeeded", async () => (await listed()).total === made, 30_000)
    const deliveries = await call(survivor, "GET", `/v1/webhook-delivery?endpointId=${endpoint.json.id}&limit=1000`)
    expect(deliveries.status).toBe(200)
    expect(deliveries.json.map((delivery: { status: string }) => delivery.status)).toEqual(Array(made).fill("succeeded"))
    expect(new Set(deliveries.json.map((delivery: { eventId: string }) => delivery.eventId))).toEqual(new Set(eventIds))

    // Every request verifies, and carries the event its webhook-id names.
    const webhook = new Webhook(signingSecret)
    for (const request of hooks.received) {
      const event = webhook.verify(request.body, request.headers) as { id: string; type: string; appId: string }
      expect(event.id).toBe(request.webhookId)
      expect(event.type).toBe("service_job.created")
      expect(event.appId).toBe("webhook-drill")
    }

    // Both delivered before the kill, and the killed one had a request in flight; the survivor sent the rest.
    const afterKill = hooks.received.filter((request) => request.at > killedAt)
    const summary = {
      events: made,
      warmUpEvents: made - EVENTS,
      warmUpMs,
      received: hooks.received.length,
      distinct: distinctReceived().size,
      duplicates: hooks.received.length - distinctReceived().size,
      receivedAtKill,
      fromVictimBeforeKill,
      fromSurvivorBeforeKill,
      inFlightAtKill: inFlightAtKill.length,
      unattributed: hooks.received.filter((request) => request.sender === undefined).length,
      madeMs,
      killedAfterMs: killedAt - drillStartedAt,
      allReceivedAfterKillMs: allReceivedMs,
      totalMs: Date.now() - startedAt
    }
    console.log(`webhook drill ${JSON.stringify(summary)}`)
    expect(fromVictimBeforeKill).toBeGreaterThan(0)
    expect(fromSurvivorBeforeKill).toBeGreaterThan(0)
    expect(inFlightAtKill.length).toBeGreaterThan(0)
    const sentAgain = new Set(afterKill.map((request) => request.webhookId))
    expect(inFlightAtKill.filter((id) => !sentAgain.has(id)), "in flight at the kill, not sent again by the survivor").toEqual([])
    expect(afterKill.every((request) => request.sender === survivor.child.pid)).toBe(true)
    expect(summary.unattributed).toBe(0)
  }, 240_000)
})
