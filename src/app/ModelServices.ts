/**
 * The engine's model file services as AppConfig configured them at start:
 * the fetcher (MODEL_FETCH_*), whose kept connections close with the layer,
 * and the analyser's worker pool (MODEL_ANALYSIS_*, MODEL_MAX_*), whose
 * threads start and end with the layer.
 */
import { Effect, Layer } from "effect"
import { makeModelAnalyser, ModelAnalyser } from "../engine/geometry/ModelAnalyser.ts"
import { ModelFetcher, scopedModelFetcher } from "../engine/geometry/ModelFetcher.ts"
import { AppConfig } from "../services/AppConfig.ts"

export const ModelFetcherLive = Layer.effect(ModelFetcher, Effect.flatMap(AppConfig, (config) => scopedModelFetcher(config.modelFetch)))

export const ModelAnalyserLive = Layer.effect(ModelAnalyser, Effect.flatMap(AppConfig, (config) => makeModelAnalyser(config.modelAnalysis)))

export const ModelServicesLive = Layer.merge(ModelFetcherLive, ModelAnalyserLive)
