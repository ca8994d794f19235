/**
 * Incoming Secrets: the one credential of the public API.
 *
 * A value is `<secretId>.<random>`: the id (24 hex digits) finds the record,
 * the random part carries 256 bits of entropy (43 base64url characters).
 * Only a SHA-256 hash of the whole value is stored.
 */
import { Result, Schema } from "effect"
import { type Grants, MaxAcceptTotal, Mode, Scope } from "./Grants.ts"
import { parseIpRange } from "./IpAllowList.ts"
import { NonEmptyList } from "./NonEmptyList.ts"

export const SECRET_ID_PATTERN = /^[0-9a-f]{24}$/
export const SECRET_VALUE_PATTERN = /^([0-9a-f]{24})\.([A-Za-z0-9_-]{43})$/

export const AppId = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, {
    message: "an app id is 1 to 128 letters, digits, '.', '_', ':' or '-'"
  })
).annotate({ description: "The app the secret belongs to; every record it creates belongs to this app." })

export const SecretId = Schema.String.check(
  Schema.isPattern(SECRET_ID_PATTERN, { message: "a secret id is 24 lowercase hex digits" })
)

export const IpRangeText = Schema.String.check(
  Schema.makeFilter((input: string) => {
    const parsed = parseIpRange(input)
    return Result.isSuccess(parsed) ? true : `not an IP range (${parsed.failure})`
  })
).annotate({ description: "An IPv4 or IPv6 range in CIDR notation, or a single address", examples: ["0.0.0.0/0"] })

/** The most IP ranges one secret lists. */
export const MAX_IP_RANGES = 100

const Scopes = NonEmptyList(Scope, 5).annotate({
  description: "What the secret may do (each operation needs one scope: `x-required-scope` in the OpenAPI document); default: all five"
})

export const SecretCreateRequest = Schema.Struct({
  appId: AppId,
  ipAddresses: NonEmptyList(IpRangeText, MAX_IP_RANGES).annotate({
    description: "Allowed client ranges; `0.0.0.0/0` allows any address"
  }),
  name: Schema.optional(Schema.String.check(Schema.isMaxLength(200))),
  scopes: Schema.optional(Scopes),
  mode: Schema.optional(Mode),
  maxAcceptTotal: Schema.optional(Schema.NullOr(MaxAcceptTotal))
})
export type SecretCreateRequest = typeof SecretCreateRequest.Type

/** A change of a secret's grants: the fields given replace the secret's; `maxAcceptTotal: null` removes the limit. */
export const SecretGrantsUpdate = Schema.Struct({
  scopes: Schema.optional(Scopes),
  mode: Schema.optional(Mode),
  maxAcceptTotal: Schema.optional(Schema.NullOr(MaxAcceptTotal))
})
export type SecretGrantsUpdate = typeof SecretGrantsUpdate.Type

/** What a secret allows, as listed and issued. */
const grantsFields = {
  scopes: Schema.Array(Scope),
  mode: Mode,
  maxAcceptTotal: Schema.NullOr(Schema.Number)
}

/** A secret as listed: never its value. */
export const SecretView = Schema.Struct({
  id: Schema.String,
  appId: Schema.String,
  name: Schema.NullOr(Schema.String),
  ipAddresses: Schema.Array(Schema.String),
  ...grantsFields,
  createdAt: Schema.String,
  issuedAt: Schema.String,
  usedAt: Schema.NullOr(Schema.String)
})
export type SecretView = typeof SecretView.Type

/** A secret as created or regenerated: the only time its value is shown. */
export const SecretIssued = Schema.Struct({
  id: Schema.String,
  value: Schema.String,
  appId: Schema.String,
  name: Schema.NullOr(Schema.String),
  ipAddresses: Schema.Array(Schema.String),
  ...grantsFields,
  createdAt: Schema.String
})
export type SecretIssued = typeof SecretIssued.Type

/** Who is calling, once the secret checked out. */
export interface Caller {
  readonly appId: string
  readonly secretId: string
  /** Hash of the presented value; the meter flush confirms it is still current. */
  readonly secretHash: string
  /** What the secret allows; the meter flush confirms its version is still current. */
  readonly grants: Grants
  /** The engine's app id of the caller's data space: the app id, or its test space (dataSpaceOf). */
  readonly dataSpace: string
}

/** Why authentication failed: for telemetry only, never in a response. */
export type AuthFailureCause =
  | "missing"
  | "duplicate-header"
  | "malformed"
  | "unknown-secret"
  | "wrong-secret"
  | "before-release"
  | "ip-blocked"
  | "revoked"
