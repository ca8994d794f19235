/**
 * The MCP prompts: `quote_a_part` walks an agent from a model file URL (or a
 * catalogue model configuration) to a sent quote, naming the resources to
 * read and the tools to call, in order. Its text is built from the resource
 * and tool tables, so it names only what the server serves.
 *
 * Prompt arguments are strings (MCP `prompts/get`); the Schema decodes them
 * (a quantity from its text) and states the one-model-source rule, so a
 * `prompts/get` that breaks it is invalid params naming the argument. The
 * customer, project, technology, material and catalogue configuration
 * arguments complete (`completion/complete`) from the app's own records
 * (McpPrompts).
 */
import { Schema } from "effect"
import { Name, Quantity, Ref } from "../../domain/resources/fields.ts"
import { ModelEndpoint } from "../../domain/resources/modelFiles.ts"
import { MCP_RESOURCES } from "./resources.ts"
import { TOOL_NAMES } from "./tools.ts"

/** The URI and template of a resource, by its name, checked against the resource table. */
const resourceNamed = (name: string) => {
  const spec = MCP_RESOURCES.find((resource) => resource.name === name)
  if (spec === undefined) throw new Error(`MCP prompt: no resource mfg://${name}`)
  return spec
}

/** A tool name, checked against the tool table. */
const tool = (name: string) => {
  if (!TOOL_NAMES.has(name)) throw new Error(`MCP prompt: no tool ${name}`)
  return name
}

export const QuoteAPartArguments = Schema.Struct({
  modelUrl: Schema.optionalKey(
    ModelEndpoint.fields.url.annotate({
      description: "The model file to quote (STL, 3MF or OBJ), as an http(s) URL the engine can download. " +
        "Give this or catalogueModelConfigurationId."
    })
  ),
  catalogueModelConfigurationId: Schema.optionalKey(
    Ref("catalogue model configuration").annotate({
      description: "A configuration `id` from the `mfg://catalogue-model` resource, to quote that catalogue part instead of a model file."
    })
  ),
  quantity: Schema.NumberFromString.pipe(Schema.decodeTo(Quantity)).annotate({ description: "How many parts to quote, a whole number (e.g. 25)" }),
  customerName: Schema.optionalKey(
    Name.annotate({ description: "The customer's name as the `mfg://customer` resource has it; left out, the agent asks the user." })
  ),
  projectId: Schema.optionalKey(
    Ref("project").annotate({
      description: "The project (order) to quote in: a project `id` from `mfg://project`; left out, the agent chooses one of the customer's."
    })
  ),
  technologyId: Schema.optionalKey(
    Ref("technology").annotate({
      description: "With modelUrl: the technology to make it with, a technology `id` from `mfg://technology`; left out, the agent chooses. " +
        "(A catalogue configuration brings its own.)"
    })
  ),
  materialId: Schema.optionalKey(
    Ref("material").annotate({
      description: "With modelUrl: a material `id` of the technology, from `mfg://material`; left out, the agent chooses. " +
        "(A catalogue configuration brings its own.)"
    })
  )
}).check(Schema.makeFilter((args) => {
  if ((args.modelUrl === undefined) === (args.catalogueModelConfigurationId === undefined)) {
    return {
      path: [args.modelUrl === undefined ? "modelUrl" : "catalogueModelConfigurationId"],
      issue: "exactly one of modelUrl and catalogueModelConfigurationId is required"
    }
  }
  // A catalogue configuration is made as it says: its technology and material are not chosen again.
  const chosen = args.catalogueModelConfigurationId === undefined ? undefined : (["technologyId", "materialId"] as const).find((key) => args[key] !== undefined)
  return chosen === undefined ? true : { path: [chosen], issue: `${chosen} goes with modelUrl: a catalogue configuration brings its own` }
}))
export type QuoteAPartArguments = typeof QuoteAPartArguments.Type

/** RFC 6570 form-style expansion of one query parameter (a `<placeholder>` is left for the agent to fill in). */
const withQuery = (uri: string, name: string, value: string) =>
  `${uri}?${name}=${value.startsWith("<") && value.endsWith(">") ? value : encodeURIComponent(value)}`

/** The prompt's one user message: the steps from the model to a sent quote. */
const quoteAPartText = (args: QuoteAPartArguments): string => {
  const technology = resourceNamed("technology")
  const material = resourceNamed("material")
  const fields = resourceNamed("production-parameter-field")
  const services = resourceNamed("post-processing-service")
  const currency = resourceNamed("currency")
  const catalogue = resourceNamed("catalogue-model")
  const customer = resourceNamed("customer")
  const project = resourceNamed("project")
  const fromUrl = args.modelUrl !== undefined
  const source = fromUrl ? `the model file ${args.modelUrl}` : `the catalogue configuration ${args.catalogueModelConfigurationId}`
  const who = args.customerName === undefined ? "the customer the user names" : `the customer "${args.customerName}"`
  const findCustomer = args.customerName === undefined
    ? `Ask the user which customer, then read \`${customer.uri}\` (or the template \`${customer.uriTemplate}\`) and find it.`
    : `Read \`${withQuery(customer.uri, "name", args.customerName)}\` (an exact name; otherwise read \`${customer.uri}\` and look).`
  const findProject = args.projectId === undefined
    ? `Then read \`${withQuery(project.uri, "customerId", "<customer id>")}\` and choose the project to quote in (its \`currencyId\` is the ` +
      "quote's default currency)."
    : `The project is ${args.projectId}: read \`${withQuery(project.uri, "customerId", "<customer id>")}\` to check it is the customer's ` +
      "(its `currencyId` is the quote's default currency)."
  const chooseTechnology = args.technologyId === undefined
    ? `2. How to make it. Read \`${technology.uri}\` and choose the technology.`
    : `2. How to make it. The technology is ${args.technologyId} (\`${technology.uri}\` lists it).`
  const chooseMaterial = args.materialId === undefined
    ? `   Read \`${withQuery(material.uri, "technologyId", "<technology id>")}\` and choose a material; its \`colours\` are the colours it comes in: ` +
      "take one's `id` as `colourId`, or leave `colourId` out."
    : `   The material is ${args.materialId}: read \`${withQuery(material.uri, "technologyId", "<technology id>")}\` for it; its \`colours\` are ` +
      "the colours it comes in: take one's `id` as `colourId`, or leave `colourId` out."
  const make = fromUrl
    ? [
      chooseTechnology,
      chooseMaterial,
      `   Read \`${withQuery(fields.uri, "technologyId", "<technology id>")}\`: each field not set takes its \`defaultValueId\`; to choose another, ` +
      "set `productionParameterIds[<field name>]` to one of the field's `values[].id`.",
      `   Optionally read \`${services.uri}\` and list, as \`serviceIds\`, services whose \`technologyIds\` include the technology.`
    ]
    : [
      `2. How to make it. The catalogue configuration ${args.catalogueModelConfigurationId} says it: its \`technologyId\`, ` +
      `\`materialId\`, \`colourId\` and \`productionParameterIds\` (read \`${catalogue.uri}\`, template \`${catalogue.uriTemplate}\`, ` +
      "to tell the user) are the part's."
    ]
  const partArguments = fromUrl
    ? `{"ticketId": "<ticket id>", "modelEndpoint": {"url": ${JSON.stringify(args.modelUrl)}}, "technologyId": "<technology id>", ` +
      `"materialId": "<material id>", "quantity": ${args.quantity}} plus \`colourId\`, \`productionParameterIds\` and \`serviceIds\` as chosen. ` +
      "The engine downloads the model file and analyses it"
    : `{"ticketId": "<ticket id>", "catalogueModelConfigurationId": ${JSON.stringify(args.catalogueModelConfigurationId)}, ` +
      `"quantity": ${args.quantity}}: the configuration brings the technology, material, colour, production parameters and ` +
      "services, and the part is priced as it says"
  return [
    `Quote ${args.quantity} × ${source} for ${who}, and send the quote. Take every id from this server's resources ` +
    "(resources/read); never guess one.",
    "",
    `1. Customer and project (order). ${findCustomer} ${findProject} The tools cannot create customers or ` +
    "projects: if none fits, ask the user, or create them with the REST API (POST /v1/customer, then POST /v1/project) when you " +
    "can call it, and read the resources again.",
    ...make,
    `3. Call ${tool("create_ticket")} with {"projectId": "<project id>", "name": "<what the request is>"}: the ticket (state \`draft\`) ` +
    "holds the part.",
    `4. Call ${tool("create_part")} with ${partArguments}.`,
    `5. Call ${tool("list_parts")} with {"ticketId": ["<ticket id>"]} until the part has its \`geometry\` and a \`totalPrice\` ` +
    `(not null): a part without a price cannot be quoted (${tool("create_ticket_quote")} answers 409 naming it).`,
    `6. Call ${tool("create_ticket_quote")} with {"ticketId": "<ticket id>"} (optionally \`currencyId\` from \`${currency.uri}\`, ` +
    "`validDays`, `notes`). It prices the ticket's parts into a quote and sends it: the quote's `state` is `sent` and the " +
    "ticket's `quoted`. Nothing else is needed to send it.",
    `7. To change the sent quote (a line's \`unitPrice\`, \`notes\`, \`validUntil\`), call ${tool("update_ticket_quote")} with the ` +
    `quote as read (${tool("list_ticket_quotes")} with {"ticketId": ["<ticket id>"]}), your changes and \`"state": "sent"\`: it ` +
    "stays sent. `accepted` and `rejected` are the customer's answer: set one only when the user says so.",
    "8. Tell the user the quote's `number`, `total`, currency and `validUntil`."
  ].join("\n")
}

/** The prompt: what `prompts/list` says of it, its arguments' Schema and its text. */
export const QUOTE_A_PART = {
  name: "quote_a_part",
  title: "Quote a part",
  description: "From a model file URL (or a catalogue model configuration) to a sent quote: the resources to read for the " +
    "customer, project, technology, material, colour and production parameters, then create_ticket, create_part, list_parts " +
    "(until the part is priced) and create_ticket_quote, which sends the quote.",
  arguments: QuoteAPartArguments,
  text: quoteAPartText
} as const
