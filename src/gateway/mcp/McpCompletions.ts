/**
 * `completion/complete` for the `quote_a_part` prompt's arguments, from the
 * caller's app's own records, each read through the REST list's Downstream
 * operation as the resources read them:
 *
 *   customerName                    the names of the app's customers
 *   projectId                       its projects' ids (of the customer named in `customerName`, when it is given)
 *   technologyId                    the technologies' ids
 *   materialId                      the materials' ids (of the technology in `technologyId`, when it is given)
 *   catalogueModelConfigurationId   the ids of its catalogue models' configurations
 *
 * A value matches when the text typed is the start of it, of the record's
 * name or of its number (case-insensitive), or else appears in one of them;
 * starts come first. At most 100 values (MCP's bound), `total` saying how
 * many matched and `hasMore` whether there are more. Each completion reads
 * one page of the list, its largest (1000 records): past that `hasMore`
 * says so, and the text typed narrows the list down.
 */
import { Effect } from "effect"
import { McpSchema } from "effect/ai"
import { callScopeOf, CurrentCaller } from "../../contract/Authorization.ts"
import { endpointNamed, type OperationInput, type Page } from "../../contract/Operations.ts"
import type { DownstreamError } from "../../domain/Errors.ts"
import { MAX_PAGE_SIZE } from "../../domain/Resource.ts"
import { traced } from "../../domain/Span.ts"
import type { Downstream } from "../../services/Downstream.ts"

/** MCP: a completion answers at most 100 values. */
export const MAX_COMPLETION_VALUES = 100

type Json = Readonly<Record<string, unknown>>

/** A completion, as McpServer's `addPrompt` takes it; the caller is a request service (McpAuth provides it). */
export type Completion = (
  input: string,
  context: { readonly arguments?: Readonly<Record<string, string>> | undefined } | undefined
) => Effect.Effect<McpSchema.CompleteResult, McpSchema.InternalError, CurrentCaller>

/** The prompt's arguments given so far (a request may carry no context). */
const givenOf = (context: Parameters<Completion>[1]): Readonly<Record<string, string>> => context?.arguments ?? {}

/** One candidate: the value completed to, and the texts it is found by (its value, name, number). */
interface Candidate {
  readonly value: string
  readonly texts: ReadonlyArray<string>
}

/** The candidates matching `typed`, starts first, each value once. */
export const matching = (candidates: ReadonlyArray<Candidate>, typed: string): ReadonlyArray<string> => {
  const needle = typed.toLowerCase()
  const starts: Array<string> = []
  const contains: Array<string> = []
  const seen = new Set<string>()
  for (const candidate of candidates) {
    if (seen.has(candidate.value)) continue
    const texts = candidate.texts.map((text) => text.toLowerCase())
    if (texts.some((text) => text.startsWith(needle))) starts.push(candidate.value)
    else if (texts.some((text) => text.includes(needle))) contains.push(candidate.value)
    else continue
    seen.add(candidate.value)
  }
  return [...starts, ...contains]
}

const completed = (values: ReadonlyArray<string>, truncated: boolean) =>
  McpSchema.CompleteResult.make({
    completion: {
      values: values.slice(0, MAX_COMPLETION_VALUES),
      total: values.length,
      hasMore: truncated || values.length > MAX_COMPLETION_VALUES
    }
  })

const textsOf = (record: Json, keys: ReadonlyArray<string>) => keys.flatMap((key) => typeof record[key] === "string" ? [record[key]] : [])

/** The completions of the prompt's arguments, reading the app's records through `downstream`. */
export const makePromptCompletions = (downstream: Downstream["Service"]): Readonly<Record<string, Completion>> => {
  /** One page (the largest) of a REST list for the caller's app, with the given filters. */
  const list = (operation: string, filters: Json = {}) => {
    const endpoint = endpointNamed(operation)
    if (endpoint === undefined) throw new Error(`MCP completions: ${operation} is not an operation of the contract`)
    const call = downstream.call(endpoint)
    return Effect.flatMap(
      CurrentCaller,
      (caller) =>
        call({ query: { ...filters, limit: MAX_PAGE_SIZE } } as OperationInput<typeof endpoint>, callScopeOf(caller))
          .pipe(
            Effect.map((answer) => {
              const page = answer as Page<Json>
              return { items: page.items, truncated: page.total > page.items.length }
            }),
            Effect.mapError((error: DownstreamError) => new McpSchema.InternalError({ message: error.message, data: { code: error.code, type: error.type } })),
            traced("Downstream.call", { attributes: { "downstream.operation": operation } })
          )
    )
  }

  /** A completion over the records of one list: `value` the field completed to, `texts` those it is found by. */
  const over =
    (operation: string, value: string, texts: ReadonlyArray<string>, filters: (given: Readonly<Record<string, string>>) => Json = () => ({})): Completion =>
    (input, context) =>
      Effect.map(list(operation, filters(givenOf(context))), ({ items, truncated }) => {
        const candidates = items.flatMap((record) => typeof record[value] === "string" ? [{ value: record[value], texts: textsOf(record, texts) }] : [])
        return completed(matching(candidates, input), truncated)
      })

  /** The ids of the customers named `name` (a customer's name is not unique). */
  const customersNamed = (name: string) => Effect.map(list("customer.list", { name: [name] }), ({ items }) => items.map((customer) => customer.id))

  const projectId: Completion = (input, context) => {
    const customerName = givenOf(context).customerName
    return Effect.flatMap(
      customerName === undefined || customerName === "" ? Effect.succeed(undefined) : customersNamed(customerName),
      (customerIds) =>
        customerIds !== undefined && customerIds.length === 0
          ? Effect.succeed(completed([], false))
          : over("project.list", "id", ["id", "name", "number"], () => customerIds === undefined ? {} : { customerId: customerIds })(input, context)
    )
  }

  const catalogueModelConfigurationId: Completion = (input) =>
    Effect.map(list("catalogueModel.list"), ({ items, truncated }) => {
      const candidates = items.flatMap((model) =>
        ((model.configurations as ReadonlyArray<Json> | undefined) ?? []).flatMap((configuration) =>
          typeof configuration.id === "string"
            ? [{ value: configuration.id, texts: [...textsOf(configuration, ["id", "name"]), ...textsOf(model, ["name"])] }]
            : []
        )
      )
      return completed(matching(candidates, input), truncated)
    })

  return {
    customerName: over("customer.list", "name", ["name"]),
    projectId,
    technologyId: over("technology.list", "id", ["id", "name"]),
    materialId: over(
      "material.list",
      "id",
      ["id", "name"],
      (given) => given.technologyId === undefined || given.technologyId === "" ? {} : { technologyId: [given.technologyId] }
    ),
    catalogueModelConfigurationId
  }
}
