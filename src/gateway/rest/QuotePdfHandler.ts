/**
 * `GET /v1/ticket-quote/{id}` answers the quote as JSON or, to a request
 * whose `Accept` prefers `application/pdf`, as a PDF (the endpoint declares
 * both successes: src/contract/groups/orders.ts).
 *
 * The gateway renders the PDF from the contract's own answers: the quote
 * (`ticketQuote.get`), its ticket, the ticket's project and customer, the
 * app, the currency and the quote's parts (their manufacturability
 * findings), each read through Downstream as the REST calls read them. So
 * the quote keeps its one definition and the engine its one protocol,
 * embedded or over HTTP, and the JSON read, which the record-read fast path
 * (RecordReadDirect) answers through this same handler, stays as it was.
 *
 * A missing quote asked for as a PDF is a 404, not the empty 200: there is
 * no document of nothing. Both answers say `Vary: Accept`; the PDF carries
 * its entity tag (the same bytes for the same quote) and answers a matching
 * `If-None-Match` with a 304.
 */
import { Context, Effect, Layer } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { createHash } from "node:crypto"
import { makePdfRenderer, PdfRenderFailed } from "../../adapters/pdf/PdfRenderer.ts"
import type { QuotePdfData, QuotePdfLine } from "../../adapters/pdf/QuotePdf.ts"
import { callScopeOf, CurrentCaller } from "../../contract/Authorization.ts"
import type { CallScope } from "../../contract/EngineCall.ts"
import { errorAnswer } from "../../contract/ErrorAnswer.ts"
import { PublicContract } from "../../contract/PublicApi.ts"
import type { DownstreamError } from "../../domain/Errors.ts"
import type { TicketModel, TicketQuote } from "../../domain/resources/orders.ts"
import { Downstream } from "../../services/Downstream.ts"
import { namesTag, notModified } from "./Conditional.ts"
import { ForwardHandler } from "./ForwardHandlers.ts"
import { unstorableInput } from "./InputChecks.ts"
import { undeclaredInput } from "./UndeclaredInput.ts"

const GROUPS = PublicContract.groups

/** What the handler reads of a request the builder decoded (ForwardHandlers' ForwardedRequest). */
interface ForwardedRequest {
  readonly endpoint: HttpApiEndpoint.Top
  readonly request: HttpServerRequest.HttpServerRequest
  readonly params?: unknown
}

type Handler = (request: ForwardedRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, CurrentCaller>

type Quote = (typeof TicketQuote)["record"]["Type"]
type Part = (typeof TicketModel)["record"]["Type"]

export const PDF = "application/pdf"
const JSON_TYPE = "application/json"
/** The currency every EUR price and rate is in, as `GET /app` names it. */
const BASE = "EUR"

/**
 * How much an `Accept` header wants `type` (RFC 9110, 12.5.1): the quality
 * of its most specific range that matches (`type/subtype` over `type/*` over
 * `*\/*`), and how specific that range is; 0 when none matches.
 */
const preference = (accept: string, type: string): { readonly quality: number; readonly specificity: number } => {
  const [major] = type.split("/")
  let best = { quality: 0, specificity: -1 }
  for (const range of accept.split(",")) {
    const [name = "", ...parameters] = range.split(";").map((part) => part.trim().toLowerCase())
    const specificity = name === type ? 2 : name === `${major}/*` ? 1 : name === "*/*" ? 0 : -1
    if (specificity <= best.specificity) continue
    const q = parameters.find((parameter) => parameter.startsWith("q="))
    const quality = q === undefined ? 1 : Number(q.slice(2))
    best = { quality: Number.isFinite(quality) ? quality : 0, specificity }
  }
  return best
}

/** Whether `Accept` prefers the PDF: it wants it more than JSON, or as much but by name where JSON only by a wildcard. */
export const prefersPdf = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  const pdf = preference(accept, PDF)
  const json = preference(accept, JSON_TYPE)
  return pdf.quality > 0 && (pdf.quality > json.quality || (pdf.quality === json.quality && pdf.specificity > json.specificity))
}

const notFound = (id: string) => errorAnswer({ code: 404, type: "NotFound", message: `ticket quote ${id} not found: a quote that does not exist has no PDF` })

const renderFailed = errorAnswer({ code: 500, type: "InternalServerError", message: "The quote's PDF could not be rendered" })

const varies = (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.setHeader(response, "vary", "Accept")

/** A file name a `Content-Disposition` can carry as it is: the quote's number, which is plain already. */
const fileNameOf = (number: string) => `${number.replace(/[^A-Za-z0-9._-]/gu, "_")}.pdf`

/** The parts `ids` name, read a page of the most a list answers at a time. */
const PAGE = 1000

const lineOf = (line: Quote["lines"][number], parts: ReadonlyMap<string, Part>, accepted: boolean): QuotePdfLine => {
  const part = line.ticketModelId === undefined ? undefined : parts.get(line.ticketModelId)
  // A line offered at several quantities has the lead time of its option at its own quantity.
  const leadTimeDays = line.options?.find((option) => option.quantity === line.quantity)?.leadTimeDays
  return {
    description: line.description,
    kind: line.ticketModelId === undefined ? "item" : "part",
    quantity: line.quantity,
    unitPrice: line.unitPrice,
    total: line.total,
    ...(typeof leadTimeDays === "number" ? { leadTimeDays } : {}),
    ...(line.options === undefined ? {} : {
      options: line.options.map((option) => ({ ...option, chosen: accepted && option.quantity === line.quantity }))
    }),
    ...(line.manufacturability === undefined ? {} : {
      manufacturability: {
        status: line.manufacturability,
        // The findings of the part's checks as stored with its verdict; a part written again would have superseded the quote.
        findings: (part?.manufacturability?.checks ?? []).filter((check) => check.status !== "ok").map(({ id, message, status }) => ({ id, message, status }))
      }
    })
  }
}

/** A quote's PDF: its bytes, its file name and its entity tag (the same bytes for the same quote). */
export interface QuotePdf {
  readonly bytes: Uint8Array
  readonly fileName: string
  readonly tag: string
}

/**
 * Quotes as PDFs, rendered in the PDF thread (PdfRenderer.ts), which ends
 * with the layer: for `GET /v1/ticket-quote/{id}` with `Accept:
 * application/pdf` and for the MCP resource `mfg://ticket-quote/{id}/pdf`.
 */
export class QuotePdfs extends Context.Service<QuotePdfs, {
  /** The PDF of quote `id` of the caller's app, read as the REST calls read it; null when the app has no such quote. */
  readonly render: (id: string, scope: CallScope) => Effect.Effect<QuotePdf | null, DownstreamError | PdfRenderFailed>
}>()("mfg/http/QuotePdfs") {
  static readonly layer = Layer.effect(
    QuotePdfs,
    Effect.gen(function*() {
      const downstream = yield* Downstream
      const renderer = yield* makePdfRenderer()

      const partsOf = Effect.fnUntraced(function*(quote: Quote, scope: CallScope) {
        const ids = [...new Set(quote.lines.flatMap((line) => line.ticketModelId === undefined ? [] : [line.ticketModelId]))]
        const parts = new Map<string, Part>()
        for (let start = 0; start < ids.length; start += PAGE) {
          const page = yield* downstream.call(GROUPS.ticketModel.endpoints.list)({ query: { ids: ids.slice(start, start + PAGE), limit: PAGE } }, scope)
          for (const part of page.items) parts.set(part.id, part)
        }
        return parts
      })

      /** What the PDF shows, read as the REST calls read it. */
      const dataOf = Effect.fnUntraced(function*(quote: Quote, scope: CallScope) {
        const app = yield* downstream.call(GROUPS.app.endpoints.get)({}, scope)
        const ticket = yield* downstream.call(GROUPS.ticket.endpoints.lookup)({ query: { identifier: quote.ticketId } }, scope)
        const project = ticket === null ? null : yield* downstream.call(GROUPS.project.endpoints.get)({ params: { id: ticket.projectId } }, scope)
        const customer = project === null ? null : yield* downstream.call(GROUPS.customer.endpoints.get)({ params: { id: project.customerId } }, scope)
        const currency = yield* downstream.call(GROUPS.currency.endpoints.get)({ params: { id: quote.currencyId } }, scope)
        const parts = yield* partsOf(quote, scope)
        const data: QuotePdfData = {
          appName: app?.name ?? scope.appId,
          id: quote.id,
          number: quote.number,
          state: quote.state,
          createdAt: quote.createdAt,
          updatedAt: quote.updatedAt,
          validUntil: quote.validUntil,
          currency: { code: quote.currencyId, minorUnits: currency?.minorUnits ?? 2, exchangeRate: quote.exchangeRate, base: app?.defaultCurrency ?? BASE },
          total: quote.total,
          notes: quote.notes,
          ticket: ticket === null ? undefined : { number: ticket.number, name: ticket.name },
          customer: customer === null ? undefined : { name: customer.name, email: customer.email, company: customer.company },
          lines: quote.lines.map((line) => lineOf(line, parts, quote.state === "accepted"))
        }
        return data
      })

      const render = Effect.fnUntraced(function*(id: string, scope: CallScope) {
        const quote = yield* downstream.call(GROUPS.ticketQuote.endpoints.get)({ params: { id } }, scope)
        if (quote === null) return null
        // The engine answers the quote itself; its PDF is made here.
        if (quote instanceof Uint8Array) return yield* Effect.die(new Error("ticketQuote.get: the engine answered bytes, not the quote"))
        const bytes = yield* renderer.render(yield* dataOf(quote, scope), scope.appId).pipe(
          Effect.tapError(({ cause, reason }) =>
            Effect.logError(`The PDF of quote ${quote.number} could not be rendered: ${reason}`, ...(cause === undefined ? [] : [cause]))
          )
        )
        const pdf: QuotePdf = { bytes, fileName: fileNameOf(quote.number), tag: `"${createHash("sha256").update(bytes).digest("base64url")}"` }
        return pdf
      })
      return QuotePdfs.of({ render })
    })
  )
}

/** The quote's read, with the JSON variant `json` (the forwarded answer) and the PDF of `pdfs`. */
export const makeQuoteReadHandler = (pdfs: QuotePdfs["Service"], json: Handler): Handler => {
  const pdf = Effect.fnUntraced(function*(request: ForwardedRequest, scope: CallScope) {
    const { id } = request.params as { readonly id: string }
    const rendered = yield* Effect.result(pdfs.render(id, scope))
    if (rendered._tag === "Failure") {
      const failure = rendered.failure
      return failure instanceof PdfRenderFailed ? renderFailed : errorAnswer(failure)
    }
    const found = rendered.success
    if (found === null) return notFound(id)
    const ifNoneMatch = request.request.headers["if-none-match"]
    if (ifNoneMatch !== undefined && namesTag(ifNoneMatch, found.tag, "weak")) return notModified(found.tag)
    return HttpServerResponse.uint8Array(found.bytes, {
      contentType: PDF,
      headers: { "content-disposition": `inline; filename="${found.fileName}"`, etag: found.tag }
    })
  })

  return (request) =>
    Effect.map(
      prefersPdf(request.request.headers.accept)
        ? Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const undeclared = yield* undeclaredInput(request.endpoint, request.request)
          if (undeclared !== undefined) return errorAnswer(undeclared)
          const unstorable = unstorableInput({ params: request.params })
          if (unstorable !== undefined) return errorAnswer(unstorable)
          return yield* pdf(request, callScopeOf(caller))
        })
        : json(request),
      varies
    )
}

/** The quote's read (`ticketQuote.get`), its JSON answer the forwarder's. */
export class QuoteReadHandler extends Context.Service<QuoteReadHandler, Handler>()("mfg/http/QuoteReadHandler") {
  static readonly layer = Layer.effect(
    QuoteReadHandler,
    Effect.gen(function*() {
      return makeQuoteReadHandler(yield* QuotePdfs, yield* ForwardHandler)
    })
  ).pipe(Layer.provide(QuotePdfs.layer))
}
