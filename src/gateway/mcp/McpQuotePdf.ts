/**
 * The MCP resource template `mfg://ticket-quote/{id}/pdf` (src/contract/mcp/resources.ts,
 * QUOTE_PDF): a quote of the caller's app as a PDF, one `application/pdf`
 * blob, rendered by the same QuotePdfs as the REST read with `Accept:
 * application/pdf`. A quote the app does not have is "Resource not found"
 * (-32602, as for any URI no resource reads); a PDF that could not be made, or
 * an engine failure, -32603 with the REST error's code and type.
 */
import { Context, Effect, Layer } from "effect"
import { McpSchema, McpServer } from "effect/ai"
import { PdfRenderFailed } from "../../adapters/pdf/PdfRenderer.ts"
import { callScopeOf, CurrentCaller } from "../../contract/Authorization.ts"
import { QUOTE_PDF } from "../../contract/mcp/resources.ts"
import { QuotePdfs, unstorableInput } from "../rest/index.ts"
import { servedPerRequest } from "./McpRequestServices.ts"

const notFound = (uri: string) => new McpSchema.InvalidParams({ message: "Resource not found", data: { uri } })

export const QuotePdfRegistration = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* McpServer.McpServer
  const pdfs = yield* QuotePdfs

  const read = Effect.fnUntraced(function*(uri: string) {
    const id = QUOTE_PDF.idOf(uri)
    // An id storage cannot hold names no quote.
    if (id === undefined || unstorableInput({ params: { id } }) !== undefined) return yield* notFound(uri)
    const caller = yield* CurrentCaller
    const rendered = yield* pdfs.render(decodeURIComponent(id), callScopeOf(caller)).pipe(
      Effect.mapError((error) =>
        error instanceof PdfRenderFailed
          ? new McpSchema.InternalError({ message: "The quote's PDF could not be rendered", data: { uri, code: 500, type: "InternalServerError" } })
          : new McpSchema.InternalError({ message: error.message, data: { uri, code: error.code, type: error.type } })
      )
    )
    if (rendered === null) return yield* notFound(uri)
    const result: McpSchema.ReadResourceResult = { contents: [{ uri, mimeType: QUOTE_PDF.mimeType, blob: rendered.bytes }] }
    return result
  })

  yield* server.addResourceTemplate({
    template: new McpSchema.ResourceTemplate({
      uriTemplate: QUOTE_PDF.uriTemplate,
      name: QUOTE_PDF.name,
      title: QUOTE_PDF.title,
      description: QUOTE_PDF.description,
      mimeType: QUOTE_PDF.mimeType,
      annotations: { audience: ["user", "assistant"] }
    }),
    annotations: Context.empty(),
    // The router's path syntax: `::` is a literal colon, `:0` the id.
    routerPath: "mfg:://ticket-quote/:0/pdf",
    completions: {},
    // The caller is a request service (McpAuth provides it), as for the tools.
    handle: (uri) => servedPerRequest(read(uri))
  })
})) as Layer.Layer<never, never, McpServer.McpServer | McpServer.McpRequest<"Requires", CurrentCaller> | QuotePdfs>
