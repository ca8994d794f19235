/**
 * Identifiers as an integrator types them: `GET /ticket/lookup` and
 * `GET /project/lookup` find a number whatever its letters' case
 * (`t-000001`); list filters on an e-mail address ignore case; an
 * `externalReference` that reads as one of the app's own numbers
 * (`T-000002`) is refused (422 naming it), so a lookup never finds the
 * wrong record. Another app's records stay out of sight.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { backends } from "../support/backends.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { type Reply, TestApp } from "../support/TestApp.ts"

const refused = (reply: Reply, status: number, type: string, ...includes: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, status, reply.text)
  const body = reply.json()
  assert.deepStrictEqual([body.code, body.type], [status, type], reply.text)
  for (const text of includes) assert.include(body.message, text)
}

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Identifiers (${backend})`, (it) => {
    it.effect("a lookup finds a ticket's or project's number in any case; an id and an external reference match exactly", () =>
      Effect.gen(function*() {
        const { call, project, ticket } = yield* appWithTicket("identifiers")
        assert.strictEqual(ticket.number, "T-000001")
        for (const identifier of ["T-000001", "t-000001"]) {
          assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${identifier}`), identifier).id, ticket.id)
        }
        assert.strictEqual(ok(yield* call("GET", `/project/lookup?identifier=${project.number.toLowerCase()}`), "project").id, project.id)
        const referenced = ok(yield* call("POST", "/ticket", { projectId: project.id, name: "Referenced", externalReference: "ERP-4711" }), "ticket")
        assert.strictEqual(ok(yield* call("GET", "/ticket/lookup?identifier=ERP-4711"), "reference").id, referenced.id)
        assert.strictEqual((yield* call("GET", "/ticket/lookup?identifier=erp-4711")).text, "", "a reference is the integrator's, exactly")
        assert.strictEqual((yield* call("GET", `/ticket/lookup?identifier=${ticket.id.toUpperCase()}`)).text, "", "an id exactly")

        // Another app's ticket T-000001 is not this app's.
        const other = yield* appWithTicket("identifiers-other")
        assert.strictEqual(other.ticket.number, "T-000001")
        assert.strictEqual(ok(yield* other.call("GET", "/ticket/lookup?identifier=t-000001"), "theirs").id, other.ticket.id)
      }))

    it.effect("an externalReference in the app's own number format is a 422 naming it, on create and replace", () =>
      Effect.gen(function*() {
        const { call, customer, project, ticket } = yield* appWithTicket("identifiers")
        for (const reference of ["T-000002", "t-000002", "T-1234567"]) {
          refused(
            yield* call("POST", "/ticket", { projectId: project.id, name: "Clash", externalReference: reference }),
            422,
            "ValidationError",
            `externalReference: ${reference}`,
            "ticket number"
          )
        }
        refused(
          yield* call("PUT", `/ticket/${ticket.id}`, { projectId: project.id, name: ticket.name, externalReference: "T-000002" }),
          422,
          "ValidationError",
          "externalReference: T-000002"
        )
        refused(
          yield* call("POST", "/project", { customerId: customer.id, name: "Clash", externalReference: "P-000009" }),
          422,
          "ValidationError",
          "externalReference: P-000009",
          "project number"
        )
        // What is not one of the resource's numbers is the integrator's own.
        for (const reference of ["P-000009", "T-42", "ERP-T-000002"]) {
          ok(yield* call("POST", "/ticket", { projectId: project.id, name: reference, externalReference: reference }), reference)
        }
        const tickets = ok(yield* call("GET", `/ticket/lookup?identifier=t-000002`), "the second ticket made")
        assert.strictEqual(tickets.number, "T-000002")
      }))

    it.effect("list filters on an e-mail address ignore case", () =>
      Effect.gen(function*() {
        const { call, customer } = yield* appWithTicket("identifiers")
        assert.strictEqual(customer.email, "buyer@acme.example")
        for (const email of ["buyer@acme.example", "Buyer@ACME.example"]) {
          assert.deepStrictEqual(ok(yield* call("GET", `/customer?email=${encodeURIComponent(email)}`), email).map((c: any) => c.id), [customer.id])
        }
        const mixed = ok(yield* call("POST", "/customer", { name: "Globex", email: "Supply@Globex.example" }), "customer")
        assert.deepStrictEqual(ok(yield* call("GET", "/customer?email=supply%40globex.example"), "lower").map((c: any) => c.id), [mixed.id])
        assert.strictEqual(mixed.email, "Supply@Globex.example", "stored as given")
        // Names are not e-mail addresses: they match exactly.
        assert.deepStrictEqual(ok(yield* call("GET", "/customer?name=globex"), "name"), [])
      }))
  })
}
