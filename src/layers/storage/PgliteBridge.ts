/**
 * Serves one embedded PGlite database to many PostgreSQL wire-protocol
 * connections, so the same `@effect/sql-pg` client (and so the same SQL,
 * migrations and driver behaviour) is used for PGlite and for PostgreSQL.
 *
 * PGlite is a single backend session. The bridge therefore runs one batch of
 * protocol messages at a time and, while a connection has a transaction open,
 * serves only that connection, so transactions of different connections never
 * interleave. A connection that goes away inside its transaction is rolled back.
 */
import type { PGlite } from "@electric-sql/pglite"
import { Duplex } from "node:stream"

const SSL_REQUEST_CODE = 80877103
const CANCEL_REQUEST_CODE = 80877102
const PROTOCOL_3 = 196608
const ROLLBACK = simpleQuery("ROLLBACK")

interface Batch {
  readonly connection: number
  readonly bytes: Uint8Array
  readonly reply: (bytes: Uint8Array) => void
  readonly fail: (error: Error) => void
}

export class PgliteBridge {
  private readonly queue: Array<Batch> = []
  private running = false
  /** The connection whose transaction is open, if any. */
  private owner: number | undefined = undefined
  private nextConnection = 1

  readonly db: PGlite

  constructor(db: PGlite) {
    this.db = db
  }

  /** A new wire-protocol connection to the shared database. */
  connect(): Duplex {
    const id = this.nextConnection++
    const splitter = new MessageSplitter()
    // The stream's own methods run with the stream as `this`.
    const enqueue = (batch: Batch) => this.enqueue(batch)
    const release = () => this.release(id)
    const duplex = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        const { messages, immediate } = splitter.push(chunk)
        if (immediate.length > 0) duplex.push(immediate)
        if (messages.length === 0) return callback()
        enqueue({
          connection: id,
          bytes: messages,
          reply: (bytes) => {
            if (bytes.length > 0 && !duplex.destroyed) duplex.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length))
          },
          fail: (error) => duplex.destroy(error)
        })
        callback()
      },
      final(callback) {
        release()
        duplex.push(null)
        callback()
      },
      destroy(error, callback) {
        release()
        callback(error)
      }
    })
    return duplex
  }

  private enqueue(batch: Batch) {
    this.queue.push(batch)
    if (!this.running) void this.drain()
  }

  /** Drops a closed connection's queued work and ends its open transaction. */
  private release(connection: number) {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i]!.connection === connection) this.queue.splice(i, 1)
    }
    if (this.owner === connection) {
      this.enqueue({ connection, bytes: ROLLBACK, reply: () => {}, fail: () => {} })
    }
  }

  private next(): Batch | undefined {
    if (this.owner === undefined) return this.queue.shift()
    const index = this.queue.findIndex((batch) => batch.connection === this.owner)
    return index === -1 ? undefined : this.queue.splice(index, 1)[0]
  }

  private async drain() {
    this.running = true
    try {
      let batch: Batch | undefined
      while ((batch = this.next()) !== undefined) {
        try {
          const reply = await this.db.execProtocolRaw(batch.bytes)
          this.owner = this.db.isInTransaction() ? batch.connection : undefined
          batch.reply(reply)
        } catch (error) {
          this.owner = this.db.isInTransaction() ? batch.connection : undefined
          batch.fail(error instanceof Error ? error : new Error(String(error)))
        }
      }
    } finally {
      this.running = false
    }
  }
}

/**
 * Splits the bytes a client sent into complete protocol messages (handed to
 * PGlite) and a remainder. Before startup, SSL requests are answered "no" at
 * once and cancel requests dropped (PGlite has no backend process to signal).
 */
class MessageSplitter {
  private started = false
  private pending: Buffer = Buffer.alloc(0)

  push(chunk: Buffer): { messages: Buffer; immediate: Buffer } {
    const buffer = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    const kept: Array<Buffer> = []
    const immediate: Array<Buffer> = []
    let offset = 0
    while (true) {
      const available = buffer.length - offset
      if (!this.started) {
        if (available < 8) break
        const length = buffer.readInt32BE(offset)
        const code = buffer.readInt32BE(offset + 4)
        if (available < length) break
        if (code === SSL_REQUEST_CODE) immediate.push(Buffer.from("N"))
        else if (code !== CANCEL_REQUEST_CODE) {
          if (code === PROTOCOL_3) this.started = true
          kept.push(buffer.subarray(offset, offset + length))
        }
        offset += length
      } else {
        if (available < 5) break
        const length = 1 + buffer.readInt32BE(offset + 1)
        if (available < length) break
        kept.push(buffer.subarray(offset, offset + length))
        offset += length
      }
    }
    this.pending = buffer.subarray(offset)
    return {
      messages: kept.length === 1 ? kept[0]! : Buffer.concat(kept),
      immediate: Buffer.concat(immediate)
    }
  }
}

function simpleQuery(text: string): Uint8Array {
  const body = Buffer.from(text + "\0", "utf8")
  const message = Buffer.alloc(5 + body.length)
  message.write("Q", 0, "ascii")
  message.writeInt32BE(4 + body.length, 1)
  body.copy(message, 5)
  return message
}
