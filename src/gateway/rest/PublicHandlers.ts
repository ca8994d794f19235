/**
 * Handlers of the public API: every endpoint forwards to the engine
 * (ForwardHandler), but for those the gateway answers itself, named in one
 * table: the model files, whose bytes stream (ModelFileHandlers.ts); the
 * quote's read, which also answers a PDF (QuotePdfHandler.ts); the request
 * log, answered from the gateway's meter (RequestLogHandler.ts).
 */
import { Layer } from "effect"
import { PublicApi } from "../../contract/PublicApi.ts"
import { endpointHandlers, handleEveryEndpoint } from "../../platform/http/EveryEndpoint.ts"
import { ForwardHandler } from "./ForwardHandlers.ts"
import { ModelFileHandler } from "./ModelFileHandlers.ts"
import { QuoteReadHandler } from "./QuotePdfHandler.ts"
import { RequestLogHandler } from "./RequestLogHandler.ts"

/** The public endpoints the gateway answers itself, by name; a name the API lacks does not compile. */
const GATEWAY_ANSWERED = {
  "modelFile.*": ModelFileHandler,
  "ticketQuote.get": QuoteReadHandler,
  "requestLog.list": RequestLogHandler
}

/** The router's handlers of every group of the public API. */
export const PublicHandlers = handleEveryEndpoint(PublicApi, ForwardHandler, GATEWAY_ANSWERED)

/** The handler PublicHandlers gives an endpoint: the direct record read (RecordReadDirect) answers with the same. */
export const publicHandlerOf = endpointHandlers(PublicApi, ForwardHandler, GATEWAY_ANSWERED)

/**
 * The handlers, built once: the router's handlers and the direct record read
 * take the same instances, so the two paths cannot answer differently.
 */
export const PublicHandlerServices = Layer.mergeAll(ModelFileHandler.layer, QuoteReadHandler.layer, RequestLogHandler.layer).pipe(
  Layer.provideMerge(ForwardHandler.layer)
)
