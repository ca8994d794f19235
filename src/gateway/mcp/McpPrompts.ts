/**
 * The `quote_a_part` prompt (src/contract/mcp/prompts.ts) registered with
 * McpServer.
 *
 * Registered with McpServer's `addPrompt`, not `registerPrompt`: the latter
 * decodes each argument on its own and answers a failure of the prompt's
 * content as an internal error, while the one-model-source rule spans two
 * arguments and breaking it is the caller's mistake (invalid params, -32602,
 * naming the argument). The argument list is derived from the Schema's
 * fields as `registerPrompt` derives it; the arguments naming the app's
 * records complete from them (McpCompletions).
 */
import { Context, Effect, Layer, Record, Schema, SchemaAST } from "effect"
import { McpSchema, McpServer } from "effect/ai"
import type { CurrentCaller } from "../../contract/Authorization.ts"
import { badRequestOf } from "../../contract/BadRequests.ts"
import { QUOTE_A_PART } from "../../contract/mcp/prompts.ts"
import { Downstream } from "../../services/Downstream.ts"
import { type Completion, makePromptCompletions } from "./McpCompletions.ts"
import { servedPerRequest } from "./McpRequestServices.ts"

/** What `prompts/list` says of each argument: its name, its description, whether it is required. */
const argumentsOf = (fields: Schema.Struct.Fields) =>
  Object.entries(fields).map(([name, field]) => {
    const description = SchemaAST.resolveDescription(field.ast)
    return { name, ...(description === undefined ? {} : { description }), required: !SchemaAST.isOptional(field.ast) }
  })

export const PromptRegistrations = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* McpServer.McpServer
  const prompt = QUOTE_A_PART
  const decode = Schema.decodeUnknownEffect(prompt.arguments)
  // The caller is a request service (McpAuth provides it), as for the tools and resources.
  const completions = Record.map(
    makePromptCompletions(yield* Downstream),
    (complete) => (input: string, context: Parameters<Completion>[1]) => servedPerRequest(complete(input, context))
  )
  yield* server.addPrompt({
    prompt: new McpSchema.Prompt({
      name: prompt.name,
      title: prompt.title,
      description: prompt.description,
      arguments: argumentsOf(prompt.arguments.fields)
    }),
    annotations: Context.empty(),
    completions,
    handle: (params) =>
      decode(params, { errors: "all", onExcessProperty: "error" }).pipe(
        Effect.mapError((error) => {
          const problem = badRequestOf([{ kind: "Payload", issue: error.issue }])
          // Worded as a tool's invalid arguments are: `Missing required field "quantity"`.
          return new McpSchema.InvalidParams({ message: problem.message, data: { errors: problem.errors ?? [] } })
        }),
        Effect.map((args) =>
          new McpSchema.GetPromptResult({
            description: prompt.description,
            messages: [{ role: "user", content: McpSchema.TextContent.make({ text: prompt.text(args) }) }]
          })
        )
      )
  })
})) as Layer.Layer<never, never, McpServer.McpServer | McpServer.McpRequest<"Requires", CurrentCaller> | Downstream>
