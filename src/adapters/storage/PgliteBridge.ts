/**
 * Serves one embedded PGlite database to many PostgreSQL wire-protocol
 * connections, so the same `@effect/sql-pg` client (and so the same SQL,
 * migrations and driver behaviour) is used for PGlite and for PostgreSQL.
 *
 * PGlite is a single backend session. The bridge therefore runs one batch of
 * protocol messages at a time and, while a connection has a transaction open,
 * serves only that connection, so transactions of different connections never
 * interleave. A connection that goes away inside its transaction is rolled back,
 * and the statements it prepared under a name are closed (the session would
 * otherwise keep them for good).
 * Closing refuses new work and waits for the batch PGlite is running, so the
 * database is closed between batches, never inside one.
 */
import type { PGlite } from "@electric-sql/pglite"
import { Duplex } from "node:stream"

const SSL_REQUEST_CODE = 80877103
const CANCEL_REQUEST_CODE = 80877102
const PROTOCOL_3 = 196608
const ROLLBACK = simpleQuery("ROLLBACK")
const CLOSING = new Error("the embedded database is closing")

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
  private closed = false
  /** The drain running now, if any. */
  private draining: Promise<void> | undefined = undefined

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
    const release = () => this.release(id, splitter.statements)
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

  /** Refuses new batches, fails the queued ones, and resolves once the batch running now is done. */
  close(): Promise<void> {
    this.closed = true
    for (const batch of this.queue.splice(0)) batch.fail(CLOSING)
    return this.draining ?? Promise.resolve()
  }

  private enqueue(batch: Batch) {
    if (this.closed) return batch.fail(CLOSING)
    this.queue.push(batch)
    if (!this.running) this.draining = this.drain()
  }

  /** Drops a closed connection's queued work, ends its open transaction and closes the statements it prepared. */
  private release(connection: number, statements: Set<string>) {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i]!.connection === connection) this.queue.splice(i, 1)
    }
    const rollback = this.owner === connection ? ROLLBACK : new Uint8Array(0)
    const closes = closeStatements(statements)
    statements.clear()
    if (rollback.length + closes.length === 0) return
    this.enqueue({ connection, bytes: Buffer.concat([rollback, closes]), reply: () => {}, fail: () => {} })
  }

  private next(): Batch | undefined {
    if (this.owner === undefined) return this.queue.shift()
    const index = this.queue.findIndex((batch) => batch.connection === this.owner)
    return index === -1 ? undefined : this.queue.splice(index, 1)[0]
  }

  /**
   * One batch through PGlite: what Postgres answered, as it wrote it.
   * `execProtocolRaw` would also parse every message of the answer into
   * objects it keeps until the next `execProtocol` call, which the bridge
   * never makes: every row ever read stayed on the heap, and parsing it cost
   * CPU for nothing. Collecting the bytes as they are written does neither.
   */
  private async execute(bytes: Uint8Array): Promise<Uint8Array> {
    const chunks: Array<Uint8Array> = []
    // A chunk is a view of PGlite's memory, which the next write reuses: copied.
    await this.db.execProtocolRawStream(bytes, { onRawData: (chunk) => chunks.push(chunk.slice()) })
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
  }

  private async drain() {
    this.running = true
    try {
      let batch: Batch | undefined
      while ((batch = this.next()) !== undefined) {
        try {
          const reply = await this.execute(batch.bytes)
          this.owner = this.db.isInTransaction() ? batch.connection : undefined
          batch.reply(reply)
        } catch (error) {
          this.owner = this.db.isInTransaction() ? batch.connection : undefined
          batch.fail(error instanceof Error ? error : new Error(String(error)))
        }
      }
    } finally {
      this.running = false
      this.draining = undefined
    }
  }
}

/** Message types after which the client waits for the server: a batch may end there (Terminate is dropped). */
const SYNC = 0x53
const QUERY = 0x51
const TERMINATE = 0x58
const FLUSH = 0x48
const COPY_DONE = 0x63
const COPY_FAIL = 0x66
const BATCH_ENDS = new Set([SYNC, QUERY, FLUSH, COPY_DONE, COPY_FAIL])
const PARSE = 0x50
const CLOSE = 0x43
const STATEMENT = 0x53

/**
 * Splits the bytes a client sent into batches for PGlite: the complete
 * messages up to the last one after which the client waits for the server
 * (Sync, a simple Query, ...), the rest kept for the next chunk. A batch thus
 * never ends inside a statement's Parse/Bind/Execute, whose unnamed statement
 * and portal another connection's batch would replace in between (it is one
 * session); a socket may deliver a large write in pieces. Before startup, SSL
 * requests are answered "no" at once and cancel requests dropped (PGlite has
 * no backend process to signal). It notes the statements the connection
 * prepares under a name and closes, so that the ones left are closed when it
 * goes away.
 */
class MessageSplitter {
  private started = false
  private pending: Buffer = Buffer.alloc(0)
  /** Named statements this connection has prepared and not closed. */
  readonly statements = new Set<string>()

  push(chunk: Buffer): { messages: Buffer; immediate: Buffer } {
    const buffer = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    const startup: Array<Buffer> = []
    const immediate: Array<Buffer> = []
    let offset = 0
    while (!this.started) {
      const available = buffer.length - offset
      if (available < 8) break
      const length = buffer.readInt32BE(offset)
      const code = buffer.readInt32BE(offset + 4)
      if (available < length) break
      if (code === SSL_REQUEST_CODE) immediate.push(Buffer.from("N"))
      else if (code !== CANCEL_REQUEST_CODE) {
        if (code === PROTOCOL_3) this.started = true
        startup.push(buffer.subarray(offset, offset + length))
      }
      offset += length
    }
    const from = offset
    let through = offset
    const named: Array<number> = []
    let terminated = false
    while (this.started && buffer.length - offset >= 5) {
      const type = buffer[offset]!
      const length = 1 + buffer.readInt32BE(offset + 1)
      if (buffer.length - offset < length) break
      // The client's last message: PGlite would end its one session for every connection. Its end is `release`.
      if (type === TERMINATE) {
        terminated = true
        break
      }
      if (type === PARSE || (type === CLOSE && buffer[offset + 5] === STATEMENT)) named.push(offset)
      offset += length
      if (BATCH_ENDS.has(type)) through = offset
    }
    for (const at of named) {
      if (at >= through) break
      if (buffer[at] === PARSE) {
        const name = cString(buffer, at + 5)
        if (name !== "") this.statements.add(name)
      } else this.statements.delete(cString(buffer, at + 6))
    }
    this.pending = terminated ? Buffer.alloc(0) : buffer.subarray(this.started ? through : offset)
    const batch = buffer.subarray(from, through)
    return {
      messages: startup.length === 0 ? batch : Buffer.concat([...startup, batch]),
      immediate: Buffer.concat(immediate)
    }
  }
}

const cString = (buffer: Buffer, at: number) => buffer.toString("utf8", at, buffer.indexOf(0, at))

/** Closes the named statements (and Sync): for a connection that went away. */
const closeStatements = (names: Iterable<string>): Uint8Array => {
  const messages: Array<Buffer> = []
  for (const name of names) {
    const body = Buffer.from(name + "\0", "utf8")
    const message = Buffer.alloc(6 + body.length)
    message.writeUInt8(CLOSE, 0)
    message.writeInt32BE(5 + body.length, 1)
    message.writeUInt8(STATEMENT, 5)
    body.copy(message, 6)
    messages.push(message)
  }
  return messages.length === 0 ? new Uint8Array(0) : Buffer.concat([...messages, Buffer.from([SYNC, 0, 0, 0, 4])])
}

function simpleQuery(text: string): Uint8Array {
  const body = Buffer.from(text + "\0", "utf8")
  const message = Buffer.alloc(5 + body.length)
  message.write("Q", 0, "ascii")
  message.writeInt32BE(4 + body.length, 1)
  body.copy(message, 5)
  return message
}
