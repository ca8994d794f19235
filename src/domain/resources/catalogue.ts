/**
 * Catalogues: a catalogue project holds models; each model carries one or
 * more configurations (technology, material, parameters) from which parts
 * are created (`POST /ticket-model` with `catalogueModelConfigurationId`,
 * or `POST /ticket-model/from-catalogue`).
 */
import { Schema } from "effect"
import { defineResource } from "../Resource.ts"
import { Name, Ref, Text } from "./fields.ts"
import { fileNameRule } from "./modelFileName.ts"
import { Geometry, ModelEndpoint } from "./modelFiles.ts"

export const ProductionParameterIds = Schema.Record(Schema.String, Schema.String).annotate({
  description: "Production parameter field `name` → the id of one of that field's `values`, for the production parameter fields of the " +
    "technology; a field left out takes its default value",
  examples: [{ layerHeight: "fdm-lh-0.2", infill: "fdm-infill-30" }]
})

export const CatalogueProject = defineResource({
  name: "catalogue",
  path: "/catalogue",
  title: "Catalogue project",
  fields: {
    name: Name,
    customerId: Schema.optional(Ref("customer")),
    description: Schema.optional(Text(2000))
  },
  filters: ["customerId", "name"],
  storage: { references: { customerId: "customer" } }
})

export const CatalogueConfiguration = Schema.Struct({
  id: Schema.optional(
    Schema.String.annotate({
      description:
        "Set by the engine when absent (kept on a replace); unique among the app's catalogue configurations; the `catalogueModelConfigurationId` of a part"
    })
  ),
  name: Schema.optional(Text(200)),
  technologyId: Ref("technology"),
  materialId: Ref("material"),
  colourId: Schema.optional(Ref("colour")),
  productionParameterIds: Schema.optional(ProductionParameterIds),
  serviceIds: Schema.optional(
    Schema.Array(Ref("post-processing service")).annotate({
      description: "Post-processing services of the parts made from the configuration, each one that applies to its technology",
      examples: [["sanding"]]
    })
  )
}).annotate({
  description: "A way to make the model: the material must be of the technology, the colour one of the material's colours (when it lists them), " +
    "each production parameter a field of the technology with one of its values, and each service one for the technology. A part made " +
    "from it takes all of these (a field left out of `productionParameterIds` its default value)"
})

export const CatalogueModel = defineResource({
  name: "catalogueModel",
  path: "/catalogue-model",
  title: "Catalogue model",
  fields: {
    catalogueId: Ref("catalogue project"),
    name: Name,
    modelEndpoint: ModelEndpoint,
    configurations: Schema.Array(CatalogueConfiguration)
  },
  computed: {
    geometry: Schema.NullOr(Geometry).annotate({
      description: "From the model file, analysed when the catalogue model is written; parts made from it share it. Null for a placeholder host"
    })
  },
  filters: ["catalogueId", "name"],
  storage: { references: { catalogueId: "catalogue" } },
  validate: (model) => fileNameRule(model.modelEndpoint)
})
