/**
 * Which MCP requests McpDirect answers itself: a plain 2026-07-28 tools/call
 * of one of the 9 tools, exactly as the Streamable HTTP transport sends it.
 * Anything else goes to McpServer (the HTTP suite checks that both answer
 * the same: test/mcp/mcp.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpServerRequest } from "effect/http"
import { TOOL_NAMES } from "../../src/contract/mcp/tools.ts"
import { plainToolCall } from "../../src/gateway/mcp/McpDirect.ts"

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": "lookup_ticket"
}
const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} }
const BODY = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "lookup_ticket", arguments: { identifier: "T-1" }, _meta: META } }

const request = (headers: Record<string, string> = HEADERS, method = "POST") =>
  HttpServerRequest.fromWeb(new Request("http://127.0.0.1/v1/mcp", { method, headers, ...(method === "POST" ? { body: "{}" } : {}) }))

const plain = (body: unknown, headers: Record<string, string> = HEADERS) => plainToolCall(request(headers), body, TOOL_NAMES)

describe("McpDirect.plainToolCall", () => {
  it("takes the transport's own tools/call, with or without client info, trace context and arguments", () => {
    expect(plain(BODY)).toEqual({ id: 7, name: "lookup_ticket", args: { identifier: "T-1" } })
    expect(plain({ ...BODY, id: "a" })?.id).toBe("a")
    const withMore = {
      ...BODY,
      params: {
        ...BODY.params,
        _meta: {
          ...META,
          "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
          traceparent: "00-x",
          "io.modelcontextprotocol/clientCapabilities": { roots: { listChanged: true }, elicitation: {} }
        }
      }
    }
    expect(plain(withMore)?.name).toBe("lookup_ticket")
    const { arguments: _, ...withoutArguments } = BODY.params
    expect(plain({ ...BODY, params: withoutArguments })?.args).toBeUndefined()
    expect(plain(BODY, { ...HEADERS, "content-type": "application/json; charset=utf-8", accept: "text/event-stream, application/json" })).toBeDefined()
  })

  it("leaves every other request to McpServer", () => {
    const variants: ReadonlyArray<readonly [string, unknown, Record<string, string>?]> = [
      ["another media type accepted", BODY, { ...HEADERS, accept: "application/json, text/event-stream, application/x-ndjson" }],
      ["no event stream accepted", BODY, { ...HEADERS, accept: "application/json" }],
      ["another content type", BODY, { ...HEADERS, "content-type": "text/plain" }],
      ["a session", BODY, { ...HEADERS, "mcp-session-id": "s" }],
      ["another protocol version", BODY, { ...HEADERS, "mcp-protocol-version": "2025-11-25" }],
      ["another method header", BODY, { ...HEADERS, "mcp-method": "tools/list" }],
      ["a name header that differs", BODY, { ...HEADERS, "mcp-name": "list_parts" }],
      ["another method", { ...BODY, method: "tools/list" }],
      ["an unknown tool", { ...BODY, params: { ...BODY.params, name: "drop_tables" } }, { ...HEADERS, "mcp-name": "drop_tables" }],
      ["a notification (no id)", { jsonrpc: "2.0", method: "tools/call", params: BODY.params }],
      ["a null id", { ...BODY, id: null }],
      ["a batch", [BODY]],
      ["another JSON-RPC version", { ...BODY, jsonrpc: "1.0" }],
      ["an unexpected member", { ...BODY, extra: true }],
      ["an unexpected parameter", { ...BODY, params: { ...BODY.params, task: {} } }],
      ["arguments that are not an object", { ...BODY, params: { ...BODY.params, arguments: ["T-1"] } }],
      ["no _meta", { ...BODY, params: { name: "lookup_ticket", arguments: {} } }],
      ["_meta of another version", { ...BODY, params: { ...BODY.params, _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2025-11-25" } } }],
      ["a progress token", { ...BODY, params: { ...BODY.params, _meta: { ...META, progressToken: 1 } } }],
      ["capabilities of an odd shape", {
        ...BODY,
        params: { ...BODY.params, _meta: { ...META, "io.modelcontextprotocol/clientCapabilities": { roots: true } } }
      }],
      ["client info of an odd shape", { ...BODY, params: { ...BODY.params, _meta: { ...META, "io.modelcontextprotocol/clientInfo": { name: "c" } } } }]
    ]
    for (const [what, body, headers] of variants) expect(plain(body, headers), what).toBeUndefined()
    expect(plainToolCall(request(HEADERS, "GET"), BODY, TOOL_NAMES), "a GET").toBeUndefined()
  })
})
