/**
 * What an instance admitted of each app's budget, so that Redis's shared
 * counters can be made whole again after an outage (RateLimitStore.ts):
 *
 * - units admitted in this instance's memory while Redis could not answer
 *   are added to Redis's counters once it answers again, so the calls of the
 *   outage count against the rest of the window;
 * - units this instance took from Redis in the current window are added
 *   again when Redis lost its counters (restarted without them): the window
 *   does not start over for every app.
 *
 * Redis "lost its counters" when its epoch key (`mfg:ratelimit:epoch`, a
 * random value the first instance to miss it sets) is not the one this
 * instance saw before: a Redis restarted from a persisted copy keeps it, and
 * then only the outage's units are added.
 *
 * So a window's calls stay within the budget, plus the lease slack
 * (RateLimiting.ts), plus what the outage itself admitted (each instance up
 * to the budget in its own memory). An entry lasts as long as the counter's
 * window it belongs to; at most MAX_KEYS keys are kept (least recent dropped).
 */
import { Effect } from "effect"
import type { Redis } from "effect/persistence"
import { Redis as RedisScripts } from "effect/persistence"
import { randomUUID } from "node:crypto"
import { setRecent } from "../../domain/RecentMap.ts"

const MAX_KEYS = 10_000
export const EPOCH_KEY = "mfg:ratelimit:epoch"

interface Units {
  tokens: number
  refillMillis: number
  until: number
}

/** Adds units to a counter (the store's fixed window: each unit adds `refillMillis` to its life); a lost counter also gets `before`. */
const addScript = RedisScripts.script(
  (key: string, outage: number, before: number, refillMillis: number) => [key, outage, before, refillMillis],
  {
    numberOfKeys: 1,
    lua: `
local key = KEYS[1]
local add = tonumber(ARGV[1]) + tonumber(ARGV[2])
local refillms = tonumber(ARGV[3])
local current = tonumber(redis.call("GET", key)) or 0
if add <= 0 then return 0 end
local pttl = 0
if current > 0 then pttl = math.max(0, tonumber(redis.call("PTTL", key))) end
local nextpttl = math.max(1, math.ceil(pttl + refillms * add))
redis.call("SET", key, string.format("%.17g", current + add), "PX", nextpttl)
return nextpttl
`
  }
).withReturnType<number>()

/** The epoch, set to `candidate` when missing. */
const epochScript = RedisScripts.script((key: string, candidate: string) => [key, candidate], {
  numberOfKeys: 1,
  lua: `
local current = redis.call("GET", KEYS[1])
if current then return current end
redis.call("SET", KEYS[1], ARGV[1])
return ARGV[1]
`
}).withReturnType<string>()

export const makeLedger = () => {
  const outage = new Map<string, Units>()
  const taken = new Map<string, Units>()
  let seenEpoch: string | undefined

  const record = (map: Map<string, Units>, key: string, tokens: number, refillMillis: number, ttlMs: number) => {
    const now = Date.now()
    let entry = map.get(key)
    if (entry === undefined || entry.until <= now) entry = { tokens: 0, refillMillis, until: now }
    entry.tokens += tokens
    entry.refillMillis = refillMillis
    entry.until = now + ttlMs
    setRecent(map, key, entry, MAX_KEYS)
  }

  /**
   * Adds to Redis what it should hold of this instance's calls: the outage's
   * units, and, when Redis lost its counters, those taken before. One EVAL per
   * key; what could not be added (Redis failed or hung again) stays for the
   * next time.
   */
  const reconcile = (redis: Redis.Redis["Service"], prefix: string) =>
    Effect.gen(function*() {
      const epoch = yield* redis.eval(epochScript)(EPOCH_KEY, randomUUID())
      const lost = seenEpoch !== undefined && epoch !== seenEpoch
      seenEpoch = epoch
      const now = Date.now()
      const keys = new Set([...outage.keys(), ...(lost ? taken.keys() : [])])
      const add = redis.eval(addScript)
      let units = 0
      for (const key of keys) {
        const during = outage.get(key)
        const before = lost ? taken.get(key) : undefined
        const outageTokens = during !== undefined && during.until > now ? during.tokens : 0
        const beforeTokens = before !== undefined && before.until > now ? before.tokens : 0
        if (outageTokens + beforeTokens === 0) {
          if (during !== undefined) outage.delete(key)
          continue
        }
        const refillMillis = (during ?? before)!.refillMillis
        const ttl = yield* add(prefix + key, outageTokens, beforeTokens, refillMillis)
        // Added: out of the outage's units (those admitted meanwhile stay), and now taken from Redis, should it lose them again.
        if (during !== undefined) {
          during.tokens -= outageTokens
          if (during.tokens <= 0) outage.delete(key)
        }
        record(taken, key, outageTokens, refillMillis, Number(ttl))
        units += outageTokens + beforeTokens
      }
      return { lost, keys: keys.size, units }
    })

  return {
    /** Units admitted in this instance's memory while Redis could not answer (`ttlMs`: the memory counter's life left). */
    admittedInMemory: (key: string, tokens: number, refillMillis: number, ttlMs: number) => record(outage, key, tokens, refillMillis, ttlMs),
    /** Units Redis admitted for this instance (`ttlMs`: the counter's life left). */
    takenFromRedis: (key: string, tokens: number, refillMillis: number, ttlMs: number) => record(taken, key, tokens, refillMillis, ttlMs),
    reconcile,
    /** Whether units admitted in memory wait to be added. */
    pending: () => outage.size > 0
  }
}

export type Ledger = ReturnType<typeof makeLedger>
