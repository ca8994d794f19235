/**
 * MODEL_FETCH_* as an operator sets them on `npm start`: read once at start
 * (an invalid value stops the start, naming the variable), and the engine's
 * downloads follow them.
 */
import { assert, describe, it } from "@effect/vitest"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { binaryStl, box } from "../../src/engine/geometry/writers.ts"
import { ADMIN_TOKEN } from "../support/backends.ts"
import { failedStart, startService } from "../support/processes.ts"

describe("MODEL_FETCH_* on the service", () => {
  it("an invalid value stops the start with a message naming the variable", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "fetch-config-"))
    try {
      const { code, output } = await failedStart("src/main.ts", { DATA_DIR: dataDir, ADMIN_TOKEN, MODEL_FETCH_MAX_BYTES: "lots" })
      assert.notStrictEqual(code, 0)
      assert.include(output, "MODEL_FETCH_MAX_BYTES")
      assert.notInclude(output, "Listening on")
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  }, 40_000)

  it("the engine's downloads follow the configured limits", async () => {
    const file = Buffer.from(binaryStl(box(10, 10, 10)))
    const host = createServer((_request, response) => response.writeHead(200, { "content-length": file.length }).end(file))
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", () => resolve()))
    const url = `http://127.0.0.1:${(host.address() as AddressInfo).port}/cube.stl`
    const dataDir = await mkdtemp(join(tmpdir(), "fetch-config-"))
    const service = await startService({
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      MODEL_FETCH_ALLOW_PRIVATE: "true",
      MODEL_FETCH_MAX_BYTES: String(file.length - 1)
    })
    try {
      const secret = await fetch(`${service.base}/api/v1/secret`, {
        method: "POST",
        headers: { "x-admin-token": ADMIN_TOKEN, "content-type": "application/json" },
        body: JSON.stringify({ appId: "fetch-config", ipAddresses: ["0.0.0.0/0"] })
      }).then((response) => response.json() as Promise<{ value: string }>)
      const call = (path: string, body: unknown) =>
        fetch(`${service.base}/v1${path}`, {
          method: "POST",
          headers: { authorization: secret.value, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      const customer = await (await call("/customer", { name: "Acme", email: "a@acme.example" })).json() as { id: string }
      const project = await (await call("/project", { customerId: customer.id, name: "P" })).json() as { id: string }
      const ticket = await (await call("/ticket", { projectId: project.id, name: "T" })).json() as { id: string }
      const material = await (await call("/material", { name: "PLA", technologyId: "fdm" })).json() as { id: string }
      const part = await call("/ticket-model", { ticketId: ticket.id, modelEndpoint: { url }, technologyId: "fdm", materialId: material.id, quantity: 1 })
      assert.strictEqual(part.status, 422)
      assert.strictEqual(part.headers.get("x-error-source"), "model-fetcher")
      assert.include((await part.json() as { message: string }).message, "over the limit")
    } finally {
      await service.stop()
      host.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
