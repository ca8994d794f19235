/**
 * Issue 16, item 4: a strong ETag on every record read, 304 for If-None-Match,
 * and If-Match on PUT and DELETE (412 when stale, with the current ETag), in
 * the lost-update recipe docs/integration.md gives.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { RecordRepository } from "../../src/engine/RecordRepository.ts"
import { backends } from "../support/backends.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { type Reply, TestApp } from "../support/TestApp.ts"

const STRONG_TAG = /^"[A-Za-z0-9_-]{43}"$/

const tagOf = (reply: Reply) => {
  const tag = reply.headers.get("etag")
  assert.match(tag ?? "", STRONG_TAG, `a strong ETag: ${tag}`)
  return tag!
}

const stale = (reply: Reply) => {
  assert.strictEqual(reply.status, 412, reply.text)
  assert.strictEqual(reply.json().type, "PreconditionFailed")
}

for (const backend of backends) {
  layer(TestApp(backend), { timeout: 60_000, excludeTestServices: true })(`Conditional requests (${backend})`, (it) => {
    it.effect("a read carries a strong ETag of its bytes; If-None-Match with it is a 304 without a body, until the record changes", () =>
      Effect.gen(function*() {
        const { call, customer } = yield* appWithTicket("etag")
        const read = yield* call("GET", `/customer/${customer.id}`)
        const tag = tagOf(read)
        assert.strictEqual(tagOf(yield* call("GET", `/customer/${customer.id}`)), tag, "the same representation, the same tag")

        const cached = yield* call.withHeaders("GET", `/customer/${customer.id}`, { "if-none-match": tag })
        assert.strictEqual(cached.status, 304)
        assert.strictEqual(cached.text, "")
        assert.strictEqual(cached.headers.get("etag"), tag)
        assert.strictEqual((yield* call.withHeaders("GET", `/customer/${customer.id}`, { "if-none-match": `"other", W/${tag}` })).status, 304)

        const replaced = yield* call("PUT", `/customer/${customer.id}`, { ...read.json(), name: "Renamed" })
        const newTag = tagOf(replaced)
        assert.notStrictEqual(newTag, tag)
        const fresh = yield* call.withHeaders("GET", `/customer/${customer.id}`, { "if-none-match": tag })
        assert.strictEqual(fresh.status, 200)
        assert.strictEqual(tagOf(fresh), newTag, "a replace answers the tag a read then gives")
      }))

    it.effect("the lost-update recipe: the second writer with the old ETag gets 412 and the current ETag; nothing is overwritten", () =>
      Effect.gen(function*() {
        const { call, customer } = yield* appWithTicket("etag")
        const read = yield* call("GET", `/customer/${customer.id}`)
        const tag = tagOf(read)
        const first = yield* call.withHeaders("PUT", `/customer/${customer.id}`, { "if-match": tag }, { ...read.json(), name: "First" })
        assert.strictEqual(first.status, 200, first.text)
        const second = yield* call.withHeaders("PUT", `/customer/${customer.id}`, { "if-match": tag }, { ...read.json(), name: "Second" })
        stale(second)
        assert.strictEqual(second.headers.get("etag"), tagOf(first))
        assert.strictEqual(ok(yield* call("GET", `/customer/${customer.id}`), "read").name, "First")

        // Read again, reapply, retry: it goes through.
        const again = yield* call("GET", `/customer/${customer.id}`)
        const retried = yield* call.withHeaders("PUT", `/customer/${customer.id}`, { "if-match": tagOf(again) }, { ...again.json(), name: "Second" })
        assert.strictEqual(retried.status, 200, retried.text)
        assert.strictEqual(retried.json().name, "Second")
      }))

    it.effect("DELETE honours If-Match; `*` matches any current version and a missing record fails it", () =>
      Effect.gen(function*() {
        const { call } = yield* appWithTicket("etag")
        const pla = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        stale(yield* call.withHeaders("DELETE", `/material/${pla.id}`, { "if-match": "\"not-the-tag\"" }))
        assert.strictEqual(ok(yield* call("GET", `/material/${pla.id}`), "still there").id, pla.id)
        const removed = yield* call.withHeaders("DELETE", `/material/${pla.id}`, { "if-match": "*" })
        assert.strictEqual(removed.status, 200, removed.text)
        stale(yield* call.withHeaders("DELETE", `/material/${pla.id}`, { "if-match": "*" }))
      }))

    it.effect("a write between the check and the change is refused by the engine (412), not lost", () =>
      Effect.gen(function*() {
        const { appId, call, customer } = yield* appWithTicket("etag")
        const read = yield* call("GET", `/customer/${customer.id}`)
        // The record moves on behind the gateway's back, keeping its representation but not its version.
        const records = yield* RecordRepository
        const stored = yield* records.find("customer", appId, customer.id)
        yield* records.replace("customer", appId, customer.id, { ...stored!, name: customer.name })
        const changed = ok(yield* call("GET", `/customer/${customer.id}`), "read")
        assert.notStrictEqual(changed.updatedAt, customer.updatedAt)
        const reply = yield* call.withHeaders("PUT", `/customer/${customer.id}`, { "if-match": tagOf(read) }, { ...read.json(), name: "Lost?" })
        stale(reply)
      }).pipe(Effect.provide(RecordRepository.layer)))

    it.effect("a ticket (read by lookup) and its workflow PUTs honour If-Match; a write with no record to compare is a 400", () =>
      Effect.gen(function*() {
        const { call, ticket } = yield* appWithTicket("etag")
        const read = yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`)
        const tag = tagOf(read)
        stale(yield* call.withHeaders("PUT", `/ticket/${ticket.id}/cancel`, { "if-match": "\"old\"" }))
        const cancelled = yield* call.withHeaders("PUT", `/ticket/${ticket.id}/cancel`, { "if-match": tag })
        assert.strictEqual(cancelled.status, 200, cancelled.text)
        const merge = yield* call.withHeaders("PUT", "/service-job/merge", { "if-match": tag }, { targetServiceJobId: "a", sourceServiceJobIds: ["b"] })
        assert.strictEqual(merge.status, 400, merge.text)
        assert.include(merge.json().message, "If-Match")
      }))
  })
}
