/**
 * Tool results whose structured content is known as text: the text their
 * content carries, which `JSON.stringify` writes for that structured content
 * (McpToolCalls makes both from one serialization). McpDirect's answer
 * writes that text in place instead of serializing the record again.
 */
import type { McpSchema } from "effect/ai"

const structuredTexts = new WeakMap<McpSchema.CallToolResult, string>()

/** `result`, whose structured content `JSON.stringify` writes as `text`. */
export const withStructuredText = (result: McpSchema.CallToolResult, text: string) => {
  structuredTexts.set(result, text)
  return result
}

/** The text of `result`'s structured content, when it is known. */
export const structuredTextOf = (result: McpSchema.CallToolResult): string | undefined => structuredTexts.get(result)
