/**
 * A PDF as a reader meets it, read with PDF.js (`pdfjs-dist`, the library
 * browsers use to show PDFs): its pages and their size, its text laid out
 * in lines, its fonts and whether each is embedded, its dates, and page 1
 * drawn as a PNG (through `@napi-rs/canvas`, the canvas PDF.js draws on in
 * Node) for a reviewer to look at. Nothing here needs a system package.
 */
import { createCanvas } from "@napi-rs/canvas"
import { mkdirSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { getDocument, OPS, PDFDateString } from "pdfjs-dist/legacy/build/pdf.mjs"

/** Where the rendered pages are kept for a reviewer (gitignored). */
export const PDF_OUTPUT = resolve(import.meta.dirname, "../../test-output")

export interface PdfFont {
  /** The font's PostScript name, with its subset tag (`ABCDEF+DejaVuSans`). */
  readonly name: string
  readonly embedded: boolean
}

export interface ReadPdf {
  readonly pages: number
  /** Page 1's width and height in points. */
  readonly pageSize: readonly [number, number]
  /** Every page's text, a line per row of text (its pieces left to right, one space apart), pages apart by a form feed. */
  readonly text: string
  /** The fonts the pages draw with. */
  readonly fonts: ReadonlyArray<PdfFont>
  readonly createdAt: Date | null
  readonly modifiedAt: Date | null
  /**
   * Page 1 drawn at `dpi` as a PNG, written to test-output/<name>.png: its
   * path, its bytes, and its ink (the share of its pixels that are not paper).
   */
  readonly firstPagePng: (name: string, dpi: number) => Promise<{ readonly file: string; readonly png: Buffer; readonly ink: number }>
}

interface Piece {
  readonly x: number
  readonly y: number
  readonly text: string
}

/** A pixel darker than this in any channel is ink, not paper. */
const INK = 200

/** Pieces within half a point of one baseline are one line. */
const SAME_LINE = 0.5

const linesOf = (pieces: ReadonlyArray<Piece>): ReadonlyArray<string> => {
  const rows: Array<{ y: number; pieces: Array<Piece> }> = []
  for (const piece of pieces) {
    const row = rows.find((candidate) => Math.abs(candidate.y - piece.y) < SAME_LINE)
    if (row === undefined) rows.push({ y: piece.y, pieces: [piece] })
    else row.pieces.push(piece)
  }
  return rows
    .sort((a, b) => b.y - a.y)
    .map((row) => row.pieces.sort((a, b) => a.x - b.x).map((piece) => piece.text.trim()).filter((text) => text.length > 0).join(" "))
    .filter((line) => line.length > 0)
}

/** Reads `bytes` as a PDF; also keeps them as test-output/<name>.pdf. */
export const readPdf = async (name: string, bytes: Uint8Array): Promise<ReadPdf> => {
  mkdirSync(PDF_OUTPUT, { recursive: true })
  writeFileSync(join(PDF_OUTPUT, `${name}.pdf`), bytes)
  // PDF.js takes the buffer over: a copy, so the caller's bytes stay as they were.
  const document = await getDocument({ data: new Uint8Array(bytes), fontExtraProperties: true }).promise
  const texts: Array<string> = []
  const fonts = new Map<string, PdfFont>()
  for (let number = 1; number <= document.numPages; number++) {
    const page = await document.getPage(number)
    const content = await page.getTextContent()
    const pieces = content.items.flatMap((item) => "str" in item ? [{ x: item.transform[4] as number, y: item.transform[5] as number, text: item.str }] : [])
    texts.push(linesOf(pieces).join("\n"))
    const operators = await page.getOperatorList()
    operators.fnArray.forEach((operator, index) => {
      if (operator !== OPS.setFont) return
      const id = String((operators.argsArray[index] as Array<unknown>)[0])
      const font = page.commonObjs.get(id) as { readonly name?: string; readonly missingFile?: boolean }
      fonts.set(id, { name: font.name ?? id, embedded: font.missingFile === false })
    })
  }
  const first = await document.getPage(1)
  const [, , width, height] = first.view
  const { info } = await document.getMetadata()
  const date = (key: string) => {
    const value = (info as Record<string, unknown>)[key]
    return typeof value === "string" ? PDFDateString.toDateObject(value) : null
  }
  return {
    pages: document.numPages,
    pageSize: [width ?? 0, height ?? 0],
    text: `${texts.join("\n\f\n")}\n`,
    fonts: [...fonts.values()],
    createdAt: date("CreationDate"),
    modifiedAt: date("ModDate"),
    firstPagePng: async (pngName, dpi) => {
      const viewport = first.getViewport({ scale: dpi / 72 })
      const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height))
      await first.render({ canvas: canvas as unknown as Parameters<typeof first.render>[0]["canvas"], viewport }).promise
      const png = canvas.toBuffer("image/png")
      const file = join(PDF_OUTPUT, `${pngName}.png`)
      writeFileSync(file, png)
      const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data
      let inked = 0
      for (let at = 0; at < pixels.length; at += 4) {
        if (pixels[at + 3]! > 0 && Math.min(pixels[at]!, pixels[at + 1]!, pixels[at + 2]!) < INK) inked++
      }
      return { file, png, ink: inked / (pixels.length / 4) }
    }
  }
}
