/**
 * Quote PDFs are rendered in a thread of their own, never on the event loop
 * that answers requests: embedding and subsetting the fonts and laying out
 * the pages take 30–100 ms of CPU for an ordinary quote and more for a long
 * one (bench/README.md, "The quote PDF off the event loop"), during which
 * every other call of every app would wait.
 *
 * - One thread (a PDF waits for the one before it), at nice +10 like the
 *   model analysis threads, so a burst of PDFs leaves the CPU to the request
 *   loop first. It starts with the first PDF and ends PDF_IDLE_TIMEOUT after
 *   the last (BudgetedPool.ts): the thread with pdf-lib, fontkit and the
 *   fonts (50–60 MiB resident once it has rendered) is held only while PDFs
 *   are asked for, and nothing of it by the request loop.
 * - One PDF of an app at a time (PDFS_PER_APP): an app's burst waits behind
 *   its own PDFs, so another app's PDF waits for one render at most before
 *   its turn, not for the whole burst.
 * - Each render has PDF_RENDER_TIMEOUT of running time (not counting its
 *   wait for the thread) and PDF_MAX_MEMORY_MB of JavaScript heap; past
 *   either, the thread is ended (another starts for the next PDF) and the
 *   render fails, with a reason the handler logs.
 */
import { Data, Duration, Effect, type Scope } from "effect"
import { Piscina } from "piscina"
import { isOutOfMemory, onDemandPool, perAppLimit, runWithinBudget } from "../../engine/BudgetedPool.ts"
import type { PdfTask } from "./pdfWorker.ts"
import type { QuotePdfData } from "./QuotePdf.ts"

const WORKER = new URL("./pdfWorker.ts", import.meta.url)

/** The running time of one render: a quote of hundreds of lines takes a fraction of a second. */
export const PDF_RENDER_TIMEOUT = Duration.seconds(20)
/**
 * The thread's JavaScript heap: a quote of a thousand lines renders in
 * about 40 MB of it, and one of tens of thousands of lines runs out here
 * rather than in the request loop's heap.
 */
const PDF_MAX_MEMORY_MB = 256
/** The thread ends this long after the last PDF, as the model analysis threads do. */
const PDF_IDLE_TIMEOUT = Duration.seconds(30)

/** PDFs of one app rendering or queued for the thread at once; its others wait their turn behind other apps' PDFs. */
const PDFS_PER_APP = 1

/** Why a PDF was not rendered: for the log, never the response. */
export class PdfRenderFailed extends Data.TaggedError("PdfRenderFailed")<{ readonly reason: string; readonly cause?: unknown }> {}

export interface PdfRenderer {
  /** The PDF of `data`, rendered in its turn among the PDFs of `appId` (PDFS_PER_APP). */
  readonly render: (data: QuotePdfData, appId: string) => Effect.Effect<Uint8Array, PdfRenderFailed>
  /** The ids of the PDF thread (diagnostics and tests). */
  readonly threadIds: () => ReadonlyArray<number>
}

const makePool = () => {
  const pool = new Piscina<PdfTask, Uint8Array>({
    filename: WORKER.href,
    minThreads: 1,
    maxThreads: 1,
    idleTimeout: Infinity,
    resourceLimits: { maxOldGenerationSizeMb: PDF_MAX_MEMORY_MB, stackSizeMb: 4 },
    niceIncrement: 10
  })
  // An error of a thread with no task (there should be none): reported, never an unhandled 'error' event.
  pool.on("error", (error) => console.error("quote PDFs: the worker thread failed", error))
  return pool
}

/** The renderer, its thread ended with the scope. */
export const makePdfRenderer = (
  idleTimeout: Duration.Duration = PDF_IDLE_TIMEOUT,
  budget: Duration.Duration = PDF_RENDER_TIMEOUT
): Effect.Effect<PdfRenderer, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(Effect.sync(() => onDemandPool(makePool, idleTimeout)), (pools) => Effect.promise(() => pools.close())),
    (pools) => {
      const forApp = perAppLimit(PDFS_PER_APP)
      return {
        render: (data, appId) =>
          Effect.flatMap(forApp(appId, runWithinBudget(pools, { data }, budget)), (outcome) => {
            switch (outcome._tag) {
              case "Done":
                return Effect.succeed(outcome.result)
              case "OverBudget":
                return Effect.fail(new PdfRenderFailed({ reason: `its rendering took longer than ${Duration.format(budget)}` }))
              case "Failed":
                return Effect.fail(
                  isOutOfMemory(outcome.error)
                    ? new PdfRenderFailed({ reason: `its rendering needed more than ${PDF_MAX_MEMORY_MB} MB of memory` })
                    : new PdfRenderFailed({ reason: "its thread failed", cause: outcome.error })
                )
            }
          }),
        threadIds: pools.threadIds
      }
    }
  )
