/**
 * The fonts a rendered PDF embeds: DejaVu Sans, regular and bold, from the
 * `dejavu-fonts-ttf` package (its LICENSE: the Bitstream Vera licence, which
 * allows embedding and redistribution). They cover Latin, Greek and Cyrillic
 * and the currency signs, so names and descriptions print as written; read
 * by the PDF thread with its first PDF, and kept (pdfWorker.ts).
 *
 * Plain Node, nothing of Effect: the PDF thread loads it as it is.
 */
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"

export interface PdfFonts {
  readonly regular: Uint8Array
  readonly bold: Uint8Array
}

const FONT_FILES = {
  regular: "dejavu-fonts-ttf/ttf/DejaVuSans.ttf",
  bold: "dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf"
} as const

const resolve = createRequire(import.meta.url).resolve

/** The font files as installed (a missing one rejects: a broken installation). */
export const readPdfFonts = async (): Promise<PdfFonts> => {
  const [regular, bold] = await Promise.all([readFile(resolve(FONT_FILES.regular)), readFile(resolve(FONT_FILES.bold))])
  return { regular, bold }
}
