/**
 * Serves the public API on the configured storage: embedded PGlite in
 * DATA_DIR by default, PostgreSQL when DATABASE_URL is set.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { ModelAnalyserLive } from "./engine/geometry/ModelAnalyser.ts"
import { ModelFetcherLive } from "./engine/geometry/ModelFetcher.ts"
import { ServicesLive } from "./layers/AppLayers.ts"
import { HttpServerLive } from "./layers/http/Server.ts"
import { StorageLive } from "./layers/storage/Storage.ts"
import { TelemetryLive } from "./layers/Telemetry.ts"
import { AppConfig } from "./services/AppConfig.ts"

const Main = HttpServerLive.pipe(
  Layer.provide(ServicesLive),
  Layer.provideMerge(StorageLive("serve")),
  Layer.provide(AppConfig.layer),
  Layer.provide(TelemetryLive),
  // MODEL_FETCH_*, MODEL_ANALYSIS_* and MODEL_MAX_* read once at start: an invalid value stops the start, naming it.
  Layer.provide([ModelFetcherLive, ModelAnalyserLive])
)

Layer.launch(Main).pipe(NodeRuntime.runMain)
