/**
 * A TCP proxy in front of PostgreSQL that reads the frontend protocol, so a
 * drill can cut a connection at a chosen moment of a write. Which write:
 * `answer`, a keyed one, at the INSERT of its answer (`engine_idempotency`);
 * `record`, any one, at the INSERT of its record (`engine_record`), in a
 * transaction or committed on its own. When:
 *
 *   - `after-commit`: the COMMIT of the transaction that ran that INSERT
 *     reaches PostgreSQL and commits; its answer never reaches the service
 *     (both sockets closed once PostgreSQL answers it): the outcome, for the
 *     service, is unknown;
 *   - `before-commit`: the service sent that COMMIT, which never reaches
 *     PostgreSQL (the connection is cut instead): rolled back, but the
 *     service cannot tell this from the first case;
 *   - `after-statement`: the INSERT reaches PostgreSQL, which runs it (and
 *     commits it, outside a transaction); its answer never reaches the
 *     service;
 *   - `before-statement`: the connection is cut at the INSERT, which never
 *     reaches PostgreSQL: rolled back, or never run.
 *
 * `refuseConnections` cuts every connection but the meter's (one that wrote
 * `meter_event`) and refuses new ones, so the request path's next statement
 * fails to connect: nothing of it is sent.
 *
 * Frontend messages after the startup are a type byte and an Int32 length;
 * statements are named by Parse (`P`: name, query) and run by Bind (`B`:
 * portal, statement name) or as a simple Query (`Q`).
 */
import * as Net from "node:net"

export type CutMode = "after-commit" | "before-commit" | "after-statement" | "before-statement"
export type CutWrite = "answer" | "record"

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104

const INSERTS: Record<CutWrite, RegExp> = { answer: /INSERT INTO engine_idempotency/i, record: /INSERT INTO engine_record/i }

const cString = (buffer: Buffer, at: number): [string, number] => {
  const end = buffer.indexOf(0, at)
  return [buffer.toString("utf8", at, end), end + 1]
}

export interface PgProxy {
  readonly port: number
  /** Cuts the next connection that runs `write`'s INSERT, as `mode` says; resolves once cut. */
  readonly arm: (mode: CutMode, write?: CutWrite) => Promise<void>
  /** Cuts every connection but the meter's, and refuses new ones until `acceptConnections`. */
  readonly refuseConnections: () => void
  readonly acceptConnections: () => void
  readonly close: () => Promise<void>
}

export const startPgProxy = async (target: { readonly host: string; readonly port: number }): Promise<PgProxy> => {
  let armed: { readonly mode: CutMode; readonly insert: RegExp; readonly done: () => void } | undefined
  let refusing = false
  const sockets = new Set<Net.Socket>()
  /** Each open connection's cut, and whether it is the meter's. */
  const connections = new Map<Net.Socket, { readonly cut: () => void; meter: boolean }>()

  const server = Net.createServer((client) => {
    if (refusing) {
      client.destroy()
      return
    }
    const upstream = Net.connect(target.port, target.host)
    sockets.add(client).add(upstream)
    const cut = () => {
      client.destroy()
      upstream.destroy()
    }
    const connection = { cut, meter: false }
    connections.set(client, connection)
    client.on("error", cut)
    upstream.on("error", cut)
    client.on("close", () => {
      connections.delete(client)
      upstream.destroy()
    })
    upstream.on("close", () => client.destroy())

    const names = new Map<string, string>()
    let pending = Buffer.alloc(0)
    let started = false
    /** Whether this connection's transaction ran the armed INSERT. */
    let ranInsert = false
    /** Set once the statement to cut after went through: PostgreSQL's answer to it (its CommandComplete `tag`) is not relayed. */
    let swallowAnswer: { readonly tag: string; readonly cut: () => void } | undefined

    client.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      const forward: Array<Buffer> = []
      while (true) {
        if (!started) {
          if (pending.length < 8) break
          const length = pending.readInt32BE(0)
          if (pending.length < length) break
          const code = pending.readInt32BE(4)
          if (code !== SSL_REQUEST && code !== GSS_REQUEST) started = true
          forward.push(pending.subarray(0, length))
          pending = pending.subarray(length)
          continue
        }
        if (pending.length < 5) break
        const total = 1 + pending.readInt32BE(1)
        if (pending.length < total) break
        const message = pending.subarray(0, total)
        pending = pending.subarray(total)
        const type = String.fromCharCode(message[0]!)
        let text: string | undefined
        if (type === "P") {
          const [name, next] = cString(message, 5)
          const [query] = cString(message, next)
          names.set(name, query)
          text = query
        } else if (type === "B") {
          const [, next] = cString(message, 5)
          text = names.get(cString(message, next)[0])
        } else if (type === "Q") {
          text = cString(message, 5)[0]
        }
        if (text !== undefined && type !== "P") {
          if (/meter_event/i.test(text)) connection.meter = true
          if (/^\s*(BEGIN|ROLLBACK)\b/i.test(text)) ranInsert = false
          const insert = armed !== undefined && armed.insert.test(text)
          if (insert) ranInsert = true
          const commit = /^\s*COMMIT\b/i.test(text) && ranInsert
          const statementMode = armed?.mode === "after-statement" || armed?.mode === "before-statement"
          if (armed !== undefined && (statementMode ? insert : commit)) {
            const { mode, done } = armed
            armed = undefined
            if (mode === "before-commit" || mode === "before-statement") {
              // What came before goes; this statement never does.
              for (const part of forward) upstream.write(part)
              setTimeout(() => {
                cut()
                done()
              }, 50)
              return
            }
            swallowAnswer = {
              tag: mode === "after-commit" ? "COMMIT" : "INSERT",
              cut: () => {
                cut()
                done()
              }
            }
          }
        }
        forward.push(message)
      }
      for (const part of forward) upstream.write(part)
    })

    let answers = Buffer.alloc(0)
    upstream.on("data", (chunk: Buffer) => {
      if (swallowAnswer === undefined) {
        client.write(chunk)
        return
      }
      // Relay the answers up to PostgreSQL's CommandComplete of the statement; then cut, that answer unsent.
      answers = Buffer.concat([answers, chunk])
      let relayed = 0
      while (answers.length - relayed >= 5) {
        const total = 1 + answers.readInt32BE(relayed + 1)
        if (answers.length - relayed < total) break
        const isDone = answers[relayed] === 0x43 && cString(answers, relayed + 5)[0].split(" ")[0] === swallowAnswer.tag
        if (isDone) {
          client.write(answers.subarray(0, relayed))
          swallowAnswer.cut()
          return
        }
        relayed += total
      }
      client.write(answers.subarray(0, relayed))
      answers = answers.subarray(relayed)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as Net.AddressInfo).port,
    arm: (mode, write = "answer") => new Promise<void>((resolve) => (armed = { mode, insert: INSERTS[write], done: resolve })),
    refuseConnections: () => {
      refusing = true
      for (const { cut, meter } of connections.values()) if (!meter) cut()
    },
    acceptConnections: () => {
      refusing = false
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
