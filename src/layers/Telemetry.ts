/**
 * Tracing: spans exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set (OTEL_EXPORTER_OTLP_PROTOCOL `http/protobuf`, the default, or
 * `http/json`; OTEL_SERVICE_NAME). Without an exporter, tracing is switched
 * off: no span is made, so it costs nothing on the request path.
 *
 * Spans never carry a secret: Effect records no request header unless told
 * to, and redacts `authorization` and `x-admin-token` if it ever does.
 */
import { Config, Effect, Layer, Option, References } from "effect"
import { FetchHttpClient, Headers } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"

const REDACTED_HEADERS = ["authorization", "x-admin-token", "cookie", "set-cookie", "x-api-key"]

export const TelemetryLive = Layer.unwrap(Effect.gen(function*() {
  const endpoint = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT"))
  const serviceName = yield* Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("mfg-public-api"))
  const protocol = yield* Config.Literals(["http/protobuf", "http/json"], "OTEL_EXPORTER_OTLP_PROTOCOL").pipe(
    Config.withDefault("http/protobuf")
  )
  const redaction = Layer.succeed(Headers.CurrentRedactedNames, REDACTED_HEADERS)
  if (Option.isNone(endpoint)) return Layer.merge(redaction, Layer.succeed(References.TracerEnabled, false))
  return OtlpTracer.layer({
    url: `${endpoint.value.replace(/\/$/, "")}/v1/traces`,
    resource: { serviceName, serviceVersion: "1.0.0" }
  }).pipe(
    Layer.provide(protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer),
    Layer.merge(redaction)
  )
}))
