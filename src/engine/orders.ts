/**
 * The orders engine: how tickets, parts, quotes, catalogue models and items
 * are completed when stored, and the order workflows (quotes and their
 * states, cancelling a ticket, parts from a catalogue, similarity, price
 * breaks of parts and catalogue configurations, machining strategies, post-processing, model fields). See
 * docs/workflows-orders.md.
 */
import { Effect } from "effect"
import { appOfDataSpace, modeOfDataSpace } from "../domain/Grants.ts"
import { ModelVersion } from "../domain/resources/orders.ts"
import type { AppSettings } from "../domain/resources/reference.ts"
import { recordHandlers } from "./crud.ts"
import type { EngineHandlers, GroupHandlers } from "./Operation.ts"
import { catalogueModelHandlers } from "./orders/catalogueModels.ts"
import { configurationPriceBreaks } from "./orders/configurationPriceBreaks.ts"
import { itemHandlers } from "./orders/items.ts"
import { fieldsResolve } from "./orders/modelVersions.ts"
import { partHandlers } from "./orders/parts.ts"
import { priceBreaks } from "./orders/priceBreaks.ts"
import { ticketQuoteHandlers } from "./orders/quotes.ts"
import { similarity } from "./orders/similarity.ts"
import { ticketHandlers } from "./orders/tickets.ts"
import { BASE_CURRENCY } from "./pricing/money.ts"

/** The order groups' handlers; the ticket's `sendToProduction` is production's. */
export type OrderHandlers =
  & Pick<EngineHandlers, "app" | "item" | "catalogueModel" | "ticketModel" | "modelVersion" | "ticketQuote">
  & { readonly ticket: Omit<GroupHandlers<"ticket">, "sendToProduction"> }

const versions = recordHandlers(ModelVersion)

/** `GET /app`: the settings of the caller's app; its currency is the base currency every price and rate is in. */
const getApp: GroupHandlers<"app">["get"] = (context) =>
  Effect.succeed<typeof AppSettings.Type>({
    id: appOfDataSpace(context.appId),
    name: appOfDataSpace(context.appId),
    defaultCurrency: BASE_CURRENCY,
    measurementUnit: "mm",
    timeZone: "UTC",
    mode: modeOfDataSpace(context.appId)
  })

export const orderHandlers: OrderHandlers = {
  app: { get: getApp },
  item: itemHandlers,
  catalogueModel: { ...catalogueModelHandlers, configurationPriceBreaks },
  ticketModel: { ...partHandlers, similarity, priceBreaks },
  modelVersion: { list: versions.list, get: versions.get, fieldsResolve },
  ticketQuote: ticketQuoteHandlers,
  ticket: ticketHandlers
}
