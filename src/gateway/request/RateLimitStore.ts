/**
 * Where the rate limits' counters live (effect/persistence RateLimiterStore):
 *
 * - REDIS_URL unset: this instance's memory (`RateLimiter.layerStoreMemory`);
 *   each instance counts its own calls.
 * - REDIS_URL set: Redis (`RateLimiter.makeStoreRedis` over NodeRedis, keys
 *   `mfg:ratelimit:*`), so every instance draws on one budget per app.
 *
 * A Redis outage neither lets every call through nor refuses them all: while
 * Redis cannot answer, each call is counted in this instance's memory
 * instead, against the same budget, so each instance enforces the whole
 * budget on its own (with N instances an app gets at most N times its
 * budget for the outage). "Cannot answer" is any of: not connected (refused,
 * dropped; a command then fails at once, nothing waits in a queue), a
 * command that failed (Redis is then not asked for RETRY_AFTER_FAILURE_MS),
 * or no answer for COMMAND_TIMEOUT_MS while commands wait (a hung server:
 * the watchdog drops the connection, which fails the waiting commands, so
 * a call waits at most about that long). The first fallback of an outage logs
 * a warning, every fallback counts in `rate_limit.store_fallbacks`, the gauge
 * `rate_limit.store_degraded` is 1 for as long as it lasts, and the first
 * call counted in Redis again logs an info line.
 *
 * When Redis answers again (and at every connection), the instance adds to
 * Redis's counters what it admitted in memory meanwhile, and, if Redis lost
 * its counters (a restart without them), what it had taken from them in the
 * current windows (RateLimitLedger.ts): a Redis restart does not hand every
 * app a fresh budget. node-redis
 * reconnects by itself after a drop; a connection it gave up, or dropped by
 * the watchdog, or Redis unreachable at start, is opened again every
 * RECONNECT_INTERVAL_MS. The start waits at most FIRST_CONNECT_WAIT_MS for
 * the first connection, then serves with the fallback.
 *
 * With Redis, the server's `/ready` checks it (ReadinessChecks, name
 * `redis`): a PING on the store's connection. The check is not required:
 * while Redis is down `/ready` still answers 200 (the fallback serves) and
 * names the cause, so a balancer that follows readiness keeps the fleet.
 *
 * The Redis client (node-redis, about 1.3 MB of JavaScript and its
 * command tables) is loaded only when REDIS_URL is set.
 */
import type * as NodeRedisModule from "@effect/platform-node/NodeRedis"
import { Cause, Context, Deferred, Duration, Effect, Layer, Option, Redacted, References, Semaphore } from "effect"
import { RateLimiter, Redis } from "effect/persistence"
import { causeInWords } from "../../platform/Readiness.ts"
import { DependencyUnreachable, ReadinessChecks } from "../../services/Readiness.ts"
import { type Ledger, makeLedger } from "./RateLimitLedger.ts"

/** Commands waiting this long with no answer at all mean a hung Redis. */
export const COMMAND_TIMEOUT_MS = 500
const WATCHDOG_INTERVAL_MS = 100
const RETRY_AFTER_FAILURE_MS = 1_000
const RECONNECT_INTERVAL_MS = 1_000
const CONNECT_TIMEOUT_MS = 2_000
const FIRST_CONNECT_WAIT_MS = 2_000
const KEY_PREFIX = "mfg:ratelimit:"
const RECONCILE_TIMEOUT_MS = 5_000

type Store = RateLimiter.RateLimiterStore["Service"]

/** What the store tells the operator: fallbacks (metric and warning) and the connection's state (log). */
export interface StoreEvents {
  /** One call counted in memory because Redis could not answer; `first` for the first of an outage. */
  readonly fallback: (first: boolean, cause: string) => Effect.Effect<void>
  readonly connected: Effect.Effect<void>
  readonly recovered: Effect.Effect<void>
  /** What was added to Redis's counters after an outage (units admitted meanwhile, and those Redis lost). */
  readonly reconciled: (report: { readonly lost: boolean; readonly keys: number; readonly units: number }) => Effect.Effect<void>
}

const memoryStore: Effect.Effect<Store> = Effect.gen(function*() {
  return yield* RateLimiter.RateLimiterStore
}).pipe(Effect.provide(RateLimiter.layerStoreMemory))

/** What went wrong with a Redis command, for the warning: node-redis's own message when there is one. */
const describe = (error: RateLimiter.RateLimiterError): string => {
  const cause = error.reason._tag === "RateLimitStoreError" ? error.reason.cause : undefined
  return cause instanceof Error ? cause.message : error.message
}

/** The node-redis client, as far as the store looks at it. */
interface Client {
  readonly isReady: boolean
  readonly isOpen: boolean
  readonly destroy: () => void
  readonly ping: () => Promise<unknown>
  readonly on: (event: "ready", listener: () => void) => unknown
}

/** The open connection, its store, and its commands (for the ledger's scripts). */
interface Connection {
  readonly client: Client
  readonly store: Store
  readonly redis: Redis.Redis["Service"]
}

/** The commands of one connection sent and not answered, and when one last answered (or the first of them was sent). */
interface Waiting {
  count: number
  progressAt: number
}

/** Redis when it answers, this instance's memory when it does not; with the watchdog of hung commands. */
const failover = (memory: Store, events: StoreEvents, ledger: Ledger, runInBackground: (effect: Effect.Effect<void>) => void) => {
  let connection: (Connection & { readonly waiting: Waiting }) | undefined
  let degraded = false
  let skipUntil = 0
  // One reconciliation at a time; one asked for while one runs runs after it.
  const reconciling = Semaphore.makeUnsafe(1)

  /** Adds to Redis what it should hold of this instance's calls (RateLimitLedger.ts), in the background. */
  const reconcile = () => {
    const open = connection
    if (open === undefined) return
    runInBackground(reconciling.withPermit(
      ledger.reconcile(open.redis, KEY_PREFIX).pipe(
        // A Redis that hangs again: given up, tried at the next recovery.
        Effect.timeout(RECONCILE_TIMEOUT_MS),
        Effect.flatMap((report) => report.units === 0 ? Effect.void : events.reconciled(report)),
        // Redis cannot answer again: what was not added is added at the next recovery.
        Effect.catchCause((cause) => Effect.logDebug("rate limits: counters not reconciled yet", cause))
      )
    ))
  }

  const fallback = <A, E>(cause: string, local: Effect.Effect<A, E>) => {
    const first = !degraded
    degraded = true
    return Effect.andThen(events.fallback(first, cause), local)
  }
  const answered = (waiting: Waiting) => {
    waiting.count--
    waiting.progressAt = Date.now()
  }
  const route = <A>(
    remote: (store: Store) => Effect.Effect<A, RateLimiter.RateLimiterError>,
    local: Effect.Effect<A, RateLimiter.RateLimiterError>
  ): Effect.Effect<A, RateLimiter.RateLimiterError> =>
    Effect.suspend(() => {
      const open = connection
      if (open === undefined || !open.client.isReady) return fallback("Redis is not connected", local)
      if (skipUntil > 0 && Date.now() < skipUntil) return fallback("a recent Redis command failed", local)
      const waiting = open.waiting
      if (waiting.count++ === 0) waiting.progressAt = Date.now()
      const counted = Effect.onExit(remote(open.store), () => Effect.sync(() => answered(waiting)))
      const noted = degraded
        ? Effect.tap(counted, () =>
          Effect.suspend(() => {
            if (!degraded) return Effect.void
            degraded = false
            skipUntil = 0
            reconcile()
            return events.recovered
          }))
        : counted
      return Effect.catch(noted, (error) => {
        skipUntil = Date.now() + RETRY_AFTER_FAILURE_MS
        return fallback(`Redis command failed: ${describe(error)}`, local)
      })
    })

  /** A hung server: drop the connection, which fails the waiting commands (their calls are counted in memory). */
  const watchdog = Effect.sync(() => {
    const open = connection
    if (open === undefined || open.waiting.count === 0 || Date.now() - open.waiting.progressAt < COMMAND_TIMEOUT_MS) return
    connection = undefined
    open.client.destroy()
  })

  /** A counter's answer, noted in the ledger when it admitted the units (`count` within the limit, or no limit). */
  const noted = (
    options: Parameters<Store["fixedWindow"]>[0],
    note: (key: string, tokens: number, refillMillis: number, ttlMs: number) => void
  ) =>
  <E>(answer: Effect.Effect<readonly [count: number, ttl: number], E>) =>
    Effect.tap(answer, ([count, ttl]) =>
      Effect.sync(() => {
        if (options.limit === undefined || count <= options.limit) note(options.key, options.tokens, Duration.toMillis(options.refillRate), ttl)
      }))

  const store = RateLimiter.RateLimiterStore.of({
    fixedWindow: (options) =>
      route(
        (remote) => remote.fixedWindow(options).pipe(noted(options, ledger.takenFromRedis)),
        memory.fixedWindow(options).pipe(noted(options, ledger.admittedInMemory))
      ),
    tokenBucket: (options) => route((remote) => remote.tokenBucket(options), memory.tokenBucket(options)),
    // The adaptive state (unused here) stays in memory.
    adaptiveConsume: memory.adaptiveConsume,
    adaptiveFeedback: memory.adaptiveFeedback
  })
  /** Redis answers a PING on the store's connection (none, or one reconnecting, does not answer). */
  const ping = (notConnected: () => string) =>
    Effect.suspend(() => {
      const open = connection
      if (open === undefined) return Effect.fail(new DependencyUnreachable({ cause: notConnected() }))
      if (!open.client.isReady) return Effect.fail(new DependencyUnreachable({ cause: "not connected (reconnecting)" }))
      return Effect.tryPromise({
        try: () => open.client.ping(),
        catch: (error) => new DependencyUnreachable({ cause: causeInWords(error, "PING failed") })
      }).pipe(Effect.asVoid)
    })
  return {
    store,
    watchdog,
    ping,
    set: (next: Connection | undefined) => {
      connection = next === undefined ? undefined : { ...next, waiting: { count: 0, progressAt: 0 } }
    },
    reconcile
  }
}

/** One connection to Redis, held until it is closed for good (node-redis reconnects by itself before that). */
const connectOnce = (
  NodeRedis: typeof NodeRedisModule,
  url: string,
  onOpen: (connection: Connection | undefined) => void,
  onReady: () => void,
  events: StoreEvents
) =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(NodeRedis.layer({
      url,
      // A command while disconnected fails at once (the call is counted in memory) instead of waiting in a queue.
      disableOfflineQueue: true,
      socket: { connectTimeout: CONNECT_TIMEOUT_MS }
    })).pipe(
      // NodeRedis warns of every socket error, each reconnection attempt included; the fallback's warning says it once.
      Effect.provideService(References.MinimumLogLevel, "Error")
    )
    const { client } = Context.get(context, NodeRedis.NodeRedis)
    const store = yield* Effect.provideContext(RateLimiter.makeStoreRedis({ prefix: KEY_PREFIX }), context)
    onOpen({ client, store, redis: Context.get(context, Redis.Redis) })
    yield* events.connected
    // Connected, and connected again after each drop node-redis recovers from: the counters may have been lost meanwhile.
    onReady()
    client.on("ready", onReady)
    while (client.isOpen) yield* Effect.sleep(RECONNECT_INTERVAL_MS)
  })).pipe(Effect.ensuring(Effect.sync(() => onOpen(undefined))))

/**
 * The counters' store for `redisUrl` (memory when none). With Redis, fibers
 * of `scope` keep a connection open and watch it for the life of the service.
 */
export const makeRateLimiterStore = Effect.fnUntraced(function*(
  redisUrl: Option.Option<Redacted.Redacted>,
  events: StoreEvents
) {
  const memory = yield* memoryStore
  if (Option.isNone(redisUrl)) return memory
  const url = Redacted.value(redisUrl.value)
  const NodeRedis = yield* Effect.promise(() => import("@effect/platform-node/NodeRedis"))
  // With the service's context (its logger), in the layer's scope (interrupted at shutdown).
  const scope = yield* Effect.scope
  const runFork = Effect.runForkWith(yield* Effect.context<never>())
  const runInBackground = (effect: Effect.Effect<void>) => {
    runFork(Effect.forkIn(effect, scope))
  }
  const routed = failover(memory, events, makeLedger(), runInBackground)
  // One warning for a series of failed attempts, not one a second.
  let failing = false
  // Why the last attempt to connect failed, for `/ready`.
  let connectFailure = "not connected"
  // Settled by the first connection or the first failure to connect, whichever comes first.
  const settled = yield* Deferred.make<void>()
  const onOpen = (next: Connection | undefined) => {
    routed.set(next)
    if (next === undefined) return
    failing = false
    connectFailure = "not connected"
    Deferred.doneUnsafe(settled, Effect.void)
  }
  const attempt = connectOnce(NodeRedis, url, onOpen, () => routed.reconcile(), events).pipe(
    Effect.catchCause((cause) =>
      Effect.suspend(() => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
        connectFailure = `not connected (${causeInWords(Cause.squash(cause), "cannot connect")})`
        if (failing) return Effect.void
        failing = true
        return Effect.logWarning("rate limits: cannot connect to Redis (REDIS_URL); each instance counts in its own memory", cause)
      })
    ),
    Effect.ensuring(Deferred.succeed(settled, undefined))
  )
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(attempt, Effect.sleep(RECONNECT_INTERVAL_MS))))
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(WATCHDOG_INTERVAL_MS), routed.watchdog)))
  const readiness = yield* ReadinessChecks
  readiness.add({
    name: "redis",
    probe: routed.ping(() => connectFailure),
    whileDown: "rate limits counted in each instance's memory"
  })
  // The start waits for the first connection a little, so the first calls are counted in Redis.
  yield* Deferred.await(settled).pipe(Effect.timeoutOption(FIRST_CONNECT_WAIT_MS))
  return routed.store
})
