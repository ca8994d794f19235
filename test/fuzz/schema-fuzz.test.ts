/**
 * Schema-derived fuzzing of the whole public surface, through the real HTTP
 * server (in-process, embedded PGlite): every REST operation of PublicApi and
 * every MCP tool, with valid requests and requests made invalid in one place
 * (see cases.ts), at least 10,000 in all.
 *
 * What must hold for every answer:
 *   - no 5xx, but for a downstream error passed through (`x-error-source`) that
 *     the engine means: with the engine in-process, only the 501 of the one
 *     operation the specification leaves unimplemented (`DELETE /item/{id}`)
 *     qualifies; any other 501, or a 502/503 of its own, would be a bug here,
 *     as storage is up;
 *   - a 4xx that is not the engine's has the standard `{code, message, type}`
 *     body with `code` the status (the 401 is never expected: the secret is valid);
 *   - a valid request never gets a 400 (of the gateway or the engine);
 *   - an invalid one gets the 400 (before any engine call), and its message
 *     names the field or parameter at fault, or says that the body as a whole
 *     is not a JSON object when that is what was sent;
 *   - MCP: HTTP 200 and a JSON-RPC result; errors are tool results
 *     (`isError`) with the same body, under the same rules.
 *
 * Reproducible: FUZZ_SEED (printed) and FUZZ_RUNS (default 10,000) override;
 * FUZZ_CONCURRENCY (default 32) is how many requests are in flight.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestApp, TestClient } from "../support/TestApp.ts"
import { type Case, casesFor, type McpCase, type RestCase } from "./cases.ts"
import { deriveTargets } from "./targets.ts"

const DEFAULT_RUNS = 10_000
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122)
const RUNS = Number(process.env.FUZZ_RUNS ?? DEFAULT_RUNS)
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 32)
const MCP_VERSION = "2026-07-28"
/** The engine's own 5xx that the fuzzer may see: the 501 of the operation the specification leaves unimplemented. */
const ENGINE_5XX: ReadonlyMap<string, number> = new Map([["item.remove", 501]])

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

interface Finding {
  readonly problem: string
  readonly case: string
  readonly answer: string
}

const describeCase = (c: Case) =>
  c.kind === "rest"
    ? `${c.target.id} [${c.mutation}${c.expect.valid ? ", valid" : ""}] ${c.method} ${c.url.slice(0, 300)} ${c.body === undefined ? "" : c.body.slice(0, 400)}`
    : `${c.target.id} [${c.mutation}${c.expect.valid ? ", valid" : ""}] ${JSON.stringify(c.arguments)?.slice(0, 500)}`

/** The standard error body: exactly code, message and type (and `errors` on a 400), code the status. */
const standardBody = (text: string, status: number): { readonly message: string } | undefined => {
  try {
    const body = JSON.parse(text) as Record<string, unknown>
    const keys = Object.keys(body).sort().join(",")
    // A 400 also lists every field at fault: `errors`, each a path and a message.
    const listed = status === 400 && keys === "code,errors,message,type" && Array.isArray(body.errors) &&
      body.errors.every((problem: unknown) =>
        typeof problem === "object" && problem !== null && typeof (problem as Record<string, unknown>).path === "string" &&
        typeof (problem as Record<string, unknown>).message === "string"
      )
    return (keys === "code,message,type" || listed) && body.code === status && typeof body.message === "string" && typeof body.type === "string"
      ? { message: body.message }
      : undefined
  } catch {
    return undefined
  }
}

/** The `code` of a tool error's text (the REST error body), if it has one. */
const toolErrorCode = (text: string): number | undefined => {
  try {
    const code = (JSON.parse(text) as { code?: unknown }).code
    return typeof code === "number" ? code : undefined
  } catch {
    return undefined
  }
}

const BODY_LEVEL = /^(The request body is not a valid JSON object|The arguments must be a JSON object|The request body must be empty)/

/** Whether a 400's message names what is at fault: a field or parameter in quotes, or the body as a whole. */
const namesTheFault = (message: string, c: Case) =>
  c.expect.names.some((name) => name.length > 0 && message.includes(`"${name}"`)) || (c.expect.bodyLevel && BODY_LEVEL.test(message))

/** What is wrong with the answer to a case, if anything (the judge of a 400 or a tool error's body alike). */
const judge = (c: Case, status: number, body: { readonly message: string } | undefined, passthrough: boolean): string | undefined => {
  if (!c.expect.valid) {
    // Refused by the gateway, before any engine call, and said why.
    if (passthrough || status !== 400) return `${status}${passthrough ? " from the engine" : ""} for an invalid request (expected 400)`
    if (body === undefined) return "400 without the standard body"
    return namesTheFault(body.message, c) ? undefined : "400 that names nothing at fault"
  }
  if (status >= 500) return passthrough && ENGINE_5XX.get(c.target.id) === status ? undefined : "5xx"
  if (status === 400) return passthrough ? "engine 400 for a valid request" : "400 for a valid request"
  if (passthrough) return undefined
  if (status === 401) return "401 with a valid secret"
  if (status >= 400 && body === undefined) return `${status} without the standard body`
  return undefined
}

layer(TestApp("pglite"), { timeout: 240_000, excludeTestServices: true })("Schema-derived fuzzing", (it) => {
  it.effect(`${RUNS} requests from the Schemas across every REST operation and MCP tool (seed ${SEED})`, () =>
    Effect.gen(function*() {
      const client = yield* TestClient
      const { value: secret } = yield* client.createSecret("fuzz")
      const started = Date.now()
      const targets = deriveTargets(SEED)
      const cases = casesFor(targets, RUNS, SEED)
      const derivedMs = Date.now() - started
      console.log(`fuzz: seed ${SEED} (FUZZ_SEED), ${cases.length} cases over ${targets.length} targets (FUZZ_RUNS=${RUNS}), derived in ${derivedMs} ms`)

      const send = (method: string, url: string, body: string | undefined, headers: Record<string, string> = {}) =>
        Effect.promise(async (): Promise<Answer> => {
          const response = await fetch(`${client.baseUrl}${url}`, {
            method,
            headers: { authorization: secret, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
            ...(body === undefined ? {} : { body }),
            signal: AbortSignal.timeout(30_000)
          })
          return { status: response.status, headers: response.headers, text: await response.text() }
        })

      const findings: Array<Finding> = []
      const tally = new Map<string, number>()
      const count = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1)
      /** `answer.status` is the HTTP status, or a tool error's code; `text` what carries the error. */
      const note = (c: Case, problem: string | undefined, answer: Answer) => {
        count(`${c.kind} ${c.expect.valid ? "valid" : "invalid"} ${answer.status}`)
        if (problem === undefined) return
        findings.push({ problem, case: describeCase(c), answer: `${answer.status} ${answer.headers.get("x-error-source") ?? ""} ${answer.text.slice(0, 300)}` })
      }

      const rest = (c: RestCase) =>
        Effect.map(send(c.method, c.url, c.body), (answer) => {
          const passthrough = answer.headers.has("x-error-source")
          note(c, judge(c, answer.status, standardBody(answer.text, answer.status), passthrough), answer)
        })

      let rpcId = 0
      const mcp = (c: McpCase) => {
        const id = ++rpcId
        const meta = { "io.modelcontextprotocol/protocolVersion": MCP_VERSION, "io.modelcontextprotocol/clientCapabilities": {} }
        const body = JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: c.target.tool, arguments: c.arguments, _meta: meta } })
        return Effect.map(
          send("POST", "/v1/mcp", body, {
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": MCP_VERSION,
            "mcp-method": "tools/call",
            "mcp-name": c.target.tool
          }),
          (answer) => {
            if (answer.status !== 200) return note(c, `HTTP ${answer.status} for tools/call`, answer)
            const message = JSON.parse(answer.text) as { result?: { isError?: boolean; content?: ReadonlyArray<{ text?: string }> } }
            if (message.result === undefined) {
              // Arguments that are not an object break the protocol itself: its "invalid params" error is the answer.
              const invalidParams = c.expect.bodyLevel && (message as { error?: { code?: number } }).error?.code === -32602
              return note(c, invalidParams ? undefined : "a JSON-RPC error for tools/call of a known tool", answer)
            }
            if (message.result.isError !== true) {
              return note(c, c.expect.valid ? undefined : "an invalid call answered as a success", { ...answer, status: 200 })
            }
            const text = message.result.content?.[0]?.text ?? ""
            const code = toolErrorCode(text)
            if (code === undefined) return note(c, "a tool error without the standard body", answer)
            // A tool error carries no source header: a 5xx there is never a passthrough the fuzzer accepts.
            note(c, judge(c, code, standardBody(text, code), false), { ...answer, status: code, text })
          }
        )
      }

      yield* Effect.forEach(cases, (c) => (c.kind === "rest" ? rest(c) : mcp(c)), { concurrency: CONCURRENCY, discard: true })

      // The MCP endpoint itself, sent what is not JSON-RPC: an answer, never a 5xx.
      for (const junk of ["{", "[]", "null", "{}", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: "x" })]) {
        const answer = yield* send("POST", "/v1/mcp", junk, { accept: "application/json, text/event-stream", "mcp-protocol-version": MCP_VERSION })
        count(`mcp junk ${answer.status}`)
        if (answer.status >= 500) findings.push({ problem: "5xx", case: `POST /v1/mcp ${junk}`, answer: `${answer.status} ${answer.text.slice(0, 300)}` })
      }

      const elapsedMs = Date.now() - started
      const valid = cases.filter((c) => c.expect.valid).length
      const problems = [...new Set(findings.map((finding) => finding.problem))]
      const byProblem = problems.map((problem) => {
        const list = findings.filter((finding) => finding.problem === problem)
        return { problem, count: list.length, examples: list.slice(0, 5) }
      })
      console.log(
        `fuzz: ${cases.length} requests (${valid} valid, ${cases.length - valid} invalid) in ${elapsedMs} ms; answers ${
          JSON.stringify(Object.fromEntries([...tally].sort()))
        }`
      )
      if (findings.length > 0) console.log(`fuzz findings (seed ${SEED}):\n${JSON.stringify(byProblem, null, 2)}`)

      assert.isAtLeast(cases.length, RUNS)
      // Every operation and tool was called, with valid and with invalid input.
      for (const target of targets) {
        const mine = cases.filter((c) => c.target === target)
        const takesInput = target.kind === "mcp" || [target.params, target.query, target.payload].some((part) => part !== undefined)
        assert.isTrue(mine.some((c) => c.expect.valid), `${target.id}: no valid case`)
        if (takesInput) assert.isTrue(mine.some((c) => !c.expect.valid), `${target.id}: no invalid case`)
      }
      assert.isAbove(cases.length - valid, RUNS / 3, "too few invalid cases")
      assert.deepStrictEqual(byProblem.map(({ count, problem }) => `${problem}: ${count}`), [], `findings (seed ${SEED}), see the log above`)
    }), 240_000)
})
