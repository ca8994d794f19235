/**
 * Telemetry of a process (the gateway, or the engine served on its own):
 *
 * - traces and metrics exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
 *   is set (`<endpoint>/v1/traces`, `<endpoint>/v1/metrics`;
 *   OTEL_EXPORTER_OTLP_PROTOCOL `http/protobuf`, the default, or `http/json`;
 *   OTEL_SERVICE_NAME; OTEL_METRIC_EXPORT_INTERVAL in ms, default 10000).
 *   Without an exporter, tracing is switched off (no span is made) and the
 *   metric instruments are no-ops, so neither costs anything on the request
 *   path;
 * - logs as JSON lines on stdout (telemetry/JsonLog.ts), whatever the exporter.
 *
 * Spans never carry a secret: Effect records no request header unless told
 * to, and redacts `authorization` and `x-admin-token` if it ever does.
 */
import { Config, Effect, Layer, Option, References } from "effect"
import { FetchHttpClient, Headers } from "effect/http"
import { OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"
import { InvalidConfig } from "../domain/Errors.ts"
import { Instruments, makeInstruments } from "./telemetry/Instruments.ts"
import { JsonLoggerLive } from "./telemetry/JsonLog.ts"

const REDACTED_HEADERS = ["authorization", "x-admin-token", "cookie", "set-cookie", "x-api-key"]

const settings = Effect.gen(function*() {
  const endpoint = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT"))
  const serviceName = yield* Config.option(Config.String("OTEL_SERVICE_NAME"))
  const protocol = yield* Config.Literals(["http/protobuf", "http/json"], "OTEL_EXPORTER_OTLP_PROTOCOL").pipe(
    Config.withDefault("http/protobuf")
  )
  const metricIntervalMs = yield* Config.Int("OTEL_METRIC_EXPORT_INTERVAL").pipe(Config.withDefault(10_000))
  return { endpoint, serviceName, protocol, metricIntervalMs }
}).pipe(Effect.catch((error) => Effect.die(new InvalidConfig({ message: `OTEL_*: ${error.message}` }))))

/** Telemetry for a process whose `service.name` is `defaultServiceName` unless OTEL_SERVICE_NAME says otherwise. */
export const telemetryFor = (defaultServiceName: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* settings
    const always = Layer.merge(Layer.succeed(Headers.CurrentRedactedNames, REDACTED_HEADERS), JsonLoggerLive)
    if (Option.isNone(config.endpoint)) return Layer.merge(always, Layer.succeed(References.TracerEnabled, false))

    const base = config.endpoint.value.replace(/\/+$/, "")
    const resource = { serviceName: Option.getOrElse(config.serviceName, () => defaultServiceName), serviceVersion: "1.0.0" }
    const exporters = Layer.merge(
      OtlpTracer.layer({ url: `${base}/v1/traces`, resource }),
      OtlpMetrics.layer({ url: `${base}/v1/metrics`, resource, exportInterval: Math.max(100, config.metricIntervalMs) })
    ).pipe(
      Layer.provide(config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
      Layer.provide(FetchHttpClient.layer)
    )
    // The instruments record into the default metric registry, the one the exporter snapshots.
    const instruments = Layer.effect(Instruments, Effect.map(Effect.context<never>(), makeInstruments))
    return Layer.mergeAll(exporters, instruments, always)
  }))

/** The gateway's telemetry (`service.name` mfg-public-api by default). */
export const TelemetryLive = telemetryFor("mfg-public-api")
