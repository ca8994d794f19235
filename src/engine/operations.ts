/**
 * Every operation the engine runs, in the shape of the public contract: the
 * record operations of each resource (crud.ts), and the workflows that
 * replace or complete them (orders.ts, production.ts). A group the contract
 * adds without its handler here is a type error.
 */
import { CatalogueProject } from "../domain/resources/catalogue.ts"
import { Customer } from "../domain/resources/Customer.ts"
import { MeetingNote, ProductionNote, Project } from "../domain/resources/orders.ts"
import { Pps } from "../domain/resources/production.ts"
import {
  Blank,
  Colour,
  PostProcessingService,
  ProductionParameterField,
  QuotationForm,
  QuotationFormRegion,
  Supplier,
  Technology,
  User
} from "../domain/resources/reference.ts"
import { recordHandlers } from "./crud.ts"
import { webhookHandlers } from "./events/handlers.ts"
import { modelFileHandlers } from "./modelFiles/handlers.ts"
import type { EngineHandlers } from "./Operation.ts"
import { orderHandlers } from "./orders.ts"
import { currencyHandlers } from "./pricing/exchangeRates.ts"
import { productionHandlers } from "./production.ts"

const { sendToProduction, ...production } = productionHandlers

export const engineHandlers: EngineHandlers = {
  ...orderHandlers,
  ...webhookHandlers,
  ...production,
  ticket: { ...orderHandlers.ticket, sendToProduction },
  blank: recordHandlers(Blank),
  catalogue: recordHandlers(CatalogueProject),
  colour: recordHandlers(Colour),
  currency: currencyHandlers,
  customer: recordHandlers(Customer),
  meetingNote: recordHandlers(MeetingNote),
  modelFile: modelFileHandlers,
  pps: recordHandlers(Pps),
  productionNote: recordHandlers(ProductionNote),
  productionParameterField: recordHandlers(ProductionParameterField),
  project: recordHandlers(Project),
  quotationForm: recordHandlers(QuotationForm),
  quotationFormRegion: recordHandlers(QuotationFormRegion),
  service: recordHandlers(PostProcessingService),
  supplier: recordHandlers(Supplier),
  technology: recordHandlers(Technology),
  user: recordHandlers(User)
}
