/**
 * A quote as a PDF: data in, bytes out. A4 pages, DejaVu Sans embedded
 * (subset to the glyphs used), the lines in a table that continues over as
 * many pages as it needs, each page numbered; a line offered at several
 * quantities lists each option in a row of its own under it, the chosen one
 * marked once the quote is accepted.
 *
 * The same data gives the same bytes: the document's dates are the quote's
 * own (created, last changed), its ID is derived from the quote's id and the
 * data, the font subsets are named from that ID, and nothing reads a clock or
 * a random source (pdf-lib's metadata update, which would stamp the time of
 * rendering, is off).
 */
import fontkit from "@pdf-lib/fontkit"
import { createHash } from "node:crypto"
import { PDFDocument, type PDFFont, PDFHexString, type PDFPage, rgb } from "pdf-lib"
import type { PdfFonts } from "./PdfFonts.ts"

export type ManufacturabilityStatus = "ok" | "warning" | "blocked"

/** One quantity a line offers; `chosen` once the quote is accepted at it. */
export interface QuotePdfOption {
  readonly quantity: number
  readonly unitPrice: number
  readonly total: number
  readonly leadTimeDays: number | null
  readonly chosen: boolean
}

export interface QuotePdfLine {
  readonly description: string
  readonly kind: "part" | "item"
  readonly quantity: number
  readonly unitPrice: number
  readonly total: number
  /** Working days, when the line carries a lead time. */
  readonly leadTimeDays?: number | null | undefined
  /** A part line's manufacturability when the quote was made, with the findings of the part's checks that are not ok. */
  readonly manufacturability?: {
    readonly status: ManufacturabilityStatus
    readonly findings: ReadonlyArray<{ readonly id: string; readonly status: ManufacturabilityStatus; readonly message: string }>
  } | undefined
  /** The quantities the line offers, ascending; absent on a line quoted at its quantity alone. */
  readonly options?: ReadonlyArray<QuotePdfOption> | undefined
}

export interface QuotePdfData {
  readonly appName: string
  readonly id: string
  readonly number: string
  readonly state: string
  readonly createdAt: string
  readonly updatedAt: string
  readonly validUntil: string
  readonly currency: { readonly code: string; readonly minorUnits: number; readonly exchangeRate: number; readonly base: string }
  readonly total: number
  readonly notes?: string | undefined
  readonly ticket: { readonly number: string; readonly name: string } | undefined
  readonly customer: { readonly name: string; readonly email: string; readonly company?: string | undefined } | undefined
  readonly lines: ReadonlyArray<QuotePdfLine>
}

/** A4 portrait, in points. */
export const A4 = { width: 595.28, height: 841.89 } as const

const MARGIN = { left: 48, right: 48, top: 56, bottom: 64 } as const
const RIGHT = A4.width - MARGIN.right
const CONTENT_WIDTH = RIGHT - MARGIN.left

const COLOUR = {
  text: rgb(0.11, 0.11, 0.13),
  muted: rgb(0.42, 0.42, 0.46),
  rule: rgb(0.8, 0.8, 0.82),
  band: rgb(0.94, 0.95, 0.96),
  ok: rgb(0.1, 0.45, 0.22),
  warning: rgb(0.7, 0.4, 0),
  blocked: rgb(0.75, 0.1, 0.1)
} as const

const SIZE = { title: 20, heading: 10, body: 9, small: 7.5 } as const
const LEADING = { body: 11.5, small: 9.5 } as const

// ---------------------------------------------------------------- text

/** Text as one line may hold it: control characters (tabs, line breaks but `\n`) become spaces. */
const clean = (text: string) => text.replace(/\r\n?/gu, "\n").replace(/[\u0000-\u0009\u000b-\u001f\u007f]/gu, " ")

/**
 * A font with the widths of its characters kept: pdf-lib measures a string
 * by laying it out (about 0.3 ms a call), which wrapping does for every
 * word; summing kept advances is the same width but for kerning pairs,
 * which pdf-lib does not apply when it draws either.
 */
interface Measured {
  readonly font: PDFFont
  readonly width: (text: string, size: number) => number
}

const measured = (font: PDFFont): Measured => {
  const advances = new Map<string, number>()
  const advance = (character: string) => {
    let known = advances.get(character)
    if (known === undefined) {
      known = font.widthOfTextAtSize(character, 1000)
      advances.set(character, known)
    }
    return known
  }
  return {
    font,
    width: (text, size) => {
      let total = 0
      for (const character of text) total += advance(character)
      return (total * size) / 1000
    }
  }
}

/** `text` broken into lines no wider than `width`, at spaces, and inside a word only when the word alone is wider. */
const wrap = (text: string, font: Measured, size: number, width: number): ReadonlyArray<string> => {
  const fits = (line: string) => font.width(line, size) <= width
  const lines: Array<string> = []
  for (const paragraph of clean(text).split("\n")) {
    let line = ""
    for (const word of paragraph.split(" ").filter((part) => part.length > 0)) {
      const candidate = line === "" ? word : `${line} ${word}`
      if (fits(candidate)) {
        line = candidate
        continue
      }
      if (line !== "") lines.push(line)
      let rest = Array.from(word)
      while (!fits(rest.join("")) && rest.length > 1) {
        let cut = rest.length - 1
        while (cut > 1 && !fits(rest.slice(0, cut).join(""))) cut--
        lines.push(rest.slice(0, cut).join(""))
        rest = rest.slice(cut)
      }
      line = rest.join("")
    }
    lines.push(line)
  }
  return lines
}

/** `1234567.5` with 2 minor units: `1,234,567.50`. */
const grouped = (digits: string) => digits.replace(/\B(?=(\d{3})+(?!\d))/gu, ",")
export const formatAmount = (value: number, minorUnits: number) => {
  const [whole = "0", fraction] = Math.abs(value).toFixed(minorUnits).split(".")
  return `${value < 0 ? "-" : ""}${grouped(whole)}${fraction === undefined ? "" : `.${fraction}`}`
}
const formatQuantity = (value: number) => grouped(String(value))

const day = (iso: string) => new Date(Date.parse(iso)).toISOString().slice(0, 10)
const instant = (iso: string) => `${new Date(Date.parse(iso)).toISOString().slice(0, 16).replace("T", " ")} UTC`
const DAY_MS = 86_400_000

// ---------------------------------------------------------------- the document's identity

const digest = (text: string) => createHash("sha256").update(text).digest()

/** The trailer's ID: the first part names the quote for good, the second this rendering of it (its data). */
const documentId = (data: QuotePdfData) => [digest(`quote:${data.id}`), digest(JSON.stringify(data))].map((hash) => hash.subarray(0, 16).toString("hex"))

/** A subset font's six-letter tag (PDF 32000, 9.6.4), from the document's ID: the same for the same quote. */
const subsetTag = (id: string, index: number) => Array.from(digest(`${id}:${index}`).subarray(0, 6), (byte) => String.fromCharCode(65 + (byte % 26))).join("")

// ---------------------------------------------------------------- layout

interface Fonts {
  readonly regular: Measured
  readonly bold: Measured
}

/** What a row of the table prices: a line, or one of a line's options. */
type Priced = Pick<QuotePdfLine, "quantity" | "unitPrice" | "total" | "leadTimeDays">

interface Column {
  readonly title: string
  readonly width: number
  readonly align: "left" | "right"
  /** The cell of a line; the description's column draws its own. */
  readonly cell?: (line: QuotePdfLine, index: number) => string
  /** The cell of an option's row, in the columns that price. */
  readonly option?: (option: Priced) => string
}

const days = (value: number | null | undefined) => typeof value === "number" ? `${value} ${value === 1 ? "day" : "days"}` : "—"

/** The table's columns: the lead time only when a line or an option has one. */
const columnsOf = (lines: ReadonlyArray<QuotePdfLine>, currency: QuotePdfData["currency"]): ReadonlyArray<Column> => {
  const amount = (value: number) => formatAmount(value, currency.minorUnits)
  const hasLeadTime = (priced: Priced) => typeof priced.leadTimeDays === "number"
  const leadTime: ReadonlyArray<Column> = lines.some((line) => hasLeadTime(line) || (line.options ?? []).some(hasLeadTime))
    ? [{ title: "Lead time", width: 58, align: "right", cell: (line) => days(line.leadTimeDays), option: (option) => days(option.leadTimeDays) }]
    : []
  const fixed: ReadonlyArray<Column> = [
    { title: "Qty", width: 48, align: "right", cell: (line) => formatQuantity(line.quantity), option: (option) => formatQuantity(option.quantity) },
    {
      title: `Unit price (${currency.code})`,
      width: 86,
      align: "right",
      cell: (line) => amount(line.unitPrice),
      option: (option) => amount(option.unitPrice)
    },
    ...leadTime,
    { title: `Total (${currency.code})`, width: 88, align: "right", cell: (line) => amount(line.total), option: (option) => amount(option.total) }
  ]
  const number: Column = { title: "#", width: 22, align: "left", cell: (_line, index) => String(index + 1) }
  const used = number.width + fixed.reduce((sum, column) => sum + column.width, 0)
  return [number, { title: "Description", width: CONTENT_WIDTH - used, align: "left" }, ...fixed]
}

const STATUS_COLOUR = { ok: COLOUR.ok, warning: COLOUR.warning, blocked: COLOUR.blocked } as const

/** What a line's row holds: its description and, in small type, the manufacturability findings. */
interface RowText {
  readonly description: ReadonlyArray<string>
  readonly details: ReadonlyArray<{ readonly text: string; readonly colour: ReturnType<typeof rgb> }>
}

const rowText = (line: QuotePdfLine, fonts: Fonts, width: number): RowText => {
  const description = wrap(line.description, fonts.regular, SIZE.body, width)
  const verdict = line.manufacturability
  if (verdict === undefined || verdict.status === "ok") return { description, details: [] }
  const headline = { text: `Manufacturability: ${verdict.status}`, colour: STATUS_COLOUR[verdict.status] }
  const findings = verdict.findings.flatMap((finding) =>
    wrap(`${finding.id} (${finding.status}): ${finding.message}`, fonts.regular, SIZE.small, width - 8).map((text) => ({
      text: `  ${text}`,
      colour: COLOUR.muted
    }))
  )
  return { description, details: [headline, ...findings] }
}

/** At most what a row takes down the page, its options and rule included. */
const rowHeight = (row: RowText, line: QuotePdfLine) =>
  row.description.length * LEADING.body + (row.details.length + (line.options?.length ?? 0)) * LEADING.small + 8

/** What an option's row says in the description's column: the chosen one says so. */
const optionLabel = (option: QuotePdfOption) => option.chosen ? "✓ Chosen option" : "Option"

/** Draws on pages of the document, adding one when what comes next does not fit. */
class Pages {
  readonly document: PDFDocument
  readonly fonts: Fonts
  page: PDFPage
  y: number

  constructor(document: PDFDocument, fonts: Fonts) {
    this.document = document
    this.fonts = fonts
    this.page = document.addPage([A4.width, A4.height])
    this.y = A4.height - MARGIN.top
  }

  text(text: string, x: number, options: { size?: number; bold?: boolean; colour?: ReturnType<typeof rgb>; align?: "left" | "right" } = {}) {
    const size = options.size ?? SIZE.body
    const font = options.bold === true ? this.fonts.bold : this.fonts.regular
    const line = clean(text).replace(/\n/gu, " ")
    const left = options.align === "right" ? x - font.width(line, size) : x
    this.page.drawText(line, { x: left, y: this.y, size, font: font.font, color: options.colour ?? COLOUR.text })
  }

  rule(colour = COLOUR.rule, thickness = 0.6) {
    this.page.drawLine({ start: { x: MARGIN.left, y: this.y }, end: { x: RIGHT, y: this.y }, thickness, color: colour })
  }

  /** Room for `height` more points on this page, else a new page (whose top `continued` draws). */
  ensure(height: number, continued: () => void) {
    if (this.y - height >= MARGIN.bottom) return
    this.page = this.document.addPage([A4.width, A4.height])
    this.y = A4.height - MARGIN.top
    continued()
  }
}

const header = (pages: Pages, data: QuotePdfData) => {
  pages.text(data.appName, MARGIN.left, { size: SIZE.heading, bold: true, colour: COLOUR.muted })
  pages.text(data.state.toUpperCase(), RIGHT, { size: SIZE.heading, bold: true, align: "right", colour: stateColour(data.state) })
  pages.y -= 26
  pages.text(`Quote ${data.number}`, MARGIN.left, { size: SIZE.title, bold: true })
  pages.y -= 14
  pages.rule(COLOUR.text, 1)
  pages.y -= 20
}

const stateColour = (state: string) => state === "accepted" ? COLOUR.ok : state === "sent" ? COLOUR.text : COLOUR.muted

/** Two columns of labelled values: the customer on the left, the quote's facts on the right. */
const facts = (pages: Pages, data: QuotePdfData) => {
  const half = CONTENT_WIDTH / 2 - 12
  const validDays = Math.round((Date.parse(data.validUntil) - Date.parse(data.createdAt)) / DAY_MS)
  const currency = data.currency.code === data.currency.base
    ? data.currency.code
    : `${data.currency.code} (${data.currency.exchangeRate} ${data.currency.code} per ${data.currency.base})`
  const left: ReadonlyArray<readonly [string, string]> = [
    ["Customer", data.customer === undefined ? "—" : data.customer.name],
    ...(data.customer?.company === undefined ? [] : [["Company", data.customer.company] as const]),
    ["Email", data.customer?.email ?? "—"],
    ["Ticket", data.ticket === undefined ? "—" : `${data.ticket.number} · ${data.ticket.name}`]
  ]
  const right: ReadonlyArray<readonly [string, string]> = [
    ["Quote date", day(data.createdAt)],
    ["Valid until", `${instant(data.validUntil)} (${validDays} ${validDays === 1 ? "day" : "days"})`],
    ["State", data.state],
    ["Currency", currency]
  ]
  const top = pages.y
  const column = (rows: ReadonlyArray<readonly [string, string]>, x: number) => {
    pages.y = top
    for (const [label, value] of rows) {
      pages.text(label.toUpperCase(), x, { size: SIZE.small, colour: COLOUR.muted })
      pages.y -= LEADING.body
      for (const line of wrap(value, pages.fonts.regular, SIZE.body, half)) {
        pages.text(line, x, { size: SIZE.body })
        pages.y -= LEADING.body
      }
      pages.y -= 4
    }
    return pages.y
  }
  pages.y = Math.min(column(left, MARGIN.left), column(right, MARGIN.left + CONTENT_WIDTH / 2 + 12)) - 10
}

const tableHeader = (pages: Pages, columns: ReadonlyArray<Column>) => {
  pages.page.drawRectangle({ x: MARGIN.left, y: pages.y - 6, width: CONTENT_WIDTH, height: 18, color: COLOUR.band })
  let x = MARGIN.left
  for (const column of columns) {
    pages.text(column.title, column.align === "right" ? x + column.width - 4 : x + 4, { size: SIZE.small, bold: true, align: column.align })
    x += column.width
  }
  pages.y -= 22
}

/** A line's row: its cells on the first baseline, the description and findings below one another, a rule under it. */
const lineRow = (pages: Pages, columns: ReadonlyArray<Column>, line: QuotePdfLine, index: number, row: RowText) => {
  let x = MARGIN.left
  for (const column of columns) {
    const cell = column.cell?.(line, index)
    if (cell !== undefined) pages.text(cell, column.align === "right" ? x + column.width - 4 : x + 4, { align: column.align })
    x += column.width
  }
  const textX = MARGIN.left + columns[0]!.width + 4
  let leading: number = LEADING.body
  for (const text of row.description) {
    pages.text(text, textX)
    pages.y -= LEADING.body
  }
  for (const detail of row.details) {
    pages.text(detail.text, textX, { size: SIZE.small, colour: detail.colour })
    pages.y -= LEADING.small
    leading = LEADING.small
  }
  for (const option of line.options ?? []) {
    const style = { size: SIZE.small, bold: option.chosen, colour: option.chosen ? COLOUR.ok : COLOUR.muted }
    pages.text(optionLabel(option), textX + 8, style)
    let at = MARGIN.left
    for (const column of columns) {
      const cell = column.option?.(option)
      if (cell !== undefined) pages.text(cell, column.align === "right" ? at + column.width - 4 : at + 4, { ...style, align: column.align })
      at += column.width
    }
    pages.y -= LEADING.small
    leading = LEADING.small
  }
  // From the next line's baseline to just under the last one's descenders, then to the next row's baseline.
  pages.y += leading - 4
  pages.rule()
  pages.y -= 11
}

const totals = (pages: Pages, data: QuotePdfData) => {
  pages.y -= 6
  pages.text(`${data.lines.length} ${data.lines.length === 1 ? "line" : "lines"}`, MARGIN.left, { colour: COLOUR.muted })
  pages.text(`Total ${data.currency.code}  ${formatAmount(data.total, data.currency.minorUnits)}`, RIGHT - 4, { size: 12, bold: true, align: "right" })
  pages.y -= 28
}

const notes = (pages: Pages, data: QuotePdfData, continued: () => void) => {
  if (data.notes === undefined || data.notes.trim() === "") return
  const lines = wrap(data.notes, pages.fonts.regular, SIZE.body, CONTENT_WIDTH)
  pages.ensure(LEADING.body * 2, continued)
  pages.text("NOTES", MARGIN.left, { size: SIZE.small, colour: COLOUR.muted })
  pages.y -= LEADING.body
  for (const line of lines) {
    pages.ensure(LEADING.body, continued)
    pages.text(line, MARGIN.left)
    pages.y -= LEADING.body
  }
}

/** Every page's foot: the quote and the page's number among all. */
const footers = (document: PDFDocument, fonts: Fonts, data: QuotePdfData) => {
  const all = document.getPages()
  for (const [index, page] of all.entries()) {
    const size = SIZE.small
    const left = `${data.appName} · Quote ${data.number}`
    const right = `Page ${index + 1} of ${all.length}`
    page.drawLine({ start: { x: MARGIN.left, y: 44 }, end: { x: RIGHT, y: 44 }, thickness: 0.6, color: COLOUR.rule })
    page.drawText(clean(left), { x: MARGIN.left, y: 32, size, font: fonts.regular.font, color: COLOUR.muted })
    page.drawText(right, { x: RIGHT - fonts.regular.width(right, size), y: 32, size, font: fonts.regular.font, color: COLOUR.muted })
  }
}

/** The quote as a PDF document's bytes. */
export const renderQuotePdf = async (data: QuotePdfData, fontFiles: PdfFonts): Promise<Uint8Array> => {
  const document = await PDFDocument.create({ updateMetadata: false })
  document.registerFontkit(fontkit)
  const [permanentId, versionId] = documentId(data)
  const fonts: Fonts = {
    regular: measured(await document.embedFont(fontFiles.regular, { subset: true, customName: `${subsetTag(permanentId!, 0)}+DejaVuSans` })),
    bold: measured(await document.embedFont(fontFiles.bold, { subset: true, customName: `${subsetTag(permanentId!, 1)}+DejaVuSans-Bold` }))
  }
  document.setTitle(`Quote ${data.number}`)
  document.setAuthor(data.appName)
  document.setSubject(data.ticket === undefined ? `Quote ${data.number}` : `Quote ${data.number} for ticket ${data.ticket.number}`)
  document.setKeywords([data.number, ...(data.ticket === undefined ? [] : [data.ticket.number])])
  document.setCreator(data.appName)
  document.setProducer("mfg-public-api")
  document.setLanguage("en")
  document.setCreationDate(new Date(Date.parse(data.createdAt)))
  document.setModificationDate(new Date(Date.parse(data.updatedAt)))
  document.context.trailerInfo.ID = document.context.obj([PDFHexString.of(permanentId!), PDFHexString.of(versionId!)])

  const pages = new Pages(document, fonts)
  const columns = columnsOf(data.lines, data.currency)
  const continued = () => {
    pages.text(`Quote ${data.number} (continued)`, MARGIN.left, { size: SIZE.heading, bold: true })
    pages.y -= 22
    tableHeader(pages, columns)
  }
  header(pages, data)
  facts(pages, data)
  tableHeader(pages, columns)
  for (const [index, line] of data.lines.entries()) {
    const row = rowText(line, fonts, columns[1]!.width - 8)
    pages.ensure(rowHeight(row, line), continued)
    lineRow(pages, columns, line, index, row)
  }
  pages.ensure(40, continued)
  totals(pages, data)
  notes(pages, data, () => {
    pages.text(`Quote ${data.number} (continued)`, MARGIN.left, { size: SIZE.heading, bold: true })
    pages.y -= 22
  })
  footers(document, fonts, data)
  return document.save()
}
