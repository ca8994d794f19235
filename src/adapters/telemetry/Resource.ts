/**
 * The OpenTelemetry resource of the process's spans and metrics:
 *
 * | attribute | value |
 * |---|---|
 * | `service.name` | OTEL_SERVICE_NAME, else `service.name` of OTEL_RESOURCE_ATTRIBUTES, else the process's (`mfg-public-api`, `mfg-engine`) |
 * | `service.namespace` | `mfg` |
 * | `service.version` | the package's version (package.json) |
 * | `service.instance.id` | a random UUID made when the process starts: one per process, the same for its life |
 *
 * OTEL_RESOURCE_ATTRIBUTES (read and percent-decoded by Effect's Config, as
 * its own OTLP resource reads it) adds attributes and replaces any of the
 * three above (a `service.instance.id` of the operator's, such as a pod
 * name, for one); OTEL_SERVICE_NAME has the last word on `service.name`, as
 * the SDK environment specification says. Effect adds `telemetry.sdk.*`.
 */
import { Option } from "effect"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"

/** This process's instance id. */
export const SERVICE_INSTANCE_ID = randomUUID()

/** The namespace of the gateway and the engine. */
export const SERVICE_NAMESPACE = "mfg"

/** The package's version, from package.json. */
export const SERVICE_VERSION: string = (() => {
  const manifest: unknown = JSON.parse(Fs.readFileSync(new URL("../../../package.json", import.meta.url), "utf8"))
  const version = typeof manifest === "object" && manifest !== null ? (manifest as { version?: unknown }).version : undefined
  return typeof version === "string" ? version : "unknown"
})()

export interface ResourceSettings {
  readonly serviceName: Option.Option<string>
  readonly resourceAttributes: Option.Option<Readonly<Record<string, string>>>
}

/** The resource as Effect's OTLP exporters take it. */
export const resourceOf = (defaultServiceName: string, settings: ResourceSettings) => {
  const {
    "service.name": namedInAttributes,
    "service.version": serviceVersion,
    ...attributes
  }: Record<string, string> = {
    "service.namespace": SERVICE_NAMESPACE,
    "service.version": SERVICE_VERSION,
    "service.instance.id": SERVICE_INSTANCE_ID,
    ...Option.getOrElse(settings.resourceAttributes, () => ({}))
  }
  return {
    serviceName: Option.getOrElse(settings.serviceName, () => namedInAttributes ?? defaultServiceName),
    serviceVersion: serviceVersion ?? SERVICE_VERSION,
    attributes
  }
}
