/**
 * Serves the engine on its own (`npm run engine`), over its internal HTTP API,
 * on the configured storage: PostgreSQL when DATABASE_URL is set, otherwise
 * embedded PGlite in DATA_DIR. A gateway reaches it with DOWNSTREAM_URL; see
 * docs/engine.md for the storage recipe. Its telemetry is the gateway's
 * (OTEL_* variables; `service.name` mfg-engine by default): a gateway's call
 * continues the caller's trace here.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { ModelAnalyserLive } from "./engine/geometry/ModelAnalyser.ts"
import { ModelFetcherLive } from "./engine/geometry/ModelFetcher.ts"
import { EngineServerLive } from "./layers/EngineServer.ts"
import { StorageLive } from "./layers/storage/Storage.ts"
import { telemetryFor } from "./layers/Telemetry.ts"
import { AppConfig } from "./services/AppConfig.ts"

const Main = EngineServerLive.pipe(
  Layer.provideMerge(StorageLive("serve")),
  Layer.provide(AppConfig.layer),
  Layer.provide(telemetryFor("mfg-engine")),
  // MODEL_FETCH_*, MODEL_ANALYSIS_* and MODEL_MAX_* read once at start: an invalid value stops the start, naming it.
  Layer.provide([ModelFetcherLive, ModelAnalyserLive])
)

Layer.launch(Main).pipe(NodeRuntime.runMain)
