/**
 * Webhook delivery, composed where the engine runs (the gateway's embedded
 * engine, or `npm run engine`): the sender as AppConfig configured it, the
 * dispatcher (every instance's own calls' events, first attempts at once),
 * and the delivery workflows and the relay on Effect's cluster over the
 * engine's own database (docs/webhooks.md).
 *
 * - PGlite admits one process, so one runner: `SingleRunner`, messages and
 *   shard locks in the database, no network.
 * - On PostgreSQL every instance sharing the database is a runner of one
 *   cluster: its runner listens on CLUSTER_RUNNER_HOST:CLUSTER_RUNNER_PORT
 *   (a free port by default, registered with the address it got), the shards
 *   (and with them the workflows) are spread over the runners, and a runner
 *   that stops or dies has its shards taken over once its locks expire.
 */
import { layerClientProtocol } from "@effect/platform-node/NodeClusterSocket"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { Cause, Duration, Effect, Layer, Option } from "effect"
import {
  ClusterWorkflowEngine,
  type MessageStorage,
  RunnerAddress,
  RunnerHealth,
  Runners,
  type Sharding,
  ShardingConfig,
  SingleRunner,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "effect/cluster"
import { RpcSerialization } from "effect/rpc"
import { SocketServer } from "effect/socket"
import type { SqlClient } from "effect/sql"
import { clusterPool } from "../adapters/storage/Storage.ts"
import { InvalidConfig } from "../domain/Errors.ts"
import { DeliverWebhookLive } from "../engine/events/delivery.ts"
import { DispatcherHandOffsLive, leaseFor, webhookDispatcherLayer } from "../engine/events/dispatcher.ts"
import { WebhookRelayLive } from "../engine/events/relay.ts"
import { webhookSenderLayer } from "../engine/events/sender.ts"
import { RecordRepository } from "../engine/RecordRepository.ts"
import type { ReleaseBound } from "../platform/ShutdownReport.ts"
import type { Instruments } from "../platform/telemetry/Instruments.ts"
import { AppConfig } from "../services/AppConfig.ts"

/** The sender with WEBHOOK_TIMEOUT, and the download policy's MODEL_FETCH_ALLOW_PRIVATE. */
export const WebhookSenderLive = Layer.unwrap(
  Effect.map(AppConfig, (config) => webhookSenderLayer({ timeout: config.webhooks.timeout, allowPrivate: config.modelFetch.allowPrivate }))
)

/**
 * The cluster's timings: a durable wait or a message for a shard of this
 * runner is seen within half a second; a dead runner's shards are free 15 s
 * after its last lock refresh.
 */
const SHARDING = {
  entityMessagePollInterval: Duration.millis(500),
  shardLockRefreshInterval: Duration.seconds(5),
  shardLockExpiration: Duration.seconds(15)
} satisfies Partial<ShardingConfig.ShardingConfig["Service"]>

// Its configuration is SHARDING's, read from no variable of the environment's (a ConfigError cannot arise).
const embeddedCluster = SingleRunner.layer({ runnerStorage: "sql", shardingConfig: SHARDING }).pipe(
  Layer.provide(NodeCrypto.layerDigest),
  Layer.orDie
)

/** A socket runner on the configured address, or a free port on it, registered as the address it listens on. */
const postgresCluster = Layer.unwrap(Effect.gen(function*() {
  const { webhooks } = yield* AppConfig
  const server = yield* NodeSocketServer.make({ host: webhooks.runnerHost, port: webhooks.runnerPort }).pipe(
    Effect.mapError((error) =>
      InvalidConfig.about(
        "CLUSTER_RUNNER_PORT",
        `the webhook delivery runner cannot listen on ${webhooks.runnerHost}:${webhooks.runnerPort}: ${String(error.cause ?? error.message)}`
      )
    )
  )
  const port = server.address._tag === "UnixPathAddress" ? webhooks.runnerPort : server.address.port
  const config = ShardingConfig.layer({ ...SHARDING, runnerAddress: Option.some(RunnerAddress.make(webhooks.runnerHost, port)) })
  const runnerHealth = RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(layerClientProtocol))
  return SocketRunner.layer.pipe(
    Layer.provide([Layer.succeed(SocketServer.SocketServer, server), layerClientProtocol, runnerHealth]),
    Layer.provideMerge(SqlMessageStorage.layer.pipe(Layer.provide(NodeCrypto.layerDigest))),
    Layer.provide(Layer.orDie(SqlRunnerStorage.layer)),
    Layer.provide(config),
    Layer.provide(RpcSerialization.layerSchemaBinary()),
    // Its storage on connections of its own, never the calls' pipelined pool (Storage.ts, clusterPool).
    Layer.provide(Layer.orDie(clusterPool))
  )
}))

/**
 * A stop waits this long for the cluster to hand its shards off (its entities
 * get up to `entityTerminationTimeout`, 15 s by default), then goes on: what
 * it still ran is stored, and resumes where the shards go next.
 */
export const WEBHOOK_DELIVERY_RELEASE: ReleaseBound = {
  within: Duration.seconds(10),
  consequence: "its shard locks expire within 15 s of their last refresh, and its stored deliveries resume on another instance, or on this one's next start"
}

/** The dispatcher, its leases as long as WEBHOOK_TIMEOUT calls for. */
const WebhookDispatcherLive = Layer.unwrap(Effect.map(AppConfig, (config) => webhookDispatcherLayer({ lease: leaseFor(config.webhooks.timeout) })))

/**
 * The delivery workflows, the relay and the dispatcher's hand-offs on the
 * cluster the storage calls for; the dispatcher beneath them, started first,
 * so that it takes a call's events while the cluster is still starting.
 * A runner that cannot listen stops the start as a defect carrying the
 * InvalidConfig, which the start's report names as it names any other
 * (src/platform/StartFailure.ts), so the layers above keep their types.
 */
export const WebhookDeliveryLive = Layer.unwrap(Effect.map(AppConfig, (config) => {
  const cluster: Layer.Layer<Sharding.Sharding | MessageStorage.MessageStorage, never, SqlClient.SqlClient | AppConfig | Instruments> =
    Option.isSome(config.databaseUrl)
      ? Layer.orDie(postgresCluster)
      : embeddedCluster
  return Layer.mergeAll(DeliverWebhookLive, WebhookRelayLive, DispatcherHandOffsLive).pipe(
    Layer.provide(ClusterWorkflowEngine.layer),
    Layer.provide(cluster),
    Layer.provide(WebhookDispatcherLive),
    Layer.provide(RecordRepository.layer),
    // Its own configured sender (WEBHOOK_TIMEOUT, MODEL_FETCH_ALLOW_PRIVATE).
    Layer.provide(WebhookSenderLive)
  )
}))

/**
 * Delivery in a server whose engine is embedded (no DOWNSTREAM_URL): its
 * engine's events are delivered here. A gateway over a remote engine leaves
 * them to that engine's process, and a CLI command runs none (it may share
 * a running server's embedded database, whose server delivers).
 */
export const WebhookDeliveryWithEmbeddedEngine = Layer.unwrap(
  Effect.map(AppConfig, (config) => Option.isSome(config.downstreamUrl) ? Layer.empty : supervised(WebhookDeliveryLive))
)

/** How long a delivery cluster that stopped on a failure waits before it starts again. */
const RESTART_AFTER = Duration.seconds(5)

/**
 * A background layer in a fiber of its own: a failure of it while running
 * (its storage lost: PostgreSQL restarting, the embedded database process
 * gone) is logged and it starts again after RESTART_AFTER, and never stops
 * the server, whose own storage checks and watchers decide that and say why.
 */
const supervised = <E, R>(layer: Layer.Layer<never, E, R>) =>
  Layer.effectDiscard(
    Layer.launch(layer).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logWarning("webhook delivery stopped on a failure; it starts again shortly", {
            restartInMs: Duration.toMillis(RESTART_AFTER),
            error: Cause.squash(cause) instanceof Error ? (Cause.squash(cause) as Error).message : String(Cause.squash(cause))
          })
      ),
      Effect.andThen(Effect.sleep(RESTART_AFTER)),
      Effect.forever,
      Effect.forkScoped
    )
  )
