/** Groups of the catalogue: catalogue projects and their models, and the price breaks of a model's configuration. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/Errors.ts"
import { CatalogueModel, CatalogueProject } from "../../domain/resources/catalogue.ts"
import { CatalogueConfigurationPriceBreaks, PriceBreaksRequest } from "../../domain/resources/priceBreaks.ts"
import { COMMON_ERRORS, create, get, IdParam, list, remove, replace, tag } from "../endpoints.ts"

/** What every write of a catalogue model checks. */
const MODEL_RULES = "A url that does not end in a model file name needs `modelEndpoint.fileName` (400 naming it). Each configuration " +
  "without an `id` gets one, and ids are unique among the app's configurations (409 naming the configuration held by another model, " +
  "422 for one given twice). Per configuration: its technology, material and colour must exist (422 naming " +
  "`configurations.<i>.<field>`), the material must be of the technology and the colour one of the material's `colourIds` when it " +
  "lists them (422 naming `configurations.<i>.materialId` or `.colourId`), and each production parameter a field of the technology " +
  "with one of its values (422 naming `configurations.<i>.productionParameterIds.<name>`). The model file is analysed when new."

export const CatalogueGroup = HttpApiGroup.make("catalogue").add(create(CatalogueProject))
  .annotateMerge(tag("Catalogue project", "Catalogue projects: collections of catalogue models, optionally for one customer."))
export const CatalogueModelGroup = HttpApiGroup.make("catalogueModel")
  .add(
    list(CatalogueModel),
    create(CatalogueModel).annotate(OpenApi.Description, `${MODEL_RULES} Answers the created model, with its \`id\`.`),
    get(CatalogueModel),
    replace(CatalogueModel).annotate(
      OpenApi.Description,
      `Whole-record replacement: a configuration sent with its \`id\` keeps it (parts refer to it). ${MODEL_RULES}`
    ),
    remove(CatalogueModel),
    HttpApiEndpoint.post("configurationPriceBreaks", "/catalogue-model-configuration/:id/price-breaks", {
      params: IdParam,
      payload: PriceBreaksRequest,
      success: CatalogueConfigurationPriceBreaks,
      error: [...COMMON_ERRORS, NotFound]
    }).annotate(OpenApi.Summary, "Price a catalogue configuration at several quantities").annotate(
      OpenApi.Description,
      "`id` is a configuration's `id` (a part's `catalogueModelConfigurationId`). Prices the configuration at each of `quantities` (1 to 20 " +
        "distinct), answered in that order, as a part made from it would be priced (`POST /ticket-model/from-catalogue`: its technology, " +
        "material and production parameters, its catalogue model's geometry, no post-processing), so each break is what such a part " +
        "reads at that quantity, in EUR; lead times and `expedite` as for a part's price breaks. Reads only; no event is written. A " +
        "configuration whose catalogue model has no geometry (a placeholder host) is a 409 naming it; one the app cannot see (another " +
        "app's) a 404. docs/pricing.md, \"Price breaks\"."
    )
  )
  .annotateMerge(tag("Catalogue model", "Models of a catalogue, each with configurations (technology, material, parameters) from which parts are created."))
