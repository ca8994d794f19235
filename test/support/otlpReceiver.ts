/**
 * An OTLP/HTTP receiver in the test's process, as a collector would be:
 * `POST /v1/traces` and `POST /v1/metrics` in protobuf (the default
 * protocol), decoded with the official OpenTelemetry protos (the code
 * generated from them that @opentelemetry/otlp-transformer ships), each
 * export kept with its path, its headers and its resource's attributes.
 */
import otlpRoot from "@opentelemetry/otlp-transformer/build/src/generated/root.js"
import type { IncomingHttpHeaders } from "node:http"
import * as Http from "node:http"
import type * as Net from "node:net"

interface ProtoType {
  decode(bytes: Uint8Array): unknown
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>
}

const proto = (otlpRoot as unknown as {
  opentelemetry: {
    proto: {
      collector: {
        trace: { v1: { ExportTraceServiceRequest: ProtoType } }
        metrics: { v1: { ExportMetricsServiceRequest: ProtoType } }
      }
    }
  }
}).opentelemetry.proto.collector

type AnyValue = { stringValue?: string; intValue?: number; doubleValue?: number; boolValue?: boolean }
type KeyValues = ReadonlyArray<{ key: string; value: AnyValue }>

/** An attribute list as a record of plain values. */
export const attributesOf = (list: KeyValues | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue]))

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  /** "" for a root span. */
  readonly parentSpanId: string
  readonly name: string
  readonly kind: number
  /** 0 unset, 1 ok, 2 error. */
  readonly status: number
  readonly attributes: Record<string, unknown>
  readonly resource: Record<string, unknown>
  readonly receivedAt: number
}

export interface ReceivedPoint {
  readonly metric: string
  readonly attributes: Record<string, unknown>
  /** A sum's or a gauge's value, a histogram's count. */
  readonly value: number
  readonly resource: Record<string, unknown>
}

export interface ReceivedExport {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly resources: ReadonlyArray<Record<string, unknown>>
  readonly spans: ReadonlyArray<ReceivedSpan>
  /** The metric points of this export (metrics are cumulative: the latest export has the totals). */
  readonly points: ReadonlyArray<ReceivedPoint>
}

const hex = (base64: unknown) => typeof base64 === "string" ? Buffer.from(base64, "base64").toString("hex") : ""

const TO_OBJECT = { longs: Number, bytes: String, enums: Number, defaults: true, arrays: true }

type Resourced = { resource?: { attributes?: KeyValues } }

const decodeTraces = (body: Buffer, receivedAt: number) => {
  const type = proto.trace.v1.ExportTraceServiceRequest
  const request = type.toObject(type.decode(body), TO_OBJECT) as {
    resourceSpans: Array<Resourced & { scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }>
  }
  const resources = request.resourceSpans.map((each) => attributesOf(each.resource?.attributes))
  const spans = request.resourceSpans.flatMap((each, i) =>
    each.scopeSpans.flatMap((scope) =>
      scope.spans.map((span): ReceivedSpan => ({
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: hex(span.parentSpanId),
        name: String(span.name),
        kind: Number(span.kind),
        status: Number((span.status as { code?: number } | undefined)?.code ?? 0),
        attributes: attributesOf(span.attributes as KeyValues),
        resource: resources[i]!,
        receivedAt
      }))
    )
  )
  return { resources, spans, points: [] }
}

type DataPoints = { dataPoints?: Array<{ attributes?: KeyValues; asInt?: number; asDouble?: number; count?: number }> }

const decodeMetrics = (body: Buffer) => {
  const type = proto.metrics.v1.ExportMetricsServiceRequest
  const request = type.toObject(type.decode(body), TO_OBJECT) as {
    resourceMetrics: Array<
      Resourced & { scopeMetrics: Array<{ metrics: Array<{ name: string; sum?: DataPoints; gauge?: DataPoints; histogram?: DataPoints }> }> }
    >
  }
  const resources = request.resourceMetrics.map((each) => attributesOf(each.resource?.attributes))
  const points = request.resourceMetrics.flatMap((each, i) =>
    each.scopeMetrics.flatMap((scope) =>
      scope.metrics.flatMap((metric) =>
        [...(metric.sum?.dataPoints ?? []), ...(metric.gauge?.dataPoints ?? []), ...(metric.histogram?.dataPoints ?? [])].map((point) => ({
          metric: metric.name,
          attributes: attributesOf(point.attributes),
          value: Number(metric.histogram === undefined ? (point.asInt ?? point.asDouble ?? 0) : (point.count ?? 0)),
          resource: resources[i]!
        }))
      )
    )
  )
  return { resources, spans: [], points }
}

export interface OtlpReceiver {
  readonly url: string
  readonly exports: Array<ReceivedExport>
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** Stops listening and drops its connections: exports to it then fail. */
  readonly stop: () => Promise<void>
}

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const exports: Array<ReceivedExport> = []
  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      const path = request.url ?? ""
      const decoded = path === "/v1/traces" ? decodeTraces(body, Date.now()) : path === "/v1/metrics" ? decodeMetrics(body) : undefined
      if (decoded !== undefined) exports.push({ path, headers: request.headers, ...decoded })
      response.writeHead(decoded === undefined ? 404 : 200, { "content-type": "application/x-protobuf" }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    spans: () => exports.flatMap((each) => each.spans),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
