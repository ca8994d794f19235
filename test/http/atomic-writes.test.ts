/**
 * Operations that write several records keep all of them or none: a write
 * that fails in the middle (here a trigger refusing one resource's writes for
 * the test's app, as a constraint or an outage would) leaves what the
 * operation wrote before it undone, seen through the API afterwards.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { backends } from "../support/backends.ts"
import { FileHost, FileHostLive } from "../support/fileHost.ts"
import { appWithTicket, ok } from "../support/http.ts"
import { TestApp } from "../support/TestApp.ts"

/** Writes of `resource` by `appId` fail while the row is there (one statement each: they run as prepared statements). */
const FAILURE_TRIGGER = [
  "CREATE TABLE IF NOT EXISTS test_failing_write (app_id text NOT NULL, resource text NOT NULL)",
  `CREATE OR REPLACE FUNCTION test_fail_write() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF EXISTS (SELECT 1 FROM test_failing_write f WHERE f.app_id = NEW.app_id AND f.resource = NEW.resource) THEN
       RAISE EXCEPTION 'injected failure of a % write', NEW.resource;
     END IF;
     RETURN NEW;
   END $$`,
  "DROP TRIGGER IF EXISTS test_fail_write ON engine_record",
  "CREATE TRIGGER test_fail_write BEFORE INSERT OR UPDATE ON engine_record FOR EACH ROW EXECUTE FUNCTION test_fail_write()"
]

const installTrigger = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of FAILURE_TRIGGER) yield* sql.unsafe(statement)
})

/** Runs `effect` while writes of `resource` by `appId` fail. */
const whileFailing = <A, E, R>(appId: string, resource: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* installTrigger
    yield* sql`INSERT INTO test_failing_write (app_id, resource) VALUES (${appId}, ${resource})`
    return yield* effect.pipe(Effect.ensuring(Effect.orDie(sql`DELETE FROM test_failing_write WHERE app_id = ${appId}`)))
  })

const refused = (reply: { readonly status: number; readonly text: string }, what: string) =>
  assert.isAtLeast(reply.status, 500, `${what} should fail with the injected error: ${reply.status} ${reply.text}`)

const PART = { modelEndpoint: { url: "https://files.example/part.stl" }, technologyId: "fdm", quantity: 2 }

/** A real model file, for a part that is priced and so can be quoted (files on `*.example` stay placeholders). */
const FILES = { "/models/cube.stl": binaryStl(box(20, 20, 20)) }
const fetcher = modelFetcherLayer({ allowPrivate: true, timeout: Duration.seconds(5), placeholderHosts: ["example"] })

for (const backend of backends) {
  layer(Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES)), {
    timeout: 120_000,
    excludeTestServices: true
  })(`Atomic multi-record writes (${backend})`, (it) => {
    const withMaterial = (prefix: string) =>
      Effect.gen(function*() {
        const app = yield* appWithTicket(prefix)
        const material = ok(yield* app.call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
        return { ...app, part: { ...PART, ticketId: app.ticket.id, materialId: material.id } }
      })

    it.effect("a part and its first model version: neither when the version fails", () =>
      Effect.gen(function*() {
        const { appId, call, part, ticket } = yield* withMaterial("atomic-part")
        refused(yield* whileFailing(appId, "modelVersion", call("POST", "/ticket-model", part)), "part create")
        assert.deepStrictEqual(ok(yield* call("GET", `/ticket-model?ticketId=${ticket.id}`), "parts"), [])
        // Nothing stuck: the same create succeeds once the write works again.
        const created = ok(yield* call("POST", "/ticket-model", part), "part")
        assert.lengthOf(ok(yield* call("GET", `/model-version?ticketModelId=${created.id}`), "versions"), 1)
      }))

    it.effect("a part given a new model and its next model version: the part unchanged when the version fails", () =>
      Effect.gen(function*() {
        const { appId, call, part } = yield* withMaterial("atomic-replace")
        const created = ok(yield* call("POST", "/ticket-model", part), "part")
        const moved = { ...part, modelEndpoint: { url: "https://files.example/other.stl" } }
        refused(yield* whileFailing(appId, "modelVersion", call("PUT", `/ticket-model/${created.id}`, moved)), "part replace")
        const after = ok(yield* call("GET", `/ticket-model/${created.id}`), "part")
        assert.strictEqual(after.modelEndpoint.url, "https://files.example/part.stl")
        assert.lengthOf(ok(yield* call("GET", `/model-version?ticketModelId=${created.id}`), "versions"), 1)
      }))

    it.effect("sending to production: no service job and the ticket's state kept when a PPS record fails", () =>
      Effect.gen(function*() {
        const { appId, call, part, ticket } = yield* withMaterial("atomic-send")
        // Only an accepted ticket goes to production: a priced part, quoted, the quote accepted.
        const host = yield* FileHost
        ok(yield* call("POST", "/ticket-model", { ...part, modelEndpoint: { url: `${host.url}/models/cube.stl` } }), "part")
        const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
        const { currencyId, lines, validUntil } = quote
        ok(yield* call("PUT", `/ticket-quote/${quote.id}`, { ticketId: ticket.id, currencyId, validUntil, lines, state: "accepted" }), "accept")
        refused(yield* whileFailing(appId, "pps", call("PUT", `/ticket/${ticket.id}/send-to-production`)), "send to production")
        assert.deepStrictEqual(ok(yield* call("GET", `/service-job?ticketId=${ticket.id}`), "jobs"), [])
        assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "accepted")
      }))

    it.effect("a merge: the PPS records stay with their job when the jobs' own writes fail", () =>
      Effect.gen(function*() {
        const { appId, call, part } = yield* withMaterial("atomic-merge")
        const [p1, p2] = [ok(yield* call("POST", "/ticket-model", part), "p1"), ok(yield* call("POST", "/ticket-model", part), "p2")]
        const target = ok(yield* call("POST", "/service-job", { name: "Target", technologyId: "fdm", ticketModelIds: [p1.id] }), "target")
        const source = ok(yield* call("POST", "/service-job", { name: "Source", technologyId: "fdm", ticketModelIds: [p2.id] }), "source")
        const merge = call("PUT", "/service-job/merge", { targetServiceJobId: target.id, sourceServiceJobIds: [source.id] })
        refused(yield* whileFailing(appId, "serviceJob", merge), "merge")
        const pps = ok(yield* call("GET", `/pps?ticketModelId=${p2.id}`), "pps")
        assert.strictEqual(pps[0].serviceJobId, source.id)
        assert.strictEqual(ok(yield* call("GET", `/service-job/${source.id}`), "source").state, "queued")
      }))

    it.effect("the last PPS record done: the record not done when the job's move to done fails", () =>
      Effect.gen(function*() {
        const { appId, call, part } = yield* withMaterial("atomic-done")
        const p1 = ok(yield* call("POST", "/ticket-model", part), "part")
        const job = ok(yield* call("POST", "/service-job", { name: "Job", technologyId: "fdm", ticketModelIds: [p1.id] }), "job")
        ok(yield* call("PUT", `/service-job/${job.id}/timeline/start`), "start")
        const [pps] = ok(yield* call("GET", `/pps?serviceJobId=${job.id}`), "pps")
        const done = call("PUT", `/service-job/${job.id}/production/${pps.id}`, { state: "done", producedQuantity: 2, scrappedQuantity: 0 })
        refused(yield* whileFailing(appId, "serviceJob", done), "production done")
        assert.strictEqual(ok(yield* call("GET", `/pps/${pps.id}`), "pps").state, "planned")
        assert.strictEqual(ok(yield* call("GET", `/service-job/${job.id}`), "job").state, "running")
      }))

    it.effect("a service job and its PPS records: neither when a PPS record fails", () =>
      Effect.gen(function*() {
        const { appId, call, part } = yield* withMaterial("atomic-job")
        const p1 = ok(yield* call("POST", "/ticket-model", part), "part")
        const create = call("POST", "/service-job", { name: "Job", technologyId: "fdm", ticketModelIds: [p1.id] })
        refused(yield* whileFailing(appId, "pps", create), "service job create")
        assert.deepStrictEqual(ok(yield* call("GET", "/service-job"), "jobs"), [])
      }))

    it.effect("accepting a quote: the ticket not moved to accepted when the quote's own write fails", () =>
      Effect.gen(function*() {
        const { appId, call, ticket } = yield* withMaterial("atomic-quote")
        ok(yield* call("POST", "/item", { ticketId: ticket.id, name: "Setup fee", quantity: 1, unitPrice: 50 }), "item")
        const quote = ok(yield* call("POST", `/ticket/${ticket.id}/quote`, {}), "quote")
        const { currencyId, lines, ticketId, validUntil } = quote
        const accept = call("PUT", `/ticket-quote/${quote.id}`, { ticketId, currencyId, validUntil, lines, state: "accepted" })
        refused(yield* whileFailing(appId, "ticketQuote", accept), "quote accept")
        assert.strictEqual(ok(yield* call("GET", `/ticket/lookup?identifier=${ticket.id}`), "ticket").state, "quoted")
        assert.strictEqual(ok(yield* call("GET", `/ticket-quote/${quote.id}`), "quote").state, "sent")
      }))
  })
}
