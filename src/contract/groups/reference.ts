/** Groups of the reference data: technologies, currencies, colours, services, materials, forms, blanks, app. */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
import {
  AppSettings,
  Blank,
  Colour,
  Currency,
  ExchangeRateRequest,
  Material,
  MaterialSeries,
  PostProcessingService,
  ProductionParameterField,
  QuotationForm,
  QuotationFormRegion,
  Supplier,
  Technology,
  User
} from "../../domain/resources/reference.ts"
import { COMMON_ERRORS, create, get, IdParam, list, recordOf, remove, replace, replaceOrCreate, tag } from "../endpoints.ts"

export const AppGroup = HttpApiGroup.make("app")
  .add(
    HttpApiEndpoint.get("get", "/app", { success: AppSettings, error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Get the app settings")
  )
  .annotateMerge(tag("App", "The settings of the caller's app."))

export const BlankGroup = HttpApiGroup.make("blank")
  .add(list(Blank), create(Blank), get(Blank))
  .annotateMerge(tag("Blank", "Stock blanks: material and dimensions."))
export const ColourGroup = HttpApiGroup.make("colour").add(list(Colour), get(Colour))
  .annotateMerge(tag("Colour", "Colours (global reference data)."))
export const CurrencyGroup = HttpApiGroup.make("currency")
  .add(
    list(Currency),
    get(Currency),
    HttpApiEndpoint.put("setExchangeRate", "/currency/:id/exchange-rate", {
      params: IdParam,
      payload: ExchangeRateRequest,
      success: recordOf(Currency),
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Set the app's exchange rate of a currency").annotate(
      OpenApi.Description,
      "Replaces the engine's reference rate of the currency for the caller's app: `exchangeRate` units of it per 1 EUR. " +
        "GET /currency and GET /currency/{id} then answer the app's rate (other apps keep theirs), and a quote in the currency " +
        "without an `exchangeRate` of its own converts at it; quotes already made keep the rate they recorded. EUR is the base " +
        "currency: a rate other than 1 is a 422 naming `exchangeRate`; a currency that does not exist is a 404. A PUT of the " +
        "reference rate sets it back. Answers the currency as the app now reads it."
    )
  )
  .annotateMerge(
    tag(
      "Currency",
      "Currencies (global reference data): their minor unit, and the exchange rate to the base currency, EUR: the engine's " +
        "reference rate, or the app's own (PUT /currency/{id}/exchange-rate). A quote may give its own (`exchangeRate` of " +
        "POST /ticket/{ticketId}/quote)."
    )
  )
export const MaterialSeriesGroup = HttpApiGroup.make("materialSeries")
  .add(list(MaterialSeries), get(MaterialSeries), replaceOrCreate(MaterialSeries), remove(MaterialSeries))
  .annotateMerge(tag("Material series", "Series of materials of a technology."))
export const MaterialGroup = HttpApiGroup.make("material")
  .add(
    list(Material),
    create(Material),
    get(Material),
    replace(Material).annotate(
      OpenApi.Description,
      "Whole-record replacement; the record as read is accepted. A material is of its series' technology; its `technologyId` " +
        "cannot change while parts, catalogue configurations or loaded reels use it, nor can `colourIds` drop a colour a part or " +
        "configuration of it uses (422 naming the field and what uses it)."
    ),
    remove(Material)
  )
  .annotateMerge(tag("Material", "Materials of a technology: density, price per kg, colours."))
export const ProductionParameterFieldGroup = HttpApiGroup.make("productionParameterField")
  .add(list(ProductionParameterField))
  .annotateMerge(
    tag("Production parameter field", "Parameters of a technology (e.g. layer height) and their values: the keys of a part's `productionParameterIds`.")
  )
export const QuotationFormRegionGroup = HttpApiGroup.make("quotationFormRegion")
  .add(
    list(QuotationFormRegion),
    create(QuotationFormRegion),
    get(QuotationFormRegion),
    replace(QuotationFormRegion),
    remove(QuotationFormRegion)
  )
  .annotateMerge(tag("Quotation form region", "Regions of a quotation form: countries, currency and price factor."))
export const QuotationFormGroup = HttpApiGroup.make("quotationForm")
  .add(list(QuotationForm), get(QuotationForm))
  .annotateMerge(tag("Quotation form", "Quotation forms of a technology (global reference data)."))
export const ServiceGroup = HttpApiGroup.make("service")
  .add(list(PostProcessingService), get(PostProcessingService))
  .annotateMerge(tag("Post-processing service", "Post-processing services and their prices (global reference data)."))
export const SupplierGroup = HttpApiGroup.make("supplier").add(list(Supplier), get(Supplier))
  .annotateMerge(tag("Supplier", "Suppliers of the app."))
export const TechnologyGroup = HttpApiGroup.make("technology").add(list(Technology), get(Technology))
  .annotateMerge(tag("Technology", "Manufacturing technologies: FDM, SLA, SLS, MJF, CNC milling (global reference data)."))
export const UserGroup = HttpApiGroup.make("user").add(list(User), get(User))
  .annotateMerge(tag("User", "Users of the app and their roles."))
