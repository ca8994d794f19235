/** Groups of the reference data: technologies, currencies, colours, services, materials, forms, blanks, app. */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  AppSettings, Blank, Colour, Currency, Material, MaterialSeries, PostProcessingService, ProductionParameterField,
  QuotationForm, QuotationFormRegion, Supplier, Technology, User
} from "../../domain/resources/reference.ts"
import { IncomingSecretAuth } from "../Authorization.ts"
import { COMMON_ERRORS, create, get, list, remove, replace } from "../endpoints.ts"


export const AppGroup = HttpApiGroup.make("app")
  .add(
    HttpApiEndpoint.get("get", "/app", { success: AppSettings, error: COMMON_ERRORS })
      .annotate(OpenApi.Summary, "Get the app settings")
  )
  .middleware(IncomingSecretAuth)

export const BlankGroup = HttpApiGroup.make("blank")
  .add(list(Blank), create(Blank), get(Blank)).middleware(IncomingSecretAuth)
export const ColourGroup = HttpApiGroup.make("colour").add(list(Colour), get(Colour)).middleware(IncomingSecretAuth)
export const CurrencyGroup = HttpApiGroup.make("currency").add(list(Currency), get(Currency)).middleware(IncomingSecretAuth)
export const MaterialSeriesGroup = HttpApiGroup.make("materialSeries")
  .add(list(MaterialSeries), get(MaterialSeries), replace(MaterialSeries), remove(MaterialSeries))
  .middleware(IncomingSecretAuth)
export const MaterialGroup = HttpApiGroup.make("material")
  .add(list(Material), create(Material), get(Material), replace(Material), remove(Material))
  .middleware(IncomingSecretAuth)
export const ProductionParameterFieldGroup = HttpApiGroup.make("productionParameterField")
  .add(list(ProductionParameterField)).middleware(IncomingSecretAuth)
export const QuotationFormRegionGroup = HttpApiGroup.make("quotationFormRegion")
  .add(
    list(QuotationFormRegion), create(QuotationFormRegion), get(QuotationFormRegion),
    replace(QuotationFormRegion), remove(QuotationFormRegion)
  )
  .middleware(IncomingSecretAuth)
export const QuotationFormGroup = HttpApiGroup.make("quotationForm")
  .add(list(QuotationForm), get(QuotationForm)).middleware(IncomingSecretAuth)
export const ServiceGroup = HttpApiGroup.make("service")
  .add(list(PostProcessingService), get(PostProcessingService)).middleware(IncomingSecretAuth)
export const SupplierGroup = HttpApiGroup.make("supplier").add(list(Supplier), get(Supplier)).middleware(IncomingSecretAuth)
export const TechnologyGroup = HttpApiGroup.make("technology").add(list(Technology), get(Technology)).middleware(IncomingSecretAuth)
export const UserGroup = HttpApiGroup.make("user").add(list(User), get(User)).middleware(IncomingSecretAuth)

