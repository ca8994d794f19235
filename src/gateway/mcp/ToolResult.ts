/**
 * A tool call's result as its fields: what effect/ai's `CallToolResult`
 * holds, as plain data, and the JSON text of its structured content when it
 * has one (McpToolCalls makes the text and the content from one
 * serialization).
 *
 * The calls answer this form; each answerer turns it into what it writes:
 * McpDirect writes the JSON-RPC answer from it (the structured content's
 * text written in place, not serialized again), McpRoute hands McpServer the
 * `CallToolResult` it takes, and McpToolRetries stores it under a key.
 * Building the Schema class on every call cost the direct answer about 3 % of
 * its CPU for an object it never read (bench/README.md, "The MCP tool call in
 * front of the router").
 */
import { McpSchema } from "effect/ai"

/** A text content block, as a tool result carries its answer. */
export interface TextBlock {
  readonly type: "text"
  readonly text: string
}

export interface ToolResult {
  readonly isError: boolean
  readonly content: ReadonlyArray<TextBlock>
  readonly structuredContent?: unknown
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
  /** `JSON.stringify(structuredContent)`, when it is known. */
  readonly structuredText?: string | undefined
}

/** McpServer decodes a tool's result (every check) before it answers: checking it here as well is redundant. */
const NO_CHECKS = { disableChecks: true } as const

/** The result as McpServer takes it from a tool's handler. */
export const toCallToolResult = (result: ToolResult): McpSchema.CallToolResult =>
  new McpSchema.CallToolResult({
    ...(result._meta === undefined ? {} : { _meta: result._meta }),
    isError: result.isError,
    structuredContent: result.structuredContent,
    content: result.content
  }, NO_CHECKS)
