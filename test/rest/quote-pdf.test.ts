/**
 * A quote as a PDF through HTTP: `GET /v1/ticket-quote/{id}` with
 * `Accept: application/pdf` answers an A4 PDF whose text (as PDF.js
 * reads it) holds the quote's number, its ticket and customer, every
 * line and the total, with its fonts embedded; the same quote gives the
 * same bytes; many lines run over several pages; a line's quantity options
 * are listed under it, the chosen one marked; page 1 is drawn to a PNG
 * under test-output/ for a reviewer to look at. The PDFs are read with
 * PDF.js (test/support/pdf.ts), so no system package is needed. The JSON read answers
 * as before, with the quote's `pdfUrl`; a missing quote asked for as a PDF
 * is a 404; the PDF is metered as the read, and the direct record read and
 * the router answer the same bytes.
 */
import { assert, describe, expect, it as plain, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { threadId } from "node:worker_threads"
import { readPdfFonts } from "../../src/adapters/pdf/PdfFonts.ts"
import { makePdfRenderer, PdfRenderFailed } from "../../src/adapters/pdf/PdfRenderer.ts"
import { formatAmount, renderQuotePdf } from "../../src/adapters/pdf/QuotePdf.ts"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { prefersPdf } from "../../src/gateway/rest/QuotePdfHandler.ts"
import { ADMIN_TOKEN, backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { ok } from "../support/http.ts"
import { readPdf } from "../support/pdf.ts"
import { TestApp, TestClient } from "../support/TestApp.ts"

const FILES: Readonly<Record<string, Uint8Array>> = {
  "/models/cube.stl": binaryStl(box(10, 10, 10)),
  "/models/bar.stl": binaryStl(box(400, 20, 20))
}

const fetcher = modelFetcherLayer({ allowPrivate: true, maxBytes: 1 << 20, timeout: Duration.seconds(5), maxRedirects: 0, placeholderHosts: [] })

const PDF = "application/pdf"

interface Binary {
  readonly status: number
  readonly headers: Headers
  readonly bytes: Buffer
}

/** The PDF as PDF.js reads it (kept as test-output/<name>.pdf). */
const read = (name: string, bytes: Uint8Array) => Effect.promise(() => readPdf(name, bytes))

/** The total's line as the text reads: `Total EUR 1,234.50`. */
const totalLine = (total: number) => new RegExp(`Total EUR\\s+${formatAmount(total, 2).replace(".", "\\.")}\\n`, "u")

describe("Accept: which answers prefer the PDF", () => {
  plain("a PDF named over JSON, or as much as a wildcard that takes JSON; never by a wildcard alone", () => {
    expect(prefersPdf(undefined)).toBe(false)
    expect(prefersPdf("application/pdf")).toBe(true)
    expect(prefersPdf("application/pdf, */*;q=0.1")).toBe(true)
    expect(prefersPdf("application/pdf, */*")).toBe(true)
    expect(prefersPdf("application/json;q=0.5, Application/PDF")).toBe(true)
    expect(prefersPdf("*/*")).toBe(false)
    expect(prefersPdf("application/*")).toBe(false)
    expect(prefersPdf("application/json, application/pdf;q=0.5")).toBe(false)
    expect(prefersPdf("application/json, application/pdf")).toBe(false)
    expect(prefersPdf("application/pdf;q=0")).toBe(false)
    expect(prefersPdf("text/html")).toBe(false)
  })
})

describe("renderQuotePdf", () => {
  plain("prints a line's lead time when it carries one, in a column of its own", async () => {
    const fonts = await readPdfFonts()
    const line = { description: "Bracket", kind: "part" as const, quantity: 10, unitPrice: 4.2, total: 42 }
    const data = {
      appName: "lead-times",
      id: "q-lead",
      number: "Q-000777",
      state: "sent",
      createdAt: "2026-11-02T09:00:00.000Z",
      updatedAt: "2026-11-02T09:00:00.000Z",
      validUntil: "2026-12-02T09:00:00.000Z",
      currency: { code: "EUR", minorUnits: 2, exchangeRate: 1, base: "EUR" },
      total: 50.5,
      ticket: { number: "T-000001", name: "Run" },
      customer: { name: "Acme", email: "buyer@acme.example" },
      lines: [{ ...line, leadTimeDays: 7 }, { ...line, description: "Fee", kind: "item" as const, quantity: 1, unitPrice: 8.5, total: 8.5 }]
    }
    const { text } = await readPdf("quote-pdf-lead-times", await renderQuotePdf(data, fonts))
    expect(text).toContain("Lead time")
    expect(text).toMatch(/Bracket\s+10\s+4\.20\s+7 days\s+42\.00/u)
    const without = await readPdf("quote-pdf-no-lead-times", await renderQuotePdf({ ...data, lines: [line] }, fonts))
    expect(without.text).not.toContain("Lead time")
  })
})

/** A quote of `lines` lines, as the handler gives the renderer. */
const quoteData = (lines: number) => ({
  appName: "thread",
  id: "q-thread",
  number: "Q-000888",
  state: "sent",
  createdAt: "2026-11-02T09:00:00.000Z",
  updatedAt: "2026-11-02T09:00:00.000Z",
  validUntil: "2026-12-02T09:00:00.000Z",
  currency: { code: "EUR", minorUnits: 2, exchangeRate: 1, base: "EUR" },
  total: 42 * lines,
  ticket: { number: "T-000002", name: "Run" },
  customer: { name: "Acme", email: "buyer@acme.example" },
  lines: Array.from({ length: lines }, (_, i) => ({ description: `Part ${i + 1}`, kind: "part" as const, quantity: 10, unitPrice: 4.2, total: 42 }))
})

describe("the PDF thread", () => {
  plain("renders the bytes the renderer makes in the calling thread, in a thread of its own that ends once idle", async () => {
    const data = quoteData(3)
    const inThisThread = await renderQuotePdf(data, await readPdfFonts())
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const renderer = yield* makePdfRenderer(Duration.millis(400))
      assert.deepStrictEqual(renderer.threadIds(), [], "no thread before a PDF")
      const rendered = yield* renderer.render(data, "app-a")
      assert.deepStrictEqual(Buffer.from(rendered), Buffer.from(inThisThread))
      const [thread] = renderer.threadIds()
      assert.isDefined(thread)
      assert.notStrictEqual(thread, threadId, "not the test's thread")
      // Up to 10 s: a timer fires late on a busy machine.
      for (let waited = 0; renderer.threadIds().length > 0 && waited < 10_000; waited += 50) yield* Effect.sleep(Duration.millis(50))
      assert.deepStrictEqual(renderer.threadIds(), [], "gone once idle")
    })))
  })

  plain("a render over its time budget ends its thread and fails naming the budget", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      // No PDF renders in a millisecond: every render here runs out of its budget.
      const renderer = yield* makePdfRenderer(Duration.seconds(30), Duration.millis(1))
      const first = yield* Effect.flip(renderer.render(quoteData(1), "app-a"))
      assert.instanceOf(first, PdfRenderFailed)
      assert.strictEqual(first.reason, "its rendering took longer than 1ms")
      // The thread that ran it was ended, and another started in its place: the next render runs there, and ends it too.
      const running = renderer.threadIds()
      assert.lengthOf(running, 1)
      assert.strictEqual((yield* Effect.flip(renderer.render(quoteData(1), "app-a"))).reason, "its rendering took longer than 1ms")
      assert.notInclude(renderer.threadIds(), running[0])
    })))
  }, 60_000)

  plain("apps take turns: a burst of one app's PDFs holds one place ahead of another app's PDF", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const renderer = yield* makePdfRenderer(Duration.seconds(30))
      const finished: Array<string> = []
      const render = (appId: string, name: string) => Effect.tap(renderer.render(quoteData(40), appId), () => Effect.sync(() => finished.push(name)))
      // Four PDFs of app A asked for at once, then one of app B: B waits for A's first only.
      yield* Effect.all([render("app-a", "a1"), render("app-a", "a2"), render("app-a", "a3"), render("app-a", "a4"), render("app-b", "b1")], {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(finished, ["a1", "b1", "a2", "a3", "a4"])
    })))
  }, 60_000)
})

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES)), { timeout: 120_000, excludeTestServices: true })(
    `The quote as a PDF (${backend})`,
    (it) => {
      /** A fresh app with a customer, a project and a ticket; its calls, JSON and binary. */
      const setup = Effect.gen(function*() {
        const client = yield* TestClient
        const host = yield* FileHost
        const appId = `quote-pdf-${Math.random().toString(36).slice(2)}`
        const { value: secret } = yield* client.createSecret(appId)
        const call = (method: string, path: string, body?: unknown) => client.call(method, `/v1${path}`, { secret, body })
        const binary = (path: string, headers: Record<string, string> = { accept: PDF }) =>
          Effect.promise(async (): Promise<Binary> => {
            const response = await fetch(`${client.baseUrl}${path}`, { headers: { authorization: secret, ...headers } })
            return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) }
          })
        const customer = ok(yield* call("POST", "/customer", { name: "Acme Robotics", email: "buyer@acme.example", company: "Acme Robotics GmbH" }), "customer")
        const project = ok(yield* call("POST", "/project", { customerId: customer.id, name: "Gearbox" }), "project")
        const ticket = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Prototype run" }), "ticket")
        const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        const part = (name: string, file: string, quantity: number) =>
          Effect.map(
            call("POST", "/ticket-model", {
              ticketId: ticket.id,
              name,
              modelEndpoint: { url: `${host.url}/models/${file}` },
              technologyId: "fdm",
              materialId: material.id,
              quantity
            }),
            (reply) => ok(reply, name)
          )
        const item = (name: string, quantity: number, unitPrice: number) =>
          Effect.map(call("POST", "/item", { ticketId: ticket.id, name, quantity, unitPrice }), (reply) => ok(reply, name))
        return { appId, call, binary, client, ticket, part, item }
      })

      it.effect("answers the quote as an A4 PDF: number, ticket, customer, every line, DFM findings and the total; fonts embedded", () =>
        Effect.gen(function*() {
          const { appId, binary, call, item, part, ticket } = yield* setup
          const cube = yield* part("Cube 10 mm", "cube.stl", 4)
          const bar = yield* part("Long bar", "bar.stl", 2)
          assert.strictEqual(bar.manufacturability.status, "blocked")
          yield* item("Setup fee", 1, 25)
          const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, { override: true, notes: "Valid with drawing rev B" }), "quote")

          const reply = yield* binary(`/v1/ticket-quote/${quote.id}`)
          assert.strictEqual(reply.status, 200, reply.bytes.toString())
          assert.strictEqual(reply.headers.get("content-type"), PDF)
          assert.strictEqual(reply.headers.get("content-disposition"), `inline; filename="${quote.number}.pdf"`)
          assert.strictEqual(Number(reply.headers.get("content-length")), reply.bytes.length)
          assert.strictEqual(reply.headers.get("vary"), "Accept")
          assert.strictEqual(reply.bytes.subarray(0, 5).toString("latin1"), "%PDF-")

          const pdf = yield* read(`quote-pdf-${backend}`, reply.bytes)
          // A4: 595.28 × 841.89 points.
          assert.deepStrictEqual(pdf.pageSize, [595.28, 841.89])
          const text = pdf.text
          for (const expected of [quote.number, ticket.number, "Prototype run", "Acme Robotics", "buyer@acme.example", appId, "SENT"]) {
            assert.include(text, expected)
          }
          for (const line of quote.lines) assert.include(text, line.description)
          assert.deepStrictEqual(quote.lines.map((line: { description: string }) => line.description), [cube.name, bar.name, "Setup fee"])
          assert.match(text, totalLine(quote.total))
          // The blocked part's line says so, with the check that blocks it; the cube's line has no finding.
          assert.include(text, "Manufacturability: blocked")
          assert.include(text, "build-volume (blocked)")
          assert.notInclude(text, "Manufacturability: ok")
          assert.include(text, "Valid with drawing rev B")
          for (const label of ["CUSTOMER", "EMAIL", "TICKET", "QUOTE DATE", "VALID UNTIL", "STATE", "CURRENCY"]) assert.include(text, label)
          assert.include(text, quote.createdAt.slice(0, 10))
          assert.include(text, `${quote.validUntil.slice(0, 16).replace("T", " ")} UTC (30 days)`)
          assert.include(text, "Page 1 of 1")

          assert.isAbove(pdf.fonts.length, 0)
          assert.deepStrictEqual(pdf.fonts.filter((font) => !font.embedded), [], "every font is embedded")
          assert.isTrue(pdf.fonts.some((font) => font.name.endsWith("+DejaVuSans")), JSON.stringify(pdf.fonts))

          const page = yield* Effect.promise(() => pdf.firstPagePng(`quote-pdf-${backend}`, 50))
          console.log(`quote PDF page 1 (${backend}): ${page.file}`)
          assert.strictEqual(page.png.subarray(1, 4).toString("latin1"), "PNG")
          // A4 at 50 dpi: 595.28 × 841.89 pt is 413.4 × 584.6 px, rounded up (the IHDR chunk's width and height).
          assert.deepStrictEqual([page.png.readUInt32BE(16), page.png.readUInt32BE(20)], [414, 585])
          // A page a reader sees text on: some ink, most of it paper.
          assert.isAbove(page.ink, 0.005)
          assert.isBelow(page.ink, 0.5)
        }))

      it.effect("a line's options are rows under it, each quantity with its prices; once accepted the chosen one is marked", () =>
        Effect.gen(function*() {
          const { binary, call, part, ticket } = yield* setup
          const cube = yield* part("Cube 10 mm", "cube.stl", 4)
          const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, { quantityOptions: [{ ticketModelId: cube.id, quantities: [1, 100] }] }), "quote")
          const options = quote.lines[0].options as Array<{ quantity: number; unitPrice: number; total: number }>
          assert.deepStrictEqual(options.map((option) => option.quantity), [1, 4, 100])
          const row = (label: string, option: (typeof options)[number]) =>
            new RegExp(`${label}\\s+${option.quantity}\\s+${formatAmount(option.unitPrice, 2)}\\s+${formatAmount(option.total, 2)}\\n`, "u")
          const { text: sent } = yield* read(`quote-pdf-options-${backend}`, (yield* binary(`/v1/ticket-quote/${quote.id}`)).bytes)
          for (const option of options) assert.match(sent, row("Option", option))
          assert.notInclude(sent, "Chosen")

          const lines = quote.lines.map((line: { quantity: number }) => ({ ...line, quantity: 100 }))
          const { currencyId, ticketId, validUntil } = quote
          ok(yield* call("PUT", `/ticket-quote/${quote.id}`, { ticketId, currencyId, validUntil, lines, state: "accepted" }), "accept at 100")
          const { text: accepted } = yield* read(`quote-pdf-options-accepted-${backend}`, (yield* binary(`/v1/ticket-quote/${quote.id}`)).bytes)
          assert.match(accepted, row("Chosen option", options[2]!))
          assert.strictEqual(accepted.split("Chosen option").length, 2, "one option is marked")
          for (const option of options.slice(0, 2)) assert.match(accepted, row("Option", option))
          assert.match(accepted, totalLine(options[2]!.total))
        }))

      it.effect("the same quote gives the same bytes, on the direct read and through the router; its tag answers a 304", () =>
        Effect.gen(function*() {
          const { binary, call, item, ticket } = yield* setup
          yield* item("Setup fee", 1, 25)
          yield* item("Inspection report", 2, 12.5)
          const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
          const first = yield* binary(`/v1/ticket-quote/${quote.id}`)
          const again = yield* binary(`/v1/ticket-quote/${quote.id}`)
          // `?` alone is no query parameter: the router's route, not the direct record read.
          const routed = yield* binary(`/v1/ticket-quote/${quote.id}?`)
          assert.strictEqual(first.status, 200)
          assert.isTrue(first.bytes.equals(again.bytes), "rendered twice, the bytes differ")
          assert.isTrue(first.bytes.equals(routed.bytes), "the router's PDF differs from the direct read's")
          const tag = first.headers.get("etag")!
          assert.strictEqual(again.headers.get("etag"), tag)
          const unchanged = yield* binary(`/v1/ticket-quote/${quote.id}`, { accept: PDF, "if-none-match": tag })
          assert.strictEqual(unchanged.status, 304)
          assert.strictEqual(unchanged.bytes.length, 0)
          // The document's dates are the quote's, never the time of rendering.
          const dates = yield* read(`quote-pdf-twice-${backend}`, first.bytes)
          // To the second, as a PDF date holds it.
          assert.strictEqual(dates.createdAt?.toISOString(), `${quote.createdAt.slice(0, 19)}.000Z`)
          assert.strictEqual(dates.modifiedAt?.toISOString(), `${quote.updatedAt.slice(0, 19)}.000Z`)
        }))

      it.effect("sixty lines run over several pages, each line and the total in the text", () =>
        Effect.gen(function*() {
          const { binary, call, item, ticket } = yield* setup
          const names = Array.from({ length: 60 }, (_, index) => `Line item ${String(index + 1).padStart(2, "0")}`)
          for (const [index, name] of names.entries()) yield* item(name, index + 1, 1.25 + index)
          const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
          const reply = yield* binary(`/v1/ticket-quote/${quote.id}`)
          assert.strictEqual(reply.status, 200)
          const pdf = yield* read(`quote-pdf-60-lines-${backend}`, reply.bytes)
          const pages = pdf.pages
          assert.isAtLeast(pages, 2)
          const text = pdf.text
          for (const name of names) assert.include(text, name)
          assert.match(text, totalLine(quote.total))
          assert.include(text, `Page ${pages} of ${pages}`)
          assert.include(text, `Quote ${quote.number} (continued)`)
        }))

      it.effect("the JSON read is the quote with its pdfUrl; a missing quote is a 404 as a PDF and the empty 200 as JSON; metered as the read", () =>
        Effect.gen(function*() {
          const { appId, binary, call, client, item, ticket } = yield* setup
          yield* item("Setup fee", 1, 25)
          const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
          assert.strictEqual(quote.pdfUrl, `/v1/ticket-quote/${quote.id}`)
          const read = yield* call("GET", `/ticket-quote/${quote.id}`)
          assert.strictEqual(read.headers.get("content-type"), "application/json")
          assert.strictEqual(read.headers.get("vary"), "Accept")
          assert.deepStrictEqual(read.json(), quote)
          // JSON preferred, or a wildcard: the JSON, byte for byte.
          for (const accept of ["application/json", "*/*", "application/json, application/pdf;q=0.5"]) {
            const asked = yield* binary(`/v1/ticket-quote/${quote.id}`, { accept })
            assert.strictEqual(asked.headers.get("content-type"), "application/json", accept)
            assert.strictEqual(asked.bytes.toString(), read.text, accept)
          }
          const listed = ok(yield* call("GET", `/ticket-quote?ticketId=${ticket.id}`), "list")
          assert.deepStrictEqual(listed.map((each: { pdfUrl: string }) => each.pdfUrl), [quote.pdfUrl])
          // pdfUrl is read-only: the quote as read goes back in a PUT, its pdfUrl ignored.
          const { id: _id, number: _number, exchangeRate: _rate, total: _total, createdAt: _c, updatedAt: _u, ...writable } = quote
          const replaced = ok(yield* call("PUT", `/ticket-quote/${quote.id}`, { ...writable, pdfUrl: "/elsewhere" }), "replace")
          assert.strictEqual(replaced.pdfUrl, quote.pdfUrl)

          const missing = yield* binary("/v1/ticket-quote/no-such-quote")
          assert.strictEqual(missing.status, 404)
          assert.strictEqual(missing.headers.get("content-type"), "application/json")
          assert.deepStrictEqual(JSON.parse(missing.bytes.toString()), {
            code: 404,
            type: "NotFound",
            message: "ticket quote no-such-quote not found: a quote that does not exist has no PDF"
          })
          const empty = yield* call("GET", "/ticket-quote/no-such-quote")
          assert.deepStrictEqual([empty.status, empty.text], [200, ""])
          // Another app's quote is missing too.
          const { value: otherSecret } = yield* client.createSecret(`${appId}-other`)
          const theirs = yield* Effect.promise(() =>
            fetch(`${client.baseUrl}/v1/ticket-quote/${quote.id}`, { headers: { authorization: otherSecret, accept: PDF } })
          )
          assert.strictEqual(theirs.status, 404)

          // Every read here was a ticketQuote.get: 1 JSON + 3 negotiated + 1 missing PDF + 1 missing JSON + 2 PDFs now.
          yield* binary(`/v1/ticket-quote/${quote.id}`)
          yield* binary(`/v1/ticket-quote/${quote.id}?`)
          const usage = ok(yield* client.call("GET", `/api/v1/usage?appId=${appId}`, { headers: { "x-admin-token": ADMIN_TOKEN } }), "usage")
          const reads = usage.byOperation.find((row: { operation: string }) => row.operation === "ticketQuote.get")?.calls
          assert.strictEqual(reads, 8)
        }))
    }
  )
}
