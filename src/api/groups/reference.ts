/** Groups of the reference data: technologies, currencies, colours, services, materials, forms, blanks, app. */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  AppSettings,
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
} from "../../domain/resources/reference.ts"
import { COMMON_ERRORS, create, get, list, remove, replace, tag } from "../endpoints.ts"

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
export const CurrencyGroup = HttpApiGroup.make("currency").add(list(Currency), get(Currency))
  .annotateMerge(
    tag(
      "Currency",
      "Currencies (global reference data): their minor unit, and the reference exchange rate to the base currency, EUR. " +
        "An app gives its own rate per quote (`exchangeRate` of POST /ticket/{ticketId}/quote)."
    )
  )
export const MaterialSeriesGroup = HttpApiGroup.make("materialSeries")
  .add(list(MaterialSeries), get(MaterialSeries), replace(MaterialSeries), remove(MaterialSeries))
  .annotateMerge(tag("Material series", "Series of materials of a technology."))
export const MaterialGroup = HttpApiGroup.make("material")
  .add(list(Material), create(Material), get(Material), replace(Material), remove(Material))
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
