/**
 * Operator commands: Incoming Secrets (with their scopes, mode and spend
 * limit), metering totals, per-app rate limits, demo data and emptying an
 * app's test data; and `serve-fixtures`, the example model files for the
 * docs' walkthrough (src/cli/serveFixtures.ts).
 * Output is JSON on stdout. On the embedded store a command uses a running
 * server's database (over its socket in DATA_DIR) or opens DATA_DIR itself;
 * only the commands that read or write records open storage, so that
 * `serve-fixtures` and `--help` never hold DATA_DIR.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Layer, Option, Result, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { DataDirNotPrivate } from "./adapters/storage/PrivateDataDir.ts"
import { StorageLive } from "./adapters/storage/Storage.ts"
import { ToolServicesLive } from "./app/AppLayers.ts"
import { EngineOutboundLive } from "./app/AppLayers.ts"
import { serveFixtures } from "./cli/serveFixtures.ts"
import { BadRequest, DownstreamError, NotFound, ServiceUnavailable } from "./domain/Errors.ts"
import { dataSpaceOf, MaxAcceptTotal, Mode, MODES, Scope, SCOPES } from "./domain/Grants.ts"
import { appRateLimitView, parseRateLimit, RateLimitText } from "./domain/RateLimit.ts"
import { IsoDateParam, rangeEnd, rangeStart } from "./domain/Resource.ts"
import { AppId, IpRangeText, SecretId } from "./domain/Secret.ts"
import { seedDemoData } from "./engine/seed.ts"
import { testDataEmptying } from "./gateway/admin/index.ts"
import { InstrumentsNoOp } from "./platform/telemetry/Instruments.ts"
import { AppConfig } from "./services/AppConfig.ts"
import { AppRateLimits } from "./services/AppRateLimits.ts"
import { Meter } from "./services/Meter.ts"
import { SecretStore } from "./services/SecretStore.ts"

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))
const startOf = (text: Option.Option<string>) => Option.getOrUndefined(Option.map(text, rangeStart))
/** A date as `--to` is the end of that day, as in every list filter. */
const endOf = (text: Option.Option<string>) => Option.getOrUndefined(Option.map(text, rangeEnd))

const appFlag = Flag.String("app").pipe(Flag.withDescription("The app id"), Flag.withSchema(AppId))

const scopeFlag = Flag.Literals("scope", SCOPES).pipe(
  Flag.withDescription(`What the secret may do; repeatable: ${SCOPES.join(", ")} (default: all)`),
  Flag.atLeast(0)
)
const modeFlag = Flag.Literals("mode", MODES).pipe(Flag.withDescription("live (the app's data) or test (its test data space)"))
/** A limit in EUR, or `none` to remove it. */
const LimitText = Schema.Union([Schema.Literal("none"), Schema.NumberFromString.pipe(Schema.decodeTo(MaxAcceptTotal))])
const limitFlag = Flag.String("max-accept-total").pipe(
  Flag.withDescription("The largest quote total (EUR) the secret may accept; `none` for no limit"),
  Flag.withSchema(LimitText)
)
const limitOf = (limit: typeof LimitText.Type): number | null => limit === "none" ? null : limit
/** Scopes as given: none given means every scope (create) or unchanged (update). */
const scopesOf = (scopes: ReadonlyArray<Scope>) => scopes.length > 0 ? { scopes: [scopes[0]!, ...scopes.slice(1)] as const } : {}

const MISSING_IP = BadRequest.of(
  "Missing required flag --ip: the client addresses the secret accepts (CIDR or address, repeatable); " +
    "give --ip 0.0.0.0/0 to allow any address",
  "MissingField",
  [{ path: "--ip", message: "Missing required flag --ip; --ip 0.0.0.0/0 allows any address" }]
)

const secretCreate = Command.make(
  "create",
  {
    app: appFlag,
    ip: Flag.String("ip").pipe(
      Flag.withDescription("Allowed client range (CIDR or address); required, repeatable; --ip 0.0.0.0/0 allows any address"),
      Flag.withSchema(IpRangeText),
      Flag.atLeast(0)
    ),
    name: Flag.String("name").pipe(Flag.withDescription("A label"), Flag.optional),
    scope: scopeFlag,
    mode: modeFlag.pipe(Flag.withDefault("live" as Mode)),
    maxAcceptTotal: limitFlag.pipe(Flag.optional)
  },
  Effect.fn(function*({ app, ip, maxAcceptTotal, mode, name, scope }) {
    // No default range: a secret usable from anywhere is a choice the operator states.
    if (ip.length === 0) return yield* Effect.fail(MISSING_IP)
    const secrets = yield* SecretStore
    const created = yield* secrets.create({
      appId: app,
      ipAddresses: ip,
      ...(Option.isSome(name) ? { name: name.value } : {}),
      ...scopesOf(scope),
      mode,
      maxAcceptTotal: Option.match(maxAcceptTotal, { onNone: () => null, onSome: limitOf })
    })
    yield* printJson({
      id: created.id,
      value: created.value,
      appId: created.appId,
      ipAddresses: created.ipAddresses,
      createdAt: created.createdAt,
      name: created.name,
      scopes: created.scopes,
      mode: created.mode,
      maxAcceptTotal: created.maxAcceptTotal
    })
  })
).pipe(Command.withDescription("Create a secret; its value is printed once"))

const secretIdArgument = Argument.String("secretId").pipe(Argument.withSchema(SecretId))

const secretRegenerate = Command.make(
  "regenerate",
  { secretId: secretIdArgument },
  Effect.fn(function*({ secretId }) {
    const secrets = yield* SecretStore
    yield* printJson(yield* secrets.regenerate(secretId))
  })
).pipe(Command.withDescription("Issue a new value; the old one fails at once"))

const secretDelete = Command.make(
  "delete",
  { secretId: secretIdArgument },
  Effect.fn(function*({ secretId }) {
    const secrets = yield* SecretStore
    yield* secrets.remove(secretId)
    yield* printJson({ id: secretId, deleted: true })
  })
).pipe(Command.withDescription("Delete a secret; its value fails at once"))

const secretUpdate = Command.make(
  "update",
  {
    secretId: secretIdArgument,
    scope: scopeFlag,
    mode: modeFlag.pipe(Flag.optional),
    maxAcceptTotal: limitFlag.pipe(Flag.optional)
  },
  Effect.fn(function*({ maxAcceptTotal, mode, scope, secretId }) {
    const secrets = yield* SecretStore
    yield* printJson(
      yield* secrets.update(secretId, {
        ...scopesOf(scope),
        ...(Option.isSome(mode) ? { mode: mode.value } : {}),
        ...(Option.isSome(maxAcceptTotal) ? { maxAcceptTotal: limitOf(maxAcceptTotal.value) } : {})
      })
    )
  })
).pipe(Command.withDescription("Change a secret's scopes, mode or spend limit (the flags given); running servers apply it from the next call"))

const secretList = Command.make(
  "list",
  { app: appFlag.pipe(Flag.optional) },
  Effect.fn(function*({ app }) {
    const secrets = yield* SecretStore
    yield* printJson(yield* secrets.list(Option.getOrUndefined(app)))
  })
).pipe(Command.withDescription("List secrets (never their values)"))

const secret = Command.make("secret").pipe(
  Command.withDescription("Manage Incoming Secrets"),
  Command.withSubcommands([secretCreate, secretRegenerate, secretUpdate, secretDelete, secretList])
)

const dateFlag = (name: string, description: string) => Flag.String(name).pipe(Flag.withSchema(IsoDateParam), Flag.withDescription(description), Flag.optional)

const usage = Command.make(
  "usage",
  {
    app: appFlag.pipe(Flag.optional),
    mode: modeFlag.pipe(Flag.withDescription("Only the calls of secrets of this mode (default: both)"), Flag.optional),
    from: dateFlag("from", "Calls at or after this ISO date (from its start) or date-time"),
    to: dateFlag("to", "Calls at or before this ISO date (to its end, inclusive) or date-time")
  },
  Effect.fn(function*({ app, from, mode, to }) {
    const meter = yield* Meter
    yield* printJson(
      yield* meter.usage({ appId: Option.getOrUndefined(app), mode: Option.getOrUndefined(mode), from: startOf(from), to: endOf(to) })
    )
  })
).pipe(Command.withDescription("Metering totals by operation"))

/** The app's budget as in force: its override, else RATE_LIMIT. */
const printRateLimit = Effect.fnUntraced(function*(appId: string) {
  const override = yield* (yield* AppRateLimits).get(appId)
  yield* printJson(appRateLimitView(appId, override, (yield* AppConfig).rateLimit))
})

const rateLimitSet = Command.make(
  "set",
  {
    app: appFlag,
    limit: Argument.String("limit").pipe(Argument.withDescription("<limit>/<window>: 100/60s, 100/1m, 5000/1h"), Argument.withSchema(RateLimitText))
  },
  Effect.fn(function*({ app, limit }) {
    // The argument's schema has checked the text.
    const policy = Result.getOrThrow(parseRateLimit(limit))
    yield* (yield* AppRateLimits).set(app, policy)
    yield* printRateLimit(app)
  })
).pipe(Command.withDescription("Give an app its own rate limit (running servers apply it within 5 seconds)"))

const rateLimitGet = Command.make("get", { app: appFlag }, ({ app }) => printRateLimit(app)).pipe(
  Command.withDescription("Show an app's rate limit: its override, else the default (RATE_LIMIT)")
)

const rateLimitClear = Command.make(
  "clear",
  { app: appFlag },
  Effect.fn(function*({ app }) {
    yield* (yield* AppRateLimits).clear(app)
    yield* printRateLimit(app)
  })
).pipe(Command.withDescription("Back to the default rate limit (running servers apply it within 5 seconds)"))

const rateLimit = Command.make("rate-limit").pipe(
  Command.withDescription("Per-app rate limits (overrides of RATE_LIMIT)"),
  Command.withSubcommands([rateLimitSet, rateLimitGet, rateLimitClear])
)

const seed = Command.make(
  "seed",
  { app: appFlag.pipe(Flag.withDefault("demo")), mode: modeFlag.pipe(Flag.withDefault("live" as Mode)) },
  Effect.fn(function*({ app, mode }) {
    yield* printJson(yield* seedDemoData(dataSpaceOf(app, mode)))
  })
).pipe(Command.withDescription("Load demo records for an app (--mode test: into its test data)"))

const testDataEmpty = Command.make(
  "empty",
  { app: appFlag },
  Effect.fn(function*({ app }) {
    yield* printJson(yield* (yield* testDataEmptying)(app, crypto.randomUUID()))
  })
).pipe(Command.withDescription("Empty an app's test data: records, numbers, events, webhooks, model files, idempotency keys (never its live data)"))

const testData = Command.make("test-data").pipe(
  Command.withDescription("An app's test data (what test-mode secrets work on)"),
  Command.withSubcommands([testDataEmpty])
)

// A command exports no telemetry: its instruments keep nothing.
const Services = ToolServicesLive.pipe(
  Layer.provide(EngineOutboundLive),
  Layer.provideMerge(StorageLive("tool")),
  Layer.provide(InstrumentsNoOp),
  Layer.provideMerge(AppConfig.layer)
)

const cli = Command.make("cli").pipe(
  Command.withDescription("Operate the manufacturing engine public API"),
  Command.withSubcommands([
    Command.provide(secret, Services),
    Command.provide(usage, Services),
    Command.provide(rateLimit, Services),
    Command.provide(seed, Services),
    Command.provide(testData, Services),
    serveFixtures
  ])
)

/** An operator's mistake (a missing flag, an unknown id), an outage or the engine's refusal: one line on stderr, exit code 1. */
const reportFailure = (error: BadRequest | NotFound | ServiceUnavailable | DownstreamError) =>
  Console.error(
    JSON.stringify({ error: { code: error.code, message: error.message, type: error.type, ...("errors" in error ? { errors: error.errors } : {}) } })
  ).pipe(
    Effect.andThen(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

/** DATA_DIR open to others (nothing was run): the message, which says what to do, on stderr; exit code 1. */
const reportDataDirNotPrivate = (error: DataDirNotPrivate) =>
  Console.error(JSON.stringify({ error: { type: error._tag, message: error.message } })).pipe(
    Effect.andThen(Effect.sync(() => {
      process.exitCode = 1
    }))
  )

cli.pipe(
  Command.run({ version: "1.0.0" }),
  Effect.catchIf(
    (error) => error instanceof BadRequest || error instanceof NotFound || error instanceof ServiceUnavailable || error instanceof DownstreamError,
    reportFailure
  ),
  Effect.provide(NodeServices.layer),
  Effect.catchIf((error) => error instanceof DataDirNotPrivate, reportDataDirNotPrivate),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
