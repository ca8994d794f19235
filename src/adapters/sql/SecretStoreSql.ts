/**
 * SecretStore over SQL.
 *
 * Only SHA-256 hashes of values are stored. A verified secret's record is
 * remembered in memory so the usual call needs no lookup: the meter flush
 * that every call waits for confirms, in the same statement, that the
 * secret still exists with that hash (see MeterSql). Every failing check
 * looks the record up again, and the lookup answers one row whether the id
 * exists or not (a decoy of the same shape when it does not), checked the
 * same way: an unknown id, a wrong random part, a release-date refusal and a
 * blocked address cost the same (bench/auth-timing.ts measures it).
 *
 * A secret's grants (scopes, mode, spend limit) are remembered with it. A
 * change of them increments `grants_version`; the meter's flush writes a
 * call's row only while the version the call was decided with is current,
 * so a change made on one instance holds on every instance from the next
 * call, as a revocation does (IncomingSecretGuard looks the secret up again).
 */
import { Effect, Layer, Result } from "effect"
import { IpNetwork } from "effect/net"
import { SqlClient } from "effect/sql"
import { hash, randomBytes, timingSafeEqual } from "node:crypto"
import { NotFound } from "../../domain/Errors.ts"
import { canonicalScopes, dataSpaceOf, type Grants, type Mode, MODES, type Scope, SCOPES } from "../../domain/Grants.ts"
import { type IpRange, isAllowed, parseIpRange } from "../../domain/IpAllowList.ts"
import { setRecent } from "../../domain/RecentMap.ts"
import { type Caller, SECRET_VALUE_PATTERN, type SecretIssued, type SecretView } from "../../domain/Secret.ts"
import { AppConfig } from "../../services/AppConfig.ts"
import { AuthenticationFailed, secretDigest, SecretStore } from "../../services/SecretStore.ts"
import { storageFailure } from "../storage/StorageErrors.ts"

interface SecretRow {
  readonly id: string
  readonly app_id: string
  readonly name: string | null
  readonly secret_hash: string
  readonly ip_ranges: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
  readonly mode: string
  /** numeric: the driver answers it as text. */
  readonly max_accept_total: string | number | null
  readonly grants_version: number
  readonly created_at: Date
  readonly issued_at: Date
  readonly used_at: Date | null
}

interface KnownSecret {
  readonly id: string
  readonly hash: Buffer
  readonly ranges: ReadonlyArray<IpRange>
  readonly issuedAt: Date
  /** What an authenticated call of the secret is: built once, answered by every call. */
  readonly caller: Caller
}

/** The columns of a secret as listed and issued. */
const SECRET_COLUMNS = "id, app_id, name, secret_hash, ip_ranges, scopes, mode, max_accept_total, grants_version, created_at, issued_at"

/** Bound on remembered secrets; past it the oldest are dropped (they are looked up again). */
const MAX_REMEMBERED = 10_000
/**
 * The row an authentication lookup answers: the secret's, or the decoy when
 * no secret has the id. The decoy has the shape of a real row (a hash of the
 * same length, one range that is not "any address", a date) so decoding and
 * checking it costs what a real one costs.
 */
interface AuthRow {
  readonly found: boolean
  readonly app_id: string
  readonly secret_hash: string
  readonly ip_ranges: ReadonlyArray<string>
  readonly issued_at: Date
  readonly scopes: ReadonlyArray<string>
  readonly mode: string
  readonly max_accept_total: number | null
  readonly grants_version: number
}

const AUTH_LOOKUP_SQL = `
  SELECT s.id IS NOT NULL AS found,
         COALESCE(s.app_id, 'decoy') AS app_id,
         COALESCE(s.secret_hash, '${"0".repeat(64)}') AS secret_hash,
         COALESCE(s.ip_ranges, ARRAY['192.0.2.0/24']::text[]) AS ip_ranges,
         COALESCE(s.issued_at, '2026-11-01T00:00:00Z'::timestamptz) AS issued_at,
         COALESCE(s.scopes, ARRAY['read']::text[]) AS scopes,
         COALESCE(s.mode, 'live') AS mode,
         s.max_accept_total::float8 AS max_accept_total,
         COALESCE(s.grants_version, 0) AS grants_version
  FROM (VALUES (1)) AS one (x) LEFT JOIN incoming_secret s ON s.id = $1`

const scopesOf = (stored: ReadonlyArray<string>): ReadonlyArray<Scope> =>
  canonicalScopes(stored.filter((scope): scope is Scope => (SCOPES as ReadonlyArray<string>).includes(scope)))
const modeOf = (stored: string): Mode => (MODES as ReadonlyArray<string>).includes(stored) ? stored as Mode : "live"
const limitOf = (stored: string | number | null): number | null => stored === null ? null : Number(stored)

/** The grants of a stored row; a secret sees only what it may touch, whatever else the row holds. */
const grantsOf = (row: Pick<SecretRow, "scopes" | "mode" | "max_accept_total" | "grants_version">): Grants => ({
  version: row.grants_version,
  scopes: new Set(scopesOf(row.scopes)),
  mode: modeOf(row.mode),
  maxAcceptTotal: limitOf(row.max_accept_total)
})

const callerOf = (id: string, appId: string, hashHex: string, grants: Grants): Caller => ({
  appId,
  secretId: id,
  secretHash: hashHex,
  grants,
  dataSpace: dataSpaceOf(appId, grants.mode)
})

/** Checked when no secret with the id is remembered, so a first call costs what a remembered one does. */
const DECOY: KnownSecret = {
  id: "",
  hash: Buffer.alloc(32),
  ranges: [Result.getOrThrow(parseIpRange("192.0.2.0/24"))],
  issuedAt: new Date("2026-11-01T00:00:00Z"),
  caller: callerOf("", "decoy", "0".repeat(64), { version: 0, scopes: new Set(["read"]), mode: "live", maxAcceptTotal: null })
}

const toKnown = (id: string, row: AuthRow): KnownSecret => ({
  id,
  hash: Buffer.from(row.secret_hash, "hex"),
  ranges: row.ip_ranges.flatMap((text) => {
    const parsed = parseIpRange(text)
    return Result.isSuccess(parsed) ? [parsed.success] : []
  }),
  issuedAt: row.issued_at,
  caller: callerOf(id, row.app_id, row.secret_hash, grantsOf(row))
})

/** The grants as listed: scopes in their canonical order. */
const grantsView = (row: SecretRow) => ({
  scopes: scopesOf(row.scopes),
  mode: modeOf(row.mode),
  maxAcceptTotal: limitOf(row.max_accept_total)
})

const toView = (row: SecretRow): SecretView => ({
  id: row.id,
  appId: row.app_id,
  name: row.name,
  ipAddresses: row.ip_ranges,
  ...grantsView(row),
  createdAt: row.created_at.toISOString(),
  issuedAt: row.issued_at.toISOString(),
  usedAt: row.used_at?.toISOString() ?? null
})

/** A value for a secret id: `<secretId>.<256 random bits>`, and the hash that is stored. */
const issueValue = (id: string) => {
  const value = `${id}.${randomBytes(32).toString("base64url")}`
  return { value, hash: hash("sha256", value, "hex") }
}

/** Stores ranges in their canonical CIDR form (`1.2.3.4` becomes `1.2.3.4/32`). */
const canonicalRanges = (ranges: ReadonlyArray<string>) =>
  ranges.map((text) => {
    const parsed = parseIpRange(text)
    return Result.isSuccess(parsed) ? IpNetwork.format(parsed.success) : text
  })

export const SecretStoreSql = Layer.effect(
  SecretStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const known = new Map<string, KnownSecret>()

    const remember = (secret: KnownSecret) => setRecent(known, secret.id, secret, MAX_REMEMBERED)

    /** Exactly one row, found or the decoy: the same statement, rows and decoding whether the id exists or not. */
    const authLookup = (id: string) =>
      sql.unsafe<AuthRow>(AUTH_LOOKUP_SQL, [id]).pipe(
        Effect.map((rows) => rows[0]!),
        Effect.catchTag("SqlError", storageFailure)
      )

    const issued = (row: SecretRow, value: string): SecretIssued => ({
      id: row.id,
      value,
      appId: row.app_id,
      name: row.name,
      ipAddresses: row.ip_ranges,
      ...grantsView(row),
      createdAt: row.created_at.toISOString()
    })

    /** Every check, whichever fails: a refusal for the address costs what one for the secret costs. */
    const passes = (secret: KnownSecret, presentedHash: Buffer, clientAddress: string) => {
      const hashMatches = timingSafeEqual(secret.hash, presentedHash)
      const released = secret.issuedAt.getTime() >= config.releasedAt.getTime()
      const addressAllowed = isAllowed(secret.ranges, clientAddress)
      return hashMatches && released && addressAllowed
    }

    return SecretStore.of({
      create: Effect.fn("SecretStore.create")(function*(request) {
        const id = randomBytes(12).toString("hex")
        const { hash, value } = issueValue(id)
        const now = new Date()
        const rows = yield* sql<SecretRow>`
          INSERT INTO incoming_secret (id, app_id, name, secret_hash, ip_ranges, scopes, mode, max_accept_total, created_at, issued_at)
          VALUES (${id}, ${request.appId}, ${request.name ?? null}, ${hash},
                  ${canonicalRanges(request.ipAddresses)}::text[], ${canonicalScopes(request.scopes ?? SCOPES)}::text[],
                  ${request.mode ?? "live"}, ${request.maxAcceptTotal ?? null}::numeric,
                  ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)
          RETURNING *`.pipe(Effect.catchTag("SqlError", storageFailure))
        return issued(rows[0]!, value)
      }),

      regenerate: Effect.fn("SecretStore.regenerate")(function*(secretId) {
        // The id stays; the random part, and so the hash, change: the old value fails at once.
        const { hash, value } = issueValue(secretId)
        const rows = yield* sql<SecretRow>`
          UPDATE incoming_secret
          SET secret_hash = ${hash}, issued_at = now()
          WHERE id = ${secretId}
          RETURNING *`.pipe(Effect.catchTag("SqlError", storageFailure))
        known.delete(secretId)
        const row = rows[0]
        if (row === undefined) return yield* NotFound.of(`secret ${secretId} not found`)
        return issued(row, value)
      }),

      remove: Effect.fn("SecretStore.remove")(function*(secretId) {
        const rows = yield* sql<{ id: string }>`DELETE FROM incoming_secret WHERE id = ${secretId} RETURNING id`.pipe(
          Effect.catchTag("SqlError", storageFailure)
        )
        known.delete(secretId)
        if (rows.length === 0) return yield* NotFound.of(`secret ${secretId} not found`)
      }),

      update: Effect.fn("SecretStore.update")(function*(secretId, change) {
        const assignments = [
          ...(change.scopes === undefined ? [] : [sql`scopes = ${canonicalScopes(change.scopes)}::text[]`]),
          ...(change.mode === undefined ? [] : [sql`mode = ${change.mode}`]),
          ...(change.maxAcceptTotal === undefined ? [] : [sql`max_accept_total = ${change.maxAcceptTotal}::numeric`])
        ]
        // Even a change that sets what is there moves the version: the next call looks the secret up again, which is harmless.
        const rows = yield* sql<SecretRow>`
          UPDATE incoming_secret
          SET ${sql.csv([...assignments, sql`grants_version = grants_version + 1`])}
          WHERE id = ${secretId}
          RETURNING ${sql.literal(SECRET_COLUMNS)},
                    GREATEST(used_at, (SELECT max(m.occurred_at) FROM meter_event m WHERE m.secret_id = ${secretId})) AS used_at`.pipe(
          Effect.catchTag("SqlError", storageFailure)
        )
        known.delete(secretId)
        const row = rows[0]
        if (row === undefined) return yield* NotFound.of(`secret ${secretId} not found`)
        return toView(row)
      }),

      list: Effect.fn("SecretStore.list")(function*(appId) {
        // usedAt: the latest metered call, committed with the call itself (see MeterSql).
        const rows = yield* sql<SecretRow>`
          SELECT s.id, s.app_id, s.name, s.secret_hash, s.ip_ranges, s.scopes, s.mode, s.max_accept_total, s.grants_version,
                 s.created_at, s.issued_at,
                 GREATEST(s.used_at, (SELECT max(m.occurred_at) FROM meter_event m WHERE m.secret_id = s.id)) AS used_at
          FROM incoming_secret s
          ${appId === undefined ? sql`` : sql`WHERE s.app_id = ${appId}`}
          ORDER BY s.created_at, s.id`.pipe(Effect.catchTag("SqlError", storageFailure))
        return rows.map(toView)
      }),

      // Judged when called, not when run: a remembered secret's answer is an ended effect (an Exit), which the
      // guard's bounded wait takes as it is, with no fiber (BoundedWait.ts).
      authenticate: (presented, clientAddress) => {
        const match = SECRET_VALUE_PATTERN.exec(presented)
        if (match === null) return Effect.fail(AuthenticationFailed.because("malformed"))
        const secretId = match[1]!
        const presentedHash = secretDigest(presented)
        const remembered = known.get(secretId)
        if (passes(remembered ?? DECOY, presentedHash, clientAddress) && remembered !== undefined) {
          return Effect.succeed(remembered.caller)
        }
        return Effect.flatMap(authLookup(secretId), (row) => {
          const secret = toKnown(secretId, row)
          if (row.found) remember(secret)
          else known.delete(secretId)
          const hashMatches = timingSafeEqual(secret.hash, presentedHash)
          const released = secret.issuedAt.getTime() >= config.releasedAt.getTime()
          const addressAllowed = isAllowed(secret.ranges, clientAddress)
          if (!row.found) return Effect.fail(AuthenticationFailed.because("unknown-secret"))
          if (!hashMatches) return Effect.fail(AuthenticationFailed.because("wrong-secret"))
          if (!released) return Effect.fail(AuthenticationFailed.because("before-release"))
          if (!addressAllowed) return Effect.fail(AuthenticationFailed.because("ip-blocked"))
          return Effect.succeed(secret.caller)
        })
      },

      forget: (secretId) => {
        known.delete(secretId)
      }
    })
  })
)
