/**
 * SecretStore: Incoming Secrets, stored only as hashes.
 *
 * `authenticate` is the whole of the spec's section 5 for one presented
 * token: format, lookup, constant-time hash comparison, release date and IP
 * ranges. It does the same work for an unknown id as for a known one. What
 * the secret allows (its grants: scopes, mode, spend limit) comes with the
 * caller; it is decided after authentication, never by it.
 */
import { Context, type Effect, Schema } from "effect"
import { hash } from "node:crypto"
import type { NotFound, ServiceUnavailable } from "../domain/Errors.ts"
import type { AuthFailureCause, Caller, SecretCreateRequest, SecretGrantsUpdate, SecretIssued, SecretView } from "../domain/Secret.ts"

/** Authentication failed; `cause` is for telemetry, the client only ever sees the one 401. */
/**
 * The SHA-256 digest of a presented secret value, to compare in constant
 * time with the hash stored for it. One-shot hashing (no Hash object per
 * call), written as hex and read back into a Buffer from Node's pool: a digest
 * asked for as a "buffer" gets a backing store of its own on every call, which
 * under load cost several times the hash itself (bench/README.md, "The
 * presented secret's digest").
 */
export const secretDigest = (value: string): Buffer => Buffer.from(hash("sha256", value, "hex"), "hex")

export class AuthenticationFailed extends Schema.TaggedError<AuthenticationFailed>()("AuthenticationFailed", {
  cause: Schema.String
}) {
  static because(cause: AuthFailureCause) {
    return new AuthenticationFailed({ cause })
  }
}

export class SecretStore extends Context.Service<SecretStore, {
  readonly create: (request: SecretCreateRequest) => Effect.Effect<SecretIssued, ServiceUnavailable>
  readonly regenerate: (secretId: string) => Effect.Effect<SecretIssued, NotFound | ServiceUnavailable>
  readonly remove: (secretId: string) => Effect.Effect<void, NotFound | ServiceUnavailable>
  readonly list: (appId: string | undefined) => Effect.Effect<ReadonlyArray<SecretView>, ServiceUnavailable>
  /**
   * Changes a secret's scopes, mode or limit (the fields given). The next call
   * of the secret, on any instance, is decided with them: the meter's flush
   * refuses a row decided with an older version (see MeterSql).
   */
  readonly update: (secretId: string, change: SecretGrantsUpdate) => Effect.Effect<SecretView, NotFound | ServiceUnavailable>
  /**
   * Checks a presented secret value for a call from `clientAddress`. It may
   * be judged when called (SecretStoreSql answers a secret it remembers as
   * an ended effect, an Exit): run the answer at once, do not keep it.
   */
  readonly authenticate: (
    presented: string,
    clientAddress: string
  ) => Effect.Effect<Caller, AuthenticationFailed | ServiceUnavailable>
  /** Drops what is remembered of a secret, after storage reported it changed. */
  readonly forget: (secretId: string) => void
}>()("mfg/services/SecretStore") {}
