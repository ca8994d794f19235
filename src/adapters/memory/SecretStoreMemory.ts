/**
 * SecretStore in memory: the same checks as SecretStoreSql (format, hash,
 * release date, IP ranges), over a map that lives as long as the layer. For
 * compositions without a database (a test, an example); nothing survives it.
 */
import { Effect, Layer, Result } from "effect"
import { IpNetwork } from "effect/net"
import { randomBytes, timingSafeEqual } from "node:crypto"
import { NotFound } from "../../domain/Errors.ts"
import { canonicalScopes, dataSpaceOf, type Grants, SCOPES } from "../../domain/Grants.ts"
import { isAllowed, parseIpRange } from "../../domain/IpAllowList.ts"
import { type Caller, SECRET_VALUE_PATTERN, type SecretIssued, type SecretView } from "../../domain/Secret.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { AuthenticationFailed, secretDigest, SecretStore } from "../../services/SecretStore.ts"

interface StoredSecret {
  readonly view: SecretView
  readonly hash: Buffer
  readonly grantsVersion: number
}

/** Ranges in their canonical CIDR form (`1.2.3.4` becomes `1.2.3.4/32`), as SecretStoreSql stores them. */
const canonicalRanges = (ranges: ReadonlyArray<string>) =>
  ranges.map((text) => {
    const parsed = parseIpRange(text)
    return Result.isSuccess(parsed) ? IpNetwork.format(parsed.success) : text
  })

const grantsOf = (secret: StoredSecret): Grants => ({
  version: secret.grantsVersion,
  scopes: new Set(secret.view.scopes),
  mode: secret.view.mode,
  maxAcceptTotal: secret.view.maxAcceptTotal
})

const callerOf = (secret: StoredSecret): Caller => ({
  appId: secret.view.appId,
  secretId: secret.view.id,
  secretHash: secret.hash.toString("hex"),
  grants: grantsOf(secret),
  dataSpace: dataSpaceOf(secret.view.appId, secret.view.mode)
})

/** A new value for the secret `id`, and its hash. */
const issueValue = (id: string) => {
  const value = `${id}.${randomBytes(32).toString("base64url")}`
  return { value, hash: secretDigest(value) }
}

const issued = (secret: StoredSecret, value: string): SecretIssued => {
  const { issuedAt: _issuedAt, usedAt: _usedAt, ...view } = secret.view
  return { ...view, value }
}

export const SecretStoreMemory = Layer.effect(
  SecretStore,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const secrets = new Map<string, StoredSecret>()
    const found = (secretId: string) => {
      const secret = secrets.get(secretId)
      return secret === undefined ? Effect.fail(NotFound.of(`secret ${secretId} not found`)) : Effect.succeed(secret)
    }

    return SecretStore.of({
      create: (request) =>
        Effect.sync(() => {
          const id = randomBytes(12).toString("hex")
          const { hash, value } = issueValue(id)
          const now = new Date().toISOString()
          const secret: StoredSecret = {
            view: {
              id,
              appId: request.appId,
              name: request.name ?? null,
              ipAddresses: canonicalRanges(request.ipAddresses),
              scopes: canonicalScopes(request.scopes ?? SCOPES),
              mode: request.mode ?? "live",
              maxAcceptTotal: request.maxAcceptTotal ?? null,
              createdAt: now,
              issuedAt: now,
              usedAt: null
            },
            hash,
            grantsVersion: 0
          }
          secrets.set(id, secret)
          return issued(secret, value)
        }),
      regenerate: (secretId) =>
        Effect.map(found(secretId), (secret) => {
          const { hash, value } = issueValue(secretId)
          const regenerated = { ...secret, hash, view: { ...secret.view, issuedAt: new Date().toISOString() } }
          secrets.set(secretId, regenerated)
          return issued(regenerated, value)
        }),
      remove: (secretId) => Effect.map(found(secretId), () => void secrets.delete(secretId)),
      update: (secretId, change) =>
        Effect.map(found(secretId), (secret) => {
          const updated: StoredSecret = {
            ...secret,
            grantsVersion: secret.grantsVersion + 1,
            view: {
              ...secret.view,
              ...(change.scopes === undefined ? {} : { scopes: canonicalScopes(change.scopes) }),
              ...(change.mode === undefined ? {} : { mode: change.mode }),
              ...(change.maxAcceptTotal === undefined ? {} : { maxAcceptTotal: change.maxAcceptTotal })
            }
          }
          secrets.set(secretId, updated)
          return updated.view
        }),
      list: (appId) => Effect.sync(() => [...secrets.values()].map((secret) => secret.view).filter((view) => appId === undefined || view.appId === appId)),
      authenticate: (presented, clientAddress) =>
        Effect.suspend(() => {
          const match = SECRET_VALUE_PATTERN.exec(presented)
          if (match === null) return Effect.fail(AuthenticationFailed.because("malformed"))
          const secret = secrets.get(match[1]!)
          if (secret === undefined) return Effect.fail(AuthenticationFailed.because("unknown-secret"))
          if (!timingSafeEqual(secret.hash, secretDigest(presented))) return Effect.fail(AuthenticationFailed.because("wrong-secret"))
          if (Date.parse(secret.view.issuedAt) < config.releasedAt.getTime()) return Effect.fail(AuthenticationFailed.because("before-release"))
          const ranges = secret.view.ipAddresses.flatMap((text) => {
            const parsed = parseIpRange(text)
            return Result.isSuccess(parsed) ? [parsed.success] : []
          })
          if (!isAllowed(ranges, clientAddress)) return Effect.fail(AuthenticationFailed.because("ip-blocked"))
          return Effect.succeed(callerOf(secret))
        }),
      // Nothing is remembered apart from the map itself.
      forget: () => {}
    })
  })
)
