/**
 * The walkthroughs of README.md and docs/integration.md, run verbatim: every
 * ```sh block in order, in bash, as a reader on a fresh machine would run it
 * (test/support/docBlocks.ts says which blocks run in the background and
 * which are not run), against a server this test starts with `npm start` on
 * the docs' address, http://127.0.0.1:8080, with a fresh DATA_DIR. Each
 * block must exit 0, and what the docs promise must be there: a customer, a
 * quote, a part made from the example model file with its geometry and price.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { type DocBlock, shBlocksOfFile } from "../support/docBlocks.ts"
import { assertPortFree, type Background, type BlockResult, freshShellEnvironment, makeShell, type Shell, waitForBackground } from "../support/docShell.ts"
import { NODE, ROOT } from "../support/processes.ts"

const DOCS_BASE = "http://127.0.0.1:8080"
const FIXTURES_BASE = "http://127.0.0.1:8090"

const portTaken = (port: number, what: string) =>
  `port ${port} is taken: the docs' walkthroughs use ${what} on http://127.0.0.1:${port}; stop what listens there to run this test`

let dataDir: string
let stateDirs: Array<string> = []
let server: Background | undefined
let fixtures: Background | undefined

const environment = () => freshShellEnvironment({ DATA_DIR: dataDir })

const newShell = () => {
  const stateDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "walkthrough-shell-"))
  stateDirs.push(stateDir)
  return makeShell(stateDir, environment())
}

const serverReady = async () => {
  try {
    return (await fetch(`${DOCS_BASE}/ready`, { signal: AbortSignal.timeout(2_000) })).status === 200
  } catch {
    return false
  }
}

/** `npm start` as the docs write it, after the server before it (if any) has stopped. */
const startServer = async (shell: Shell, block: Pick<DocBlock, "where" | "text">) => {
  await server?.stop()
  server = undefined
  await assertPortFree(8080, portTaken(8080, "the server"))
  server = shell.background(block.where, block.text)
  await waitForBackground(server, serverReady)
}

/** The JSON line serve-fixtures prints once it listens. */
const fixturesAnnouncement = (output: string): { baseUrl: string; files: Record<string, string> } | undefined =>
  output.split("\n").flatMap((line) => {
    try {
      const parsed = JSON.parse(line)
      return typeof parsed?.baseUrl === "string" ? [parsed] : []
    } catch {
      return []
    }
  })[0]

const startFixtures = async (shell: Shell, block: DocBlock) => {
  await assertPortFree(8090, portTaken(8090, "the example model files"))
  fixtures = shell.background(block.where, block.text)
  const started = fixtures
  await waitForBackground(started, () => Promise.resolve(fixturesAnnouncement(started.output()) !== undefined))
  const announced = fixturesAnnouncement(started.output())!
  assert.strictEqual(announced.baseUrl, FIXTURES_BASE)
  assert.strictEqual(announced.files["bracket.stl"], `${FIXTURES_BASE}/models/bracket.stl`)
}

const failure = (result: BlockResult) => `${result.where} exited ${result.code}:\n${result.text}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`

/** Every block of `file` in order: background blocks started, the others run to a 0 exit. */
const runDocument = async (file: string) => {
  const shell = newShell()
  const results: Array<BlockResult> = []
  for (const block of shBlocksOfFile(ROOT, file)) {
    switch (block.mode._tag) {
      case "NotRun":
        continue
      case "Background":
        if (/\bnpm start\b/.test(block.text)) await startServer(shell, block)
        else if (/\bserve-fixtures\b/.test(block.text)) await startFixtures(shell, block)
        else throw new Error(`${block.where}: no way to tell when this background block is ready:\n${block.text}`)
        continue
      case "Run": {
        const result = await shell.run(block.where, block.text)
        assert.strictEqual(result.code, 0, failure(result))
        results.push(result)
      }
    }
  }
  /** The output of the block whose text includes `marker`. */
  const outputOf = (marker: string) => {
    const found = results.find((result) => result.text.includes(marker))
    assert.isDefined(found, `no block of ${file} runs ${marker}`)
    return found!.stdout
  }
  return { shell, outputOf }
}

const v1 = async (secret: string, path: string) => {
  const response = await fetch(`${DOCS_BASE}/v1${path}`, { headers: { authorization: secret } })
  const body = await response.text()
  assert.strictEqual(response.status, 200, `${path}: ${body}`)
  assert.notStrictEqual(body, "", `${path}: no such record (an empty 200)`)
  return JSON.parse(body)
}

describe("the walkthroughs of README.md and docs/integration.md, run verbatim", () => {
  beforeAll(async () => {
    dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "walkthrough-data-"))
    await startServer(newShell(), { where: "the test (README's quick start)", text: "npm start" })
  }, 60_000)

  afterAll(async () => {
    await fixtures?.stop()
    await server?.stop()
    for (const dir of [dataDir, ...stateDirs]) Fs.rmSync(dir, { recursive: true, force: true })
    stateDirs = []
  }, 60_000)

  it("README.md: a secret, a customer read back, the 401; a demo part quoted, accepted and sent to production", async () => {
    const { outputOf, shell } = await runDocument("README.md")
    const secret = await shell.variable("SECRET")
    assert.match(secret, /^\S{20,}$/)

    // The customer created is read back by its id, then listed by it.
    const firstCalls = outputOf("secret create")
    assert.strictEqual(firstCalls.split(`"name":"Acme Robotics"`).length - 1, 2, firstCalls)
    assert.include(firstCalls, "HTTP/1.1 401 Unauthorized")
    assert.include(firstCalls, `{"code":401,"message":"Not Authorized"}`)

    const quote = JSON.parse(await shell.variable("QUOTE"))
    assert.deepStrictEqual([quote.state, quote.currencyId, quote.lines.length], ["sent", "EUR", 2])
    assert.match(outputOf("send-to-production"), /"state": "accepted"/)
    const ticket = await v1(secret, `/ticket/lookup?identifier=${await shell.variable("TICKET")}`)
    assert.strictEqual(ticket.state, "in_production")
  }, 90_000)

  it("docs/integration.md: the conventions' examples, and a part from the served example model priced, quoted and sent to production", async () => {
    const { outputOf, shell } = await runDocument("docs/integration.md")
    assert.isDefined(fixtures, "the guide starts serve-fixtures")
    const secret = await shell.variable("SECRET")

    assert.match(outputOf("x-total-count"), /^x-total-count: \d+/im)
    assert.include(outputOf("size_download"), "200 0")
    assert.include(outputOf("If-Match: $ETAG"), `"name":"Acme GmbH"`)
    assert.match(outputOf("Idempotency-Key: $KEY"), /^idempotent-replayed: true/im)

    const partId = await shell.variable("PART")
    assert.notStrictEqual(partId, "null", `the walkthrough made no part:\n${outputOf("modelEndpoint")}`)
    const part = await v1(secret, `/ticket-model/${partId}`)
    assert.strictEqual(part.geometry?.volume, 40 * 20 * 10, JSON.stringify(part))
    assert.isAbove(part.unitPrice, 0)
    assert.strictEqual(Math.round(part.totalPrice * 100), Math.round(part.unitPrice * 100) * 2)

    const quote = JSON.parse(await shell.variable("QUOTE"))
    assert.deepStrictEqual(quote.lines.map((line: any) => [line.ticketModelId, line.quantity, line.total]), [[partId, 2, part.totalPrice]])
    const ticket = await v1(secret, `/ticket/lookup?identifier=${await shell.variable("TICKET")}`)
    assert.strictEqual(ticket.state, "in_production")
  }, 90_000)
})

/** A request with its path as written (fetch would resolve `..`), its status, headers and body. */
const rawRequest = (base: string, method: string, path: string) =>
  new Promise<{ status: number; headers: Http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const request = Http.request(`${base}${path}`, { method, path }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }))
    })
    request.once("error", reject)
    request.end()
  })

describe("serve-fixtures, the example model files of the walkthrough", () => {
  it("serves the listed files to GET and HEAD with their type and length, nothing else, and stops on SIGTERM without touching DATA_DIR", async () => {
    const dataDir = Path.join(Os.tmpdir(), `walkthrough-untouched-${process.pid}-${Date.now()}`)
    const child = spawn(NODE, ["src/cli.ts", "serve-fixtures", "--port", "0"], {
      cwd: ROOT,
      env: freshShellEnvironment({ DATA_DIR: dataDir }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    try {
      let output = ""
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
      const deadline = Date.now() + 20_000
      while (fixturesAnnouncement(output) === undefined) {
        assert.isBelow(Date.now(), deadline, `serve-fixtures did not announce its URLs:\n${output}`)
        assert.isNull(child.exitCode, `serve-fixtures exited:\n${output}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const { baseUrl, files } = fixturesAnnouncement(output)!
      assert.deepStrictEqual(Object.keys(files), ["bracket.stl", "housing.3mf"])

      const stl = Fs.readFileSync(Path.join(ROOT, "examples/models/bracket.stl"))
      const get = await rawRequest(baseUrl, "GET", "/models/bracket.stl")
      assert.deepStrictEqual([get.status, get.headers["content-type"], get.headers["content-length"]], [200, "model/stl", String(stl.length)])
      assert.isTrue(get.body.equals(stl))
      assert.strictEqual(files["bracket.stl"], `${baseUrl}/models/bracket.stl`)

      const threeMfSize = Fs.statSync(Path.join(ROOT, "examples/models/housing.3mf")).size
      const head = await rawRequest(baseUrl, "HEAD", "/models/housing.3mf")
      assert.deepStrictEqual([head.status, head.headers["content-type"], head.headers["content-length"], head.body.length], [
        200,
        "model/3mf",
        String(threeMfSize),
        0
      ])

      for (const path of ["/", "/models/", "/models/../package.json", "/models/%2e%2e/package.json", "/examples/models/bracket.stl", "/models/bracket.stl/"]) {
        assert.strictEqual((await rawRequest(baseUrl, "GET", path)).status, 404, path)
      }
      const post = await rawRequest(baseUrl, "POST", "/models/bracket.stl")
      assert.deepStrictEqual([post.status, post.headers.allow], [405, "GET, HEAD"])
    } finally {
      child.kill("SIGTERM")
      await exited
    }
    assert.isFalse(Fs.existsSync(dataDir), "serve-fixtures opened DATA_DIR")
  }, 30_000)
})
