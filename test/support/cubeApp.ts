/**
 * What the pricing tests share: a 20 mm cube served by the test's file host,
 * the test app wired to fetch it, and a fresh app with a ticket, a PLA
 * material, FDM parts of that cube (analysed and priced) and FDM machines.
 */
import { Duration, Effect, Layer } from "effect"
import { modelFetcherLayer } from "../../src/engine/geometry/ModelFetcher.ts"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import type { Backend } from "./backends.ts"
import { FileHost, FileHostLive } from "./fileHost.ts"
import { appWithTicket, ok } from "./http.ts"
import { TestApp } from "./TestApp.ts"

const FILES = { "/cube.stl": binaryStl(box(20, 20, 20)) }

// The file host is on 127.0.0.1; `example` hosts stand for a model not analysed yet.
const fetcher = modelFetcherLayer({ allowPrivate: true, maxBytes: 1 << 20, timeout: Duration.seconds(5), maxRedirects: 0, placeholderHosts: ["example"] })

/** The test app on `backend`, fetching models from the file host that serves `/cube.stl`. */
export const cubeAppLayer = (backend: Backend) => Layer.merge(TestApp(backend, {}, { modelFetcher: fetcher }), FileHostLive(FILES))

export const MUNICH = { latitude: 48.14, longitude: 11.58 }

/** A fresh app (`prefix` names it) with a ticket and a PLA material. */
export const cubeApp = (prefix: string) =>
  Effect.gen(function*() {
    const host = (yield* FileHost).url
    const app = yield* appWithTicket(prefix)
    const { call, ticket } = app
    const material = ok(yield* call("POST", "/material", { name: "PLA", technologyId: "fdm" }), "material")
    /** A part's body: the cube in PLA on FDM, on the app's ticket unless another is named, from another model when `url` is given. */
    const partBody = (quantity: number, where: { readonly url?: string; readonly ticketId?: string } = {}) => ({
      ticketId: where.ticketId ?? ticket.id,
      name: "Cube",
      modelEndpoint: { url: where.url ?? `${host}/cube.stl` },
      technologyId: "fdm",
      materialId: material.id,
      quantity
    })
    /** The cube as a part of `quantity`, analysed and priced. */
    const part = (quantity: number) => Effect.map(call("POST", "/ticket-model", partBody(quantity)), (reply) => ok(reply, `part of ${quantity}`))
    /** `count` FDM machines in a new group (with `workingHours` when given). */
    const machines = (count: number, workingHours?: unknown) =>
      Effect.gen(function*() {
        const group = ok(
          yield* call("POST", "/machine-group", { name: "Printers", technologyId: "fdm", ...(workingHours === undefined ? {} : { workingHours }) }),
          "group"
        )
        for (let i = 0; i < count; i++) {
          ok(yield* call("POST", "/machine", { name: `P${i}`, technologyId: "fdm", machineGroupId: group.id, location: MUNICH }), "machine")
        }
        return group
      })
    return { ...app, material, partBody, part, machines }
  })
