/**
 * Readiness: whether the dependencies a process needs answer, for `GET /ready`.
 *
 * A server over storage composes ReadinessChecksLive (src/platform/Readiness.ts),
 * which checks storage first, wherever `/ready` is served (gateway and
 * engine). The other dependencies are checked where they are configured, by
 * the layer that owns them: the remote engine's client (DOWNSTREAM_URL) and
 * the rate limits' Redis (REDIS_URL) each add their check when they are
 * built. What serves no `/ready` (a CLI command) composes ReadinessChecksNoOp,
 * which keeps none.
 */
import { Context, type Effect, Layer, Schema } from "effect"

/** A dependency that did not answer: `cause` is a few words (`connection refused`), never a URL or a secret. */
export class DependencyUnreachable extends Schema.TaggedError<DependencyUnreachable>()("DependencyUnreachable", {
  cause: Schema.String
}) {}

export interface ReadinessCheck {
  /** What `/ready` calls the dependency: `storage`, `engine`, `redis`. */
  readonly name: string
  /** Succeeds when the dependency answers. `/ready` bounds it in time. */
  readonly probe: Effect.Effect<void, DependencyUnreachable>
  /**
   * For a dependency the process serves without (Redis: rate limits counted
   * in memory): what it does meanwhile. Its failure leaves `/ready` at 200,
   * the body naming it under `degraded`.
   */
  readonly whileDown?: string | undefined
}

export interface ReadinessChecksShape {
  /** Adds the check of a dependency (replacing one of the same name). */
  readonly add: (check: ReadinessCheck) => void
  /** The checks added so far, by name. */
  readonly all: () => ReadonlyArray<ReadinessCheck>
}

export class ReadinessChecks extends Context.Service<ReadinessChecks, ReadinessChecksShape>()("mfg/services/ReadinessChecks") {}

/** Keeps nothing: for a composition that serves no `/ready` (the CLI), whose layers have nobody to report to. */
export const ReadinessChecksNoOp = Layer.succeed(ReadinessChecks, { add: () => {}, all: () => [] })

/**
 * The body of `GET /ready`: 200 `{status: "ready", checks}`, or 503
 * `{status: "unavailable", reason: "<names> unreachable", checks}`, `checks`
 * naming every dependency checked with `ok` or `unreachable: <cause>`. A
 * dependency the process serves without (`whileDown`) that fails leaves it
 * ready, with `degraded`: `<name> unreachable: <what it does meanwhile>`.
 */
export const ReadinessBody = Schema.Struct({
  status: Schema.Literals(["ready", "unavailable"]),
  reason: Schema.optional(Schema.String),
  degraded: Schema.optional(Schema.String),
  checks: Schema.Record(Schema.String, Schema.String)
})
export type ReadinessBody = typeof ReadinessBody.Type
