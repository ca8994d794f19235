/**
 * The PDF worker: what the quote PDF thread runs (PdfRenderer.ts; piscina
 * calls the default export with each quote). It says when it starts, so the
 * time budget runs from then and not while the quote waited for the thread,
 * then renders the quote with the fonts it read for its first one.
 *
 * Loaded by Node itself (type stripping), under `npm start`, the engine's
 * own process and vitest alike: `.ts` imports, erasable syntax only, and
 * nothing of Effect, so a new thread loads only pdf-lib and fontkit.
 */
import type { MessagePort } from "node:worker_threads"
import { type PdfFonts, readPdfFonts } from "./PdfFonts.ts"
import { type QuotePdfData, renderQuotePdf } from "./QuotePdf.ts"

export interface PdfTask {
  readonly data: QuotePdfData
  /** Told (any message) when the task starts running; then closed. */
  readonly started: MessagePort
}

let fonts: Promise<PdfFonts> | undefined

export default async function renderTask(task: PdfTask): Promise<Uint8Array> {
  task.started.postMessage(true)
  task.started.close()
  fonts ??= readPdfFonts()
  return renderQuotePdf(task.data, await fonts)
}
