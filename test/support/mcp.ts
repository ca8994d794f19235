/**
 * A raw MCP 2026-07-28 `tools/call` over HTTP, as a stateless client sends
 * it: the transport's headers and the per-request `_meta` (plus whatever
 * `meta` adds, e.g. a `traceparent`). For tests that check what the
 * official clients cannot show (headers, trace context, logs, metering).
 */
export const MCP_VERSION = "2026-07-28"

export const mcpToolCall = (
  base: string,
  authorization: string,
  name: string,
  args: Record<string, unknown>,
  meta: Record<string, unknown> = {}
) =>
  fetch(`${base}/v1/mcp`, {
    method: "POST",
    headers: {
      authorization,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MCP_VERSION,
      "mcp-method": "tools/call",
      "mcp-name": name
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        _meta: { "io.modelcontextprotocol/protocolVersion": MCP_VERSION, "io.modelcontextprotocol/clientCapabilities": {}, ...meta }
      }
    })
  })
