/**
 * The PostgreSQL connection's write coalescing (CoalescedSocket): within one
 * turn of the event loop the first write leaves at once and the rest leave
 * together at the turn's end; every byte arrives, in order.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Net from "node:net"
import type { AddressInfo } from "node:net"
import { coalescedConnection } from "../../src/adapters/storage/CoalescedSocket.ts"

/** A server that keeps what it receives; the client's system writes counted at the Writable's hooks. */
const connected = async () => {
  let received = ""
  const server = Net.createServer((socket) => socket.on("data", (chunk) => (received += chunk.toString())))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const socket = coalescedConnection("127.0.0.1", (server.address() as AddressInfo).port)()
  await new Promise<void>((resolve) => socket.once("connect", resolve))
  const sent: Array<number> = []
  const writeOne = socket._write.bind(socket)
  const writeMany = socket._writev!.bind(socket)
  socket._write = (chunk, encoding, callback) => {
    sent.push(1)
    writeOne(chunk, encoding, callback)
  }
  socket._writev = (chunks, callback) => {
    sent.push(chunks.length)
    writeMany(chunks, callback)
  }
  const close = () => {
    socket.destroy()
    server.close()
  }
  return { socket, sent, received: () => received, close }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))

describe("CoalescedSocket", () => {
  it("sends the first write of a turn at once and the others of the turn in one system write", async () => {
    const { close, received, sent, socket } = await connected()
    try {
      for (const part of ["a", "b", "c", "d"]) socket.write(part)
      expect(sent).toEqual([1])
      await nextTurn()
      expect(sent).toEqual([1, 3])

      // A later turn starts afresh: its lone write is not held.
      socket.write("e")
      expect(sent).toEqual([1, 3, 1])
      await nextTurn()
      expect(sent).toEqual([1, 3, 1])

      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(received()).toBe("abcde")
    } finally {
      close()
    }
  })

  it("end() sends what the turn held", async () => {
    const { close, received, socket } = await connected()
    try {
      socket.write("x")
      socket.write("y")
      // The second write of the turn is held...
      expect(socket.writableCorked).toBe(1)
      socket.end("z")
      // ...and end() lets it go at once, with the last bytes, without waiting for the turn's end.
      expect(socket.writableCorked).toBe(0)
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(received()).toBe("xyz")
    } finally {
      close()
    }
  })
})
