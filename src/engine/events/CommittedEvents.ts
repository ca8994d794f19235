/**
 * The ids of the events this process's calls committed, announced once each
 * call has ended: `Engine.run` publishes them, the dispatcher (dispatcher.ts)
 * subscribes and makes their first attempts at once. One hub per process,
 * provided with the engine's outbound services (EngineOutbound): an engine
 * in a process without a dispatcher (a CLI command, a gateway over a remote
 * engine) publishes to no subscriber, which keeps nothing.
 */
import { Context, Effect, Layer, PubSub } from "effect"

/**
 * Ids waiting for the dispatcher, at most. Past it a publish drops them
 * rather than waits (it runs in Engine.run's finalizer, which is
 * uninterruptible): the relay (relay.ts) fans out every event not relayed
 * within FALLBACK_GRACE, from the outbox table.
 */
export const COMMITTED_CAPACITY = 10_000

export class CommittedEvents extends Context.Service<CommittedEvents, PubSub.PubSub<string>>()("mfg/engine/events/CommittedEvents") {
  /** Shut down with the layer: a subscriber still waiting is interrupted, and a later publish answers false at once. */
  static readonly layer = Layer.effect(
    CommittedEvents,
    Effect.acquireRelease(PubSub.dropping<string>(COMMITTED_CAPACITY), PubSub.shutdown)
  )
}
