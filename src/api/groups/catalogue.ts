/** Groups of the catalogue: catalogue projects and their models. */
import { HttpApiGroup, OpenApi } from "effect/http-api"
import { CatalogueModel, CatalogueProject } from "../../domain/resources/catalogue.ts"
import { create, get, list, remove, replace, tag } from "../endpoints.ts"

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
    remove(CatalogueModel)
  )
  .annotateMerge(tag("Catalogue model", "Models of a catalogue, each with configurations (technology, material, parameters) from which parts are created."))
