/**
 * The MCP conformance suite (@modelcontextprotocol/conformance) against
 * POST /v1/mcp, as part of `npm test`: the requirement sets of both
 * revisions the endpoint serves (`--requirements 2026-07-28`, stateless with
 * per-request `_meta`: server-stateless, tools-list, http-header-validation,
 * dns-rebinding-protection, caching and the rest; and `--requirements
 * 2025-11-25`, the initialize handshake without sessions).
 *
 * The suite cannot send headers, so it talks to a test-only proxy on a
 * random local port that adds `Authorization: Bearer <secret>` (a secret of a
 * fresh app) and forwards to the real server: production authentication is
 * unchanged, and every request the suite makes is authenticated and metered
 * like any other. The proxy forwards everything else untouched (method,
 * headers such as Origin and MCP-Protocol-Version, body, status, streams).
 *
 * The checks that need fixture tools, prompts or resources this server does
 * not have are listed one by one, each with the reason, in
 * expected-failures-<revision>.yaml; the run fails on any other failing
 * check and on a listed check that passes.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import { createServer, request, type Server } from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { backends } from "../support/backends.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const HERE = Path.dirname(new URL(import.meta.url).pathname)
const SUITE = Path.resolve(HERE, "../../node_modules/@modelcontextprotocol/conformance/dist/index.js")
const REVISIONS = ["2026-07-28", "2025-11-25"] as const
type Revision = (typeof REVISIONS)[number]
const expectedFailuresFile = (revision: Revision) => Path.join(HERE, `expected-failures-${revision}.yaml`)

/**
 * The test-only proxy: forwards every request to `target` byte for byte
 * (method, headers including Host and Origin, body, streamed response) and
 * adds `Authorization: Bearer <secret>`.
 */
const authorizingProxy = (target: string, secret: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ server: Server; url: string }>((resolve) => {
        const upstream = new URL(target)
        const server = createServer((incoming, outgoing) => {
          const headers = { ...incoming.headers, authorization: `Bearer ${secret}` }
          const forward = request(
            { host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: incoming.method, headers },
            (answer) => {
              outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
              answer.pipe(outgoing)
            }
          )
          forward.on("error", () => {
            if (!outgoing.headersSent) outgoing.writeHead(502)
            outgoing.end()
          })
          incoming.pipe(forward)
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resolve({ server, url: `http://127.0.0.1:${port}/mcp` })
        })
      })
    ),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

interface Check {
  readonly id: string
  readonly status: string
  readonly errorMessage?: string
}

/** Runs the suite on a revision's requirement set; answers its exit code, output and the checks of every scenario. */
const runSuite = (url: string, revision: Revision) =>
  Effect.promise(() => {
    const output = Fs.mkdtempSync(Path.join(Os.tmpdir(), "mcp-conformance-"))
    return new Promise<{ code: number; stdout: string; results: Map<string, ReadonlyArray<Check>> }>((resolve) => {
      execFile(
        process.execPath,
        [SUITE, "server", "--url", url, "--requirements", revision, "--expected-failures", expectedFailuresFile(revision), "--output-dir", output],
        { timeout: 240_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1" } },
        (error, stdout, stderr) => {
          const results = new Map<string, ReadonlyArray<Check>>()
          for (const directory of Fs.readdirSync(output, { recursive: true }) as Array<string>) {
            if (!directory.endsWith("checks.json")) continue
            const scenario = Path.dirname(directory).replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "")
            results.set(scenario, JSON.parse(Fs.readFileSync(Path.join(output, directory), "utf8")) as ReadonlyArray<Check>)
          }
          Fs.rmSync(output, { recursive: true, force: true })
          const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
          resolve({ code, stdout: `${stdout}\n${stderr}`, results })
        }
      )
    })
  })

/** The checks expected to fail (`scenario:check-id`), from the revision's expected-failures file. */
const expectedFailures = (revision: Revision): ReadonlyArray<string> =>
  Fs.readFileSync(expectedFailuresFile(revision), "utf8")
    .split("\n")
    .map((line) => line.match(/^\s+-\s+([a-z0-9-]+:[a-z0-9-]+)/)?.[1])
    .filter((name): name is string => name !== undefined)

/** Scenarios each revision must run and pass whole (none of their checks is excused). */
const MUST_PASS: Readonly<Record<Revision, ReadonlyArray<string>>> = {
  "2026-07-28": ["tools-list", "http-header-validation", "dns-rebinding-protection", "sep-2164-resource-not-found"],
  "2025-11-25": ["tools-list", "dns-rebinding-protection", "server-initialize", "ping", "logging-set-level"]
}

/** Scenarios the requirement sets run but do not score (the tasks extension, pending scenarios): reported, not judged. */
const NOT_SCORED = /^(tasks-|json-schema-2020-12$|http-custom-header-server-validation$|server-sse-polling$|server-session-lifecycle$)/

// One backend is enough: the suite checks the protocol, not storage.
layer(TestApp(backends[0]!), { timeout: 600_000, excludeTestServices: true })("MCP conformance suite", (it) => {
  for (const revision of REVISIONS) {
    it.effect(`passes the ${revision} requirement set but the checks needing fixtures this server does not have`, () =>
      Effect.gen(function*() {
        const client = yield* TestClient
        const { value } = yield* client.createSecret(`conformance-${Math.random().toString(36).slice(2)}`)
        const proxy = yield* authorizingProxy(`${client.baseUrl}/v1/mcp`, value)
        const run = yield* runSuite(proxy.url, revision)
        if (process.env.MCP_CONFORMANCE_DEBUG !== undefined) {
          Fs.writeFileSync(`${process.env.MCP_CONFORMANCE_DEBUG}-${revision}`, JSON.stringify([...run.results], null, 1))
        }
        const failing = [...run.results]
          .filter(([scenario]) => !NOT_SCORED.test(scenario))
          .flatMap(([scenario, checks]) =>
            checks.filter((check) => check.status === "FAILURE" || check.status === "WARNING").map((check) => `${scenario}:${check.id}`)
          )
        const expected = expectedFailures(revision)
        assert.isAbove(expected.length, 0)
        for (const scenario of MUST_PASS[revision]) {
          assert.isTrue(run.results.has(scenario), `${scenario} did not run\n${run.stdout}`)
          assert.isTrue(run.results.get(scenario)!.length > 0, `${scenario} ran no check`)
        }
        // Only fixture checks fail; every one of them is listed (the suite also refuses a listed check that passes).
        assert.deepStrictEqual(failing.filter((check) => !expected.includes(check)), [], run.stdout)
        assert.strictEqual(run.code, 0, run.stdout)
      }).pipe(Effect.scoped))
  }
})
