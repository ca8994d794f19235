/**
 * Serves the public API on the configured storage: embedded PGlite in
 * DATA_DIR by default, PostgreSQL when DATABASE_URL is set.
 */
import { Layer } from "effect"
import { StorageLive } from "./adapters/storage/Storage.ts"
import { TelemetryLive } from "./adapters/telemetry/Telemetry.ts"
import { ServicesLive } from "./app/AppLayers.ts"
import { EngineOutboundLive } from "./app/AppLayers.ts"
import { WEBHOOK_DELIVERY_RELEASE, WebhookDeliveryWithEmbeddedEngine } from "./app/Webhooks.ts"
import { HttpServerLive } from "./gateway/server/index.ts"
import { runService } from "./platform/ServiceMain.ts"
import { releasedAs } from "./platform/ShutdownReport.ts"
import { AppConfig } from "./services/AppConfig.ts"

// Each part's release is timed: a slow stop names the part it waits on (src/platform/ServiceMain.ts).
const Main = HttpServerLive.pipe(
  releasedAs("http server"),
  Layer.provide(releasedAs("services")(ServicesLive)),
  // The embedded engine's webhook deliveries (none when the engine is remote).
  Layer.merge(releasedAs("webhook delivery", WEBHOOK_DELIVERY_RELEASE)(WebhookDeliveryWithEmbeddedEngine)),
  Layer.provideMerge(releasedAs("storage")(StorageLive("serve"))),
  // The engine's model file services and webhook sender as AppConfig read them at start (an invalid value stopped the start, naming it).
  Layer.provide(EngineOutboundLive),
  // The configuration is read first: an invalid variable, the telemetry's included, stops the start naming every one.
  Layer.provide(TelemetryLive),
  Layer.provide(AppConfig.layer)
)

runService(Main)
