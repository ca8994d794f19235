/** Groups of the catalogue: catalogue projects and their models. */
import { HttpApiGroup } from "effect/http-api"
import { CatalogueModel, CatalogueProject } from "../../domain/resources/catalogue.ts"
import { create, get, list, remove, replace, tag } from "../endpoints.ts"

export const CatalogueGroup = HttpApiGroup.make("catalogue").add(create(CatalogueProject))
  .annotateMerge(tag("Catalogue project", "Catalogue projects: collections of catalogue models, optionally for one customer."))
export const CatalogueModelGroup = HttpApiGroup.make("catalogueModel")
  .add(list(CatalogueModel), create(CatalogueModel), get(CatalogueModel), replace(CatalogueModel), remove(CatalogueModel))
  .annotateMerge(tag("Catalogue model", "Models of a catalogue, each with configurations (technology, material, parameters) from which parts are created."))
