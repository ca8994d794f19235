/**
 * Serves the public API on the configured storage: embedded PGlite in
 * DATA_DIR by default, PostgreSQL when DATABASE_URL is set.
 */
import { Layer } from "effect"
import { EngineOutboundLive, ServicesLive } from "./layers/AppLayers.ts"
import { HttpServerLive } from "./layers/http/Server.ts"
import { runService } from "./layers/ServiceMain.ts"
import { StorageLive } from "./layers/storage/Storage.ts"
import { TelemetryLive } from "./layers/Telemetry.ts"
import { WebhookDeliveryWithEmbeddedEngine } from "./layers/Webhooks.ts"
import { AppConfig } from "./services/AppConfig.ts"

const Main = HttpServerLive.pipe(
  Layer.provide(ServicesLive),
  // The embedded engine's webhook deliveries (none when the engine is remote).
  Layer.merge(WebhookDeliveryWithEmbeddedEngine),
  Layer.provideMerge(StorageLive("serve")),
  // The engine's model file services and webhook sender as AppConfig read them at start (an invalid value stopped the start, naming it).
  Layer.provide(EngineOutboundLive),
  // The configuration is read first: an invalid variable, the telemetry's included, stops the start naming every one.
  Layer.provide(TelemetryLive),
  Layer.provide(AppConfig.layer)
)

runService(Main)
