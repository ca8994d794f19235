/** Customer: the company or person that orders parts (Customer 1–n Project). */
import { Schema } from "effect"
import { defineResource } from "../Resource.ts"

const Email = Schema.String.check(
  Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: "expected an e-mail address" }),
  Schema.isMaxLength(320)
).annotate({ examples: ["buyer@example.com"] })

const Text = (max: number) => Schema.String.check(Schema.isMaxLength(max))

export const Address = Schema.Struct({
  street: Schema.optional(Text(200)),
  postalCode: Schema.optional(Text(20)),
  city: Schema.optional(Text(100)),
  country: Schema.optional(Text(2).annotate({ description: "ISO 3166-1 alpha-2 code" }))
})

export const Customer = defineResource({
  name: "customer",
  path: "/customer",
  title: "Customer",
  fields: {
    name: Schema.NonEmptyString.check(Schema.isMaxLength(200)).annotate({ examples: ["Acme Robotics"] }),
    email: Email,
    phone: Schema.optional(Text(50)),
    company: Schema.optional(Text(200)),
    externalReference: Schema.optional(Text(200).annotate({
      description: "The integrator's own identifier for this customer"
    })),
    vatNumber: Schema.optional(Text(50)),
    address: Schema.optional(Address)
  },
  filters: ["name", "email", "externalReference"]
})
