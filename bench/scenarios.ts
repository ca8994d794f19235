/**
 * The scenarios of the benchmark suite (bench/suite.ts): what each sends, to
 * which process, what every response must be, and the ratios the table shows.
 *
 *   read     authenticated GET /v1/customer/{id}: the service, the pg peer, the ceiling
 *   401      the same call with a refused secret (unknown id, wrong random part,
 *            blocked address, in turn): every response must be the one 401
 *   mcp      MCP tools/call `lookup_ticket` against its REST twin GET /v1/ticket/lookup
 *   part     POST /v1/ticket-model with a small binary STL from the fixture host
 *   tracing  the authenticated read on a second service that exports spans over
 *            OTLP to the fixture host, against the service without an exporter
 *   ratelimit the authenticated read with rate limiting on (a budget no load
 *            spends), counted in memory and in Redis, against the read without it
 */
import { MODEL_GEOMETRY, MODEL_PATH } from "./fixture-host.ts"
import type { RequestSpec } from "./load.ts"
import type { Server } from "./servers.ts"
import { type Baselines, BenchmarkInvalid, createRecord, createSecret, requestJson, wrongRandomPart } from "./targets.ts"

export const SCENARIO_IDS = ["read", "401", "mcp", "part", "tracing", "ratelimit"] as const
export type ScenarioId = (typeof SCENARIO_IDS)[number]

/** One process and the requests it is measured with. */
export interface Target {
  /** Unique within the scenario; the ratios name it. */
  readonly key: string
  /** The row's name in the table. */
  readonly label: string
  readonly server: Server
  readonly requests: ReadonlyArray<RequestSpec>
  readonly expectedStatus: number
  readonly verifyBody: (body: string) => boolean
  /** A response header the setup check requires (the load checks status and body only). */
  readonly expectHeader?: { readonly name: string; readonly value: string }
}

/** The service's read against the node:http + pg peer: the suite's headline ratio. */
export const READ_RATIO = "read / pg peer"
/** MCP `tools/call` against its REST twin, the same operation: the MCP surface's headline ratio. */
export const MCP_RATIO = "MCP / REST"

/** `numerator / denominator` of req/s, at the same number of connections. */
export interface RatioSpec {
  readonly label: string
  readonly numerator: { readonly scenario: ScenarioId; readonly target: string }
  readonly denominator: { readonly scenario: ScenarioId; readonly target: string }
  /** The target for this ratio, if it has one. */
  readonly goal?: { readonly atLeast: number; readonly stretch?: number }
}

export interface Scenario {
  readonly id: ScenarioId
  readonly title: string
  /** Measured one after the other at each number of connections, every round. */
  readonly targets: ReadonlyArray<Target>
  /** Fixed connection counts, instead of the suite's --connections. */
  readonly connections?: ReadonlyArray<number>
  readonly ratios: ReadonlyArray<RatioSpec>
}

// ---------------------------------------------------------------- the service's records

/** A service process set up for every scenario: secrets and the records the calls read. */
export interface PreparedService {
  readonly server: Server
  readonly secret: string
  /** A secret whose only range (TEST-NET-3) excludes 127.0.0.1. */
  readonly blockedSecret: string
  readonly customer: Readonly<Record<string, unknown>> & { readonly id: string }
  readonly ticketId: string
  readonly materialId: string
  /** The one 401 body, as the service answers it. */
  readonly notAuthorized: string
}

export const prepareService = async (server: Server): Promise<PreparedService> => {
  const { value: secret } = await createSecret(server)
  const { value: blockedSecret } = await createSecret(server, ["203.0.113.0/24"])
  const created = await createRecord(server, secret, "customer", { name: "Bench", email: "bench@example.com" })
  // As a read answers it: the baselines serve this copy, so every target answers the same body.
  const customer = (await requestJson(`${server.baseUrl}/v1/customer/${created.id}`, { headers: { authorization: secret } })).body as
    & Readonly<Record<string, unknown>>
    & { readonly id: string }
  const project = await createRecord(server, secret, "project", { customerId: created.id, name: "Bench order" })
  const ticket = await createRecord(server, secret, "ticket", { projectId: project.id, name: "Bench ticket" })
  const material = await createRecord(server, secret, "material", { name: "PLA", technologyId: "fdm" })
  const refused = await requestJson(`${server.baseUrl}/v1/customer/${created.id}`)
  if (refused.status !== 401) throw new BenchmarkInvalid(`${server.name}: a call without a secret answered ${refused.status}`)
  return { server, secret, blockedSecret, customer, ticketId: ticket.id, materialId: material.id, notAuthorized: refused.text }
}

// ---------------------------------------------------------------- requests

const get = (path: string, authorization: string): RequestSpec => ({ method: "GET", path, headers: { authorization } })

const postJson = (path: string, authorization: string, body: unknown, headers: Record<string, string> = {}): RequestSpec => ({
  method: "POST",
  path,
  headers: { authorization, "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})

const hasId = (id: string) => {
  const needle = `"id":"${id}"`
  return (body: string) => body.includes(needle)
}

const customerRead = (key: string, label: string, server: Server, secret: string, recordId: string): Target => ({
  key,
  label,
  server,
  requests: [get(`/v1/customer/${encodeURIComponent(recordId)}`, `Bearer ${secret}`)],
  expectedStatus: 200,
  verifyBody: hasId(recordId)
})

export const MCP_PROTOCOL_VERSION = "2026-07-28"

/** A stateless MCP 2026-07-28 tools/call as the Streamable HTTP transport sends it (see test/mcp/mcp.test.ts). */
const mcpToolCall = (secret: string, tool: string, args: Readonly<Record<string, unknown>>): RequestSpec =>
  postJson(
    "/v1/mcp",
    `Bearer ${secret}`,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: tool,
        arguments: args,
        _meta: { "io.modelcontextprotocol/protocolVersion": MCP_PROTOCOL_VERSION, "io.modelcontextprotocol/clientCapabilities": {} }
      }
    },
    {
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MCP_PROTOCOL_VERSION,
      "mcp-method": "tools/call",
      "mcp-name": tool
    }
  )

// ---------------------------------------------------------------- scenarios

export interface SuiteTargets {
  readonly service: PreparedService
  /** Needed by `read`. */
  readonly baselines?: Baselines
  /** With `--storage pglite`, for `read`: the same service on PostgreSQL, which the embedded one is compared with. */
  readonly onPostgres?: PreparedService
  /** Needed by `part`: serves MODEL_PATH. */
  readonly fixtureHost?: Server
  /** Needed by `tracing`: the service started with OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly traced?: PreparedService
  /** Needed by `ratelimit`: services started with RATE_LIMIT (RATE_LIMIT_ON), one counting in memory, one in Redis. */
  readonly limited?: { readonly memory: PreparedService; readonly redis: PreparedService }
}

/** A budget no load spends, so every call is counted and none refused: the cost of counting alone. */
export const RATE_LIMIT_ON = "1000000000/60s"

const need = <A>(value: A | undefined, what: string): A => {
  if (value === undefined) throw new Error(`the scenario needs ${what}`)
  return value
}

const read = ({ service, baselines, onPostgres }: SuiteTargets): Scenario => {
  const { ceiling, peer, secret } = need(baselines, "the baselines")
  const id = service.customer.id
  return {
    id: "read",
    title: "authenticated GET /v1/customer/{id}",
    targets: [
      customerRead("service", "service", service.server, service.secret, id),
      ...(onPostgres === undefined
        ? []
        : [customerRead("postgres", "service on PostgreSQL", onPostgres.server, onPostgres.secret, onPostgres.customer.id)]),
      customerRead("peer", "pg peer (node:http + pg)", peer, secret, id),
      customerRead("ceiling", "ceiling (node:http, memory)", ceiling, secret, id)
    ],
    ratios: [
      {
        label: READ_RATIO,
        numerator: { scenario: "read", target: "service" },
        denominator: { scenario: "read", target: "peer" },
        // A goal on PostgreSQL, the peer's own storage; on PGlite the ratio is shown without a verdict (its goal is PGlite / PostgreSQL).
        ...(onPostgres === undefined ? { goal: { atLeast: 1.2, stretch: 1.5 } } : {})
      },
      ...(onPostgres === undefined ? [] : [{
        label: "PGlite / PostgreSQL",
        numerator: { scenario: "read" as const, target: "service" },
        denominator: { scenario: "read" as const, target: "postgres" },
        goal: { atLeast: 0.6 }
      }]),
      { label: "read / ceiling", numerator: { scenario: "read", target: "service" }, denominator: { scenario: "read", target: "ceiling" } }
    ]
  }
}

const refused = ({ service }: SuiteTargets): Scenario => {
  const path = `/v1/customer/${encodeURIComponent(service.customer.id)}`
  const unknownId = `${"0".repeat(24)}.${service.secret.split(".")[1] ?? ""}`
  return {
    id: "401",
    title: "refused GET /v1/customer/{id}: unknown id, wrong random part, blocked address in turn",
    targets: [{
      key: "service",
      label: "service, refused secret",
      server: service.server,
      requests: [
        get(path, `Bearer ${unknownId}`),
        get(path, `Bearer ${wrongRandomPart(service.secret)}`),
        get(path, `Bearer ${service.blockedSecret}`)
      ],
      expectedStatus: 401,
      verifyBody: (body) => body === service.notAuthorized
    }],
    ratios: [{
      label: "401 / read",
      numerator: { scenario: "401", target: "service" },
      denominator: { scenario: "read", target: "service" },
      goal: { atLeast: 1.0 }
    }]
  }
}

const mcp = ({ service }: SuiteTargets): Scenario => {
  const { ticketId } = service
  const restTwin = hasId(ticketId)
  return {
    id: "mcp",
    title: "MCP tools/call lookup_ticket vs REST GET /v1/ticket/lookup",
    targets: [
      {
        key: "mcp",
        label: "MCP tools/call lookup_ticket",
        server: service.server,
        requests: [mcpToolCall(service.secret, "lookup_ticket", { identifier: ticketId })],
        expectedStatus: 200,
        // The tool's answer is the ticket (structuredContent), not a tool error.
        verifyBody: (body) => body.includes("\"structuredContent\":{") && restTwin(body) && !body.includes("\"isError\":true")
      },
      {
        key: "rest",
        label: "REST GET /v1/ticket/lookup",
        server: service.server,
        requests: [get(`/v1/ticket/lookup?identifier=${encodeURIComponent(ticketId)}`, `Bearer ${service.secret}`)],
        expectedStatus: 200,
        verifyBody: restTwin
      }
    ],
    ratios: [{
      label: MCP_RATIO,
      numerator: { scenario: "mcp", target: "mcp" },
      denominator: { scenario: "mcp", target: "rest" },
      goal: { atLeast: 0.5 }
    }]
  }
}

const part = ({ service, fixtureHost }: SuiteTargets): Scenario => {
  const host = need(fixtureHost, "the fixture host")
  const geometry = [`"volume":${MODEL_GEOMETRY.volume}`, `"triangleCount":${MODEL_GEOMETRY.triangleCount}`]
  return {
    id: "part",
    title: "POST /v1/ticket-model with a 684-byte binary STL (downloaded and analysed per call)",
    targets: [{
      key: "service",
      label: "service, part from STL",
      server: service.server,
      requests: [postJson("/v1/ticket-model", `Bearer ${service.secret}`, {
        ticketId: service.ticketId,
        modelEndpoint: { url: `${host.baseUrl}${MODEL_PATH}` },
        technologyId: "fdm",
        materialId: service.materialId,
        quantity: 1
      })],
      expectedStatus: 200,
      // The model was really downloaded and analysed: the part carries its geometry.
      verifyBody: (body) => geometry.every((field) => body.includes(field))
    }],
    ratios: []
  }
}

const tracing = ({ service, traced }: SuiteTargets): Scenario => {
  const on = need(traced, "the traced service")
  return {
    id: "tracing",
    title: "authenticated GET /v1/customer/{id}, tracing off (no exporter) vs on (OTLP to a local sink)",
    connections: [32],
    targets: [
      customerRead("off", "service, tracing off", service.server, service.secret, service.customer.id),
      customerRead("on", "service, tracing on", on.server, on.secret, on.customer.id)
    ],
    ratios: [
      { label: "tracing on / off", numerator: { scenario: "tracing", target: "on" }, denominator: { scenario: "tracing", target: "off" } },
      // The same process and call as the read scenario's service row: how far apart two measurements of one thing land.
      { label: "tracing off / read", numerator: { scenario: "tracing", target: "off" }, denominator: { scenario: "read", target: "service" } }
    ]
  }
}

/** Every answer of a limited service carries the headers of its budget. */
const LIMITED_POLICY = `"default";q=${RATE_LIMIT_ON.split("/")[0]};w=60`

const rateLimit = ({ service, limited }: SuiteTargets): Scenario => {
  const { memory, redis } = need(limited, "the rate-limited services")
  const limitedRead = (key: string, label: string, prepared: PreparedService): Target => ({
    ...customerRead(key, label, prepared.server, prepared.secret, prepared.customer.id),
    expectHeader: { name: "ratelimit-policy", value: LIMITED_POLICY }
  })
  return {
    id: "ratelimit",
    title: `authenticated GET /v1/customer/{id}, rate limit off vs on (RATE_LIMIT=${RATE_LIMIT_ON}, memory and Redis)`,
    targets: [
      customerRead("off", "service, rate limit off", service.server, service.secret, service.customer.id),
      limitedRead("memory", "service, rate limit in memory", memory),
      limitedRead("redis", "service, rate limit in Redis", redis)
    ],
    ratios: [
      {
        label: "rate limit (memory) / off",
        numerator: { scenario: "ratelimit", target: "memory" },
        denominator: { scenario: "ratelimit", target: "off" },
        goal: { atLeast: 0.9 }
      },
      {
        label: "rate limit (Redis) / off",
        numerator: { scenario: "ratelimit", target: "redis" },
        denominator: { scenario: "ratelimit", target: "off" },
        goal: { atLeast: 0.9 }
      }
    ]
  }
}

const BUILDERS: Record<ScenarioId, (targets: SuiteTargets) => Scenario> = { read, "401": refused, mcp, part, tracing, ratelimit: rateLimit }

export const buildScenarios = (ids: ReadonlyArray<ScenarioId>, targets: SuiteTargets): Array<Scenario> => ids.map((id) => BUILDERS[id](targets))

/**
 * Before any load: every request of every target answers as the load will
 * require (status and body), so a broken setup reports no numbers.
 */
export const checkScenario = async (scenario: Scenario) => {
  for (const target of scenario.targets) {
    for (const request of target.requests) {
      const reply = await requestJson(`${target.server.baseUrl}${request.path}`, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body })
      })
      if (reply.status !== target.expectedStatus || !target.verifyBody(reply.text)) {
        throw new BenchmarkInvalid(
          `${scenario.id} / ${target.label}: ${request.method} ${request.path} answered ${reply.status} ` +
            `(expected ${target.expectedStatus}) ${reply.text.slice(0, 400)}`
        )
      }
      const expected = target.expectHeader
      if (expected !== undefined && reply.headers.get(expected.name) !== expected.value) {
        throw new BenchmarkInvalid(
          `${scenario.id} / ${target.label}: ${expected.name} was ${reply.headers.get(expected.name)}, not ${expected.value}`
        )
      }
    }
  }
}
