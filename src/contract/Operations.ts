/**
 * The operations of the public contract, as types the gateway and the engine
 * share: an operation is an endpoint of `PublicContract`, its input what the
 * endpoint's schemas decode (params, query, payload), its answer what its
 * success schema describes.
 *
 * `OperationTable` lists them by group and endpoint identifier: the engine's
 * handlers have exactly its shape (src/engine/Operation.ts), so a missing
 * handler is a type error, and nothing the contract does not name is served.
 */
import { SchemaAST } from "effect"
import { type HttpApi, HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"
import type { DecodedInput } from "./EngineCall.ts"
import { PublicApi, PublicContract } from "./PublicApi.ts"
import { OPERATION_SCOPES, type ScopeRule } from "./Scopes.ts"

type GroupsOf<Api> = Api extends HttpApi.HttpApi<infer _Id, infer Groups> ? Groups : never

/** The groups of the public contract. */
export type ContractGroup = GroupsOf<typeof PublicContract>

/** Every endpoint of the public contract, by group identifier and endpoint identifier. */
export type OperationTable = {
  readonly [Group in ContractGroup as Group["identifier"]]: {
    readonly [Endpoint in HttpApiGroup.Endpoints<Group> as Endpoint["identifier"]]: Endpoint
  }
}

export type GroupId = keyof OperationTable

/**
 * The scope table (src/contract/Scopes.ts) as the contract's shape: every
 * operation has its scope, so an operation added without one does not compile.
 */
export const CONTRACT_SCOPES: { readonly [Group in GroupId]: { readonly [Endpoint in keyof OperationTable[Group]]: ScopeRule } } = OPERATION_SCOPES

/** Any endpoint of the contract. */
export type ContractEndpoint = HttpApiGroup.Endpoints<ContractGroup>

/** An endpoint that is an operation: the contract's, or the same endpoint behind the gateway's middleware. */
export type OperationEndpoint = ContractEndpoint | HttpApiGroup.Endpoints<GroupsOf<typeof PublicApi>>

type Parts = "params" | "query" | "payload"

/** An operation's input: the endpoint's params, query and payload as its schemas decode them (those it has). */
export type OperationInput<Endpoint> = Endpoint extends HttpApiEndpoint.Constraint ? Pick<
    Endpoint["~Request"],
    Extract<keyof Endpoint["~Request"], Parts>
  >
  : never

/** The parts of an input that are there (a request without a query has none, not an undefined one). */
export const presentParts = (input: DecodedInput): DecodedInput => {
  const parts: { params?: unknown; query?: unknown; payload?: unknown } = {}
  if (input.params !== undefined) parts.params = input.params
  if (input.query !== undefined) parts.query = input.query
  if (input.payload !== undefined) parts.payload = input.payload
  return parts
}

/**
 * Reads that answer the spec's empty 200 for a record the app does not have
 * (`GET /customer/{id}`, `GET /project/lookup`): their handlers answer `null`.
 */
export const EMPTY_READS = ["get", "lookup", "getMachiningStrategy", "production"] as const
export type EmptyRead = (typeof EMPTY_READS)[number]

/** A page of a list: the records asked for, and how many match in all (the `X-Total-Count` of the answer). */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

/** The record type of a paged list (its query takes `offset`, its success is an array); never for other operations. */
type PagedItem<Endpoint extends HttpApiEndpoint.Constraint> = Endpoint["~Request"] extends { readonly query: infer Query }
  ? "offset" extends keyof Query ? HttpApiEndpoint.Success<Endpoint>["Type"] extends ReadonlyArray<infer Item> ? Item : never
  : never
  : never

/**
 * An operation's answer: its success value, or `null` for a read that found
 * nothing; for a paged list, the page and the total the records are counted in.
 */
export type OperationAnswer<Endpoint> = Endpoint extends HttpApiEndpoint.Constraint ? [PagedItem<Endpoint>] extends [never] ?
      | HttpApiEndpoint.Success<Endpoint>["Type"]
      | (Endpoint["identifier"] extends EmptyRead ? null : never)
  : Page<PagedItem<Endpoint>>
  : never

/** The HTTP status a success schema is declared with (HttpApiSchema.status), if any. */
const declaredStatus = (schema: { readonly ast: SchemaAST.AST }): unknown => {
  const ast = schema.ast as SchemaAST.AST & { readonly context?: { readonly annotations?: { readonly httpApiStatus?: unknown } } }
  return ast.annotations?.httpApiStatus ?? ast.context?.annotations?.httpApiStatus
}

/**
 * Whether an endpoint is a replace that creates the record when its id is
 * new (`PUT /material-series/{id}`): a PUT whose contract declares a 201.
 */
export const createsOnReplace = (endpoint: HttpApiEndpoint.Constraint): boolean => {
  const top = endpoint as HttpApiEndpoint.Top
  return top.method === "PUT" && [...top.success].some((schema) => declaredStatus(schema) === 201)
}

const CREATED = Symbol.for("mfg/operations/created")

/**
 * The answer of a replace that created its record: the record, marked so
 * that the gateway answers 201 with its `Location` (the engine over HTTP
 * answers 201, and the gateway marks what it decodes). The mark is no field:
 * encoding leaves it out.
 */
export const asCreated = <A extends object>(record: A): A => Object.defineProperty({ ...record }, CREATED, { value: true, enumerable: false })

/** Whether an answer is of a replace that created its record (asCreated). */
export const wasCreated = (answer: unknown): boolean => typeof answer === "object" && answer !== null && CREATED in answer

/** The header that carries a page's total: the public answer's, and the engine's to the gateway over HTTP. */
export const TOTAL_COUNT_HEADER = "x-total-count"

const paged = new WeakSet<HttpApiEndpoint.Top>()

/** Whether an endpoint is a paged list (its query takes `offset`): its answer is a `Page`. */
export const isPaged = (endpoint: HttpApiEndpoint.Constraint): boolean => paged.has(endpoint as HttpApiEndpoint.Top)

const takesOffset = (endpoint: HttpApiEndpoint.Top) => {
  const ast = endpoint.query?.ast
  return ast !== undefined && SchemaAST.isObjects(ast) && ast.propertySignatures.some((property) => property.name === "offset")
}

/** An operation's name, `<group>.<endpoint>` (`customer.get`): in spans, logs, metrics and the meter. */
export type OperationName = {
  readonly [Group in GroupId]: `${Group}.${keyof OperationTable[Group] & string}`
}[GroupId]

/** The groups of an API made of the contract's groups, as the HttpApi modules' runtime shape. */
export const groupsOf = (api: { readonly groups: object }): ReadonlyArray<HttpApiGroup.Top> => Object.values(api.groups)

const names = new WeakMap<HttpApiEndpoint.Top, OperationName>()
const contractEndpoints = new Map<string, HttpApiEndpoint.Top>()

/**
 * Remembers the operation of each endpoint of `api`: an API made of the
 * contract's groups (the contract, the gateway's API, the engine's).
 */
export const registerOperations = (api: { readonly groups: object }) => {
  for (const group of groupsOf(api)) {
    for (const endpoint of Object.values(group.endpoints)) {
      names.set(endpoint, `${group.identifier}.${endpoint.identifier}` as OperationName)
      if (takesOffset(endpoint)) paged.add(endpoint)
    }
  }
}

registerOperations(PublicContract)
registerOperations(PublicApi)
for (const group of groupsOf(PublicContract)) {
  for (const endpoint of Object.values(group.endpoints)) contractEndpoints.set(`${group.identifier}.${endpoint.identifier}`, endpoint)
}

/** The contract's endpoint of an operation named at run time (an MCP tool's), if there is one. */
export const endpointNamed = (name: string): ContractEndpoint | undefined => contractEndpoints.get(name) as ContractEndpoint | undefined

/** `endpoint` as the builder's any endpoint, for code that reads an endpoint's parts at run time (HttpApiEndpoint's own guard). */
export const anyEndpoint = (endpoint: HttpApiEndpoint.Constraint): HttpApiEndpoint.Top => {
  if (HttpApiEndpoint.isHttpApiEndpoint(endpoint)) return endpoint
  throw new TypeError(`${endpoint.identifier} is not an HttpApiEndpoint`)
}

/** The operation an endpoint of a registered API is. */
export const operationOf = (endpoint: HttpApiEndpoint.Constraint): OperationName => {
  const name = names.get(endpoint as HttpApiEndpoint.Top)
  if (name === undefined) throw new Error(`${endpoint.identifier} is not an endpoint of the public contract`)
  return name
}
