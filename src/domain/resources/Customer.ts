/** Customer: the company or person that orders parts (Customer 1–n Project). */
import { Schema } from "effect"
import { defineResource } from "../Resource.ts"
import { Email } from "./fields.ts"

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))

export const Address = Schema.Struct({
  street: Schema.optional(Text(200).annotate({ examples: ["Hauptstraße 1"] })),
  postalCode: Schema.optional(Text(20).annotate({ examples: ["10115"] })),
  city: Schema.optional(Text(100).annotate({ examples: ["Berlin"] })),
  country: Schema.optional(Text(2).annotate({ description: "ISO 3166-1 alpha-2 code", examples: ["DE"] }))
})

export const Customer = defineResource({
  name: "customer",
  path: "/customer",
  title: "Customer",
  fields: {
    name: Schema.NonEmptyString.check(Schema.isMaxLength(200)).annotate({ examples: ["Acme Robotics"] }),
    email: Email,
    phone: Schema.optional(Text(50).annotate({ examples: ["+49 30 1234567"] })),
    company: Schema.optional(Text(200).annotate({ examples: ["Acme Robotics GmbH"] })),
    externalReference: Schema.optional(
      Text(200).annotate({
        description: "The integrator's own identifier for this customer",
        examples: ["CRM-1042"]
      })
    ),
    vatNumber: Schema.optional(Text(50).annotate({ examples: ["DE123456789"] })),
    address: Schema.optional(Address)
  },
  filters: ["name", "email", "externalReference"]
})
