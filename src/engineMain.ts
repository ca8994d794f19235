/**
 * Serves the engine on its own (`npm run engine`), over its internal HTTP API,
 * on the configured storage: PostgreSQL when DATABASE_URL is set, otherwise
 * embedded PGlite in DATA_DIR. A gateway reaches it with DOWNSTREAM_URL; see
 * docs/engine.md for the storage recipe. Its telemetry is the gateway's
 * (OTEL_* variables; `service.name` mfg-engine by default): a gateway's call
 * continues the caller's trace here.
 */
import { Layer } from "effect"
import { StorageLive } from "./adapters/storage/Storage.ts"
import { telemetryFor } from "./adapters/telemetry/Telemetry.ts"
import { EngineOutboundLive } from "./app/AppLayers.ts"
import { EngineServerLive } from "./app/EngineServer.ts"
import { ReadinessChecksLive } from "./platform/Readiness.ts"
import { runService } from "./platform/ServiceMain.ts"
import { releasedAs } from "./platform/ShutdownReport.ts"
import { AppConfig } from "./services/AppConfig.ts"

// Each part's release is timed: a slow stop names the part it waits on (src/platform/ServiceMain.ts).
const Main = EngineServerLive.pipe(
  releasedAs("engine server"),
  // Its `/ready` checks storage; nothing else of the engine's adds a check.
  Layer.provide(ReadinessChecksLive),
  Layer.provideMerge(releasedAs("storage")(StorageLive("serve"))),
  // The model file services and webhook sender as AppConfig read them at start (an invalid value stopped the start, naming it).
  Layer.provide(EngineOutboundLive),
  // The configuration is read first: an invalid variable, the telemetry's included, stops the start naming every one.
  Layer.provide(telemetryFor("mfg-engine")),
  Layer.provide(AppConfig.layer)
)

runService(Main)
