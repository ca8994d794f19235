/**
 * A TCP proxy in front of PostgreSQL that reads the frontend protocol, so a
 * drill can cut a connection at a chosen moment of a transaction: the COMMIT
 * of the next transaction that stores a keyed write's answer (an INSERT into
 * `engine_idempotency`):
 *
 *   - `after-commit`: the COMMIT reaches PostgreSQL and commits; its answer
 *     never reaches the service (both sockets closed once PostgreSQL answers
 *     it): the outcome, for the service, is unknown;
 *   - `before-commit`: the service sent the COMMIT, which never reaches
 *     PostgreSQL (the connection is cut instead): rolled back, but the
 *     service cannot tell this from the first case;
 *   - `in-transaction`: the connection is cut at the answer's INSERT, before
 *     the service sent any COMMIT: rolled back, as the service knows.
 *
 * Frontend messages after the startup are a type byte and an Int32 length;
 * statements are named by Parse (`P`: name, query) and run by Bind (`B`:
 * portal, statement name) or as a simple Query (`Q`).
 */
import * as Net from "node:net"

export type CutMode = "after-commit" | "before-commit" | "in-transaction"

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104

const cString = (buffer: Buffer, at: number): [string, number] => {
  const end = buffer.indexOf(0, at)
  return [buffer.toString("utf8", at, end), end + 1]
}

export interface PgProxy {
  readonly port: number
  /** Cuts the next connection whose transaction stores a keyed write's answer, as `mode` says; resolves once cut. */
  readonly arm: (mode: CutMode) => Promise<void>
  readonly close: () => Promise<void>
}

export const startPgProxy = async (target: { readonly host: string; readonly port: number }): Promise<PgProxy> => {
  let armed: { readonly mode: CutMode; readonly done: () => void } | undefined
  const sockets = new Set<Net.Socket>()

  const server = Net.createServer((client) => {
    const upstream = Net.connect(target.port, target.host)
    sockets.add(client).add(upstream)
    const cut = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on("error", cut)
    upstream.on("error", cut)
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())

    const names = new Map<string, string>()
    let pending = Buffer.alloc(0)
    let started = false
    let storesAnswer = false
    /** Set once this connection's COMMIT went through: PostgreSQL's answer to it is not relayed. */
    let swallowCommitAnswer: (() => void) | undefined

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
          if (/^\s*(BEGIN|ROLLBACK)\b/i.test(text)) storesAnswer = false
          const answerInsert = /INSERT INTO engine_idempotency/i.test(text)
          if (answerInsert) storesAnswer = true
          const commit = /^\s*COMMIT\b/i.test(text) && storesAnswer
          if (armed !== undefined && (armed.mode === "in-transaction" ? answerInsert : commit)) {
            const { mode, done } = armed
            armed = undefined
            if (mode !== "after-commit") {
              // What came before goes; this statement never does.
              for (const part of forward) upstream.write(part)
              setTimeout(() => {
                cut()
                done()
              }, 50)
              return
            }
            swallowCommitAnswer = () => {
              cut()
              done()
            }
          }
        }
        forward.push(message)
      }
      for (const part of forward) upstream.write(part)
    })

    let answers = Buffer.alloc(0)
    upstream.on("data", (chunk: Buffer) => {
      if (swallowCommitAnswer === undefined) {
        client.write(chunk)
        return
      }
      // Relay the answers up to PostgreSQL's CommandComplete of the COMMIT; then cut, that answer unsent.
      answers = Buffer.concat([answers, chunk])
      let relayed = 0
      while (answers.length - relayed >= 5) {
        const total = 1 + answers.readInt32BE(relayed + 1)
        if (answers.length - relayed < total) break
        const isCommitDone = answers[relayed] === 0x43 && cString(answers, relayed + 5)[0] === "COMMIT"
        if (isCommitDone) {
          client.write(answers.subarray(0, relayed))
          swallowCommitAnswer()
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
    arm: (mode) => new Promise<void>((resolve) => (armed = { mode, done: resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
