/** Every operation the engine runs: the record operations of each resource, and the workflows. */
import { CatalogueModel, CatalogueProject } from "../domain/resources/catalogue.ts"
import { Customer } from "../domain/resources/Customer.ts"
import { Item, MeetingNote, ModelVersion, ProductionNote, Project, Ticket, TicketModel, TicketQuote } from "../domain/resources/orders.ts"
import { Machine, MachineGroup, Pps, Reel, ServiceJob } from "../domain/resources/production.ts"
import {
  Blank,
  Colour,
  Currency,
  Material,
  MaterialSeries,
  PostProcessingService,
  ProductionParameterField,
  QuotationForm,
  QuotationFormRegion,
  Supplier,
  Technology,
  User
} from "../domain/resources/reference.ts"
import { crudOperations, type RecordHooks } from "./crud.ts"
import type { Operations } from "./Operation.ts"
import { orderHooks, orderWorkflows } from "./orders.ts"
import { productionHooks, productionWorkflows } from "./production.ts"

/** Resources whose records the generic operations serve. */
export const RESOURCES = [
  Blank,
  CatalogueModel,
  CatalogueProject,
  Colour,
  Currency,
  Customer,
  Item,
  Machine,
  MachineGroup,
  Material,
  MaterialSeries,
  MeetingNote,
  ModelVersion,
  PostProcessingService,
  Pps,
  ProductionNote,
  ProductionParameterField,
  Project,
  QuotationForm,
  QuotationFormRegion,
  Reel,
  ServiceJob,
  Supplier,
  Technology,
  Ticket,
  TicketModel,
  TicketQuote,
  User
] as const

const hooks: Readonly<Record<string, RecordHooks>> = { ...orderHooks, ...productionHooks }

export const engineOperations: Operations = {
  ...Object.assign({}, ...RESOURCES.map((resource) => crudOperations(resource, hooks[resource.name]))),
  // Workflows, and record operations that differ from the generic ones, replace them.
  ...orderWorkflows,
  ...productionWorkflows
}
