/**
 * TCP connections to PostgreSQL whose writes within one turn of the event
 * loop leave in one system call.
 *
 * Under load, the requests read in one turn each send a statement (a read's
 * SELECT on the shared pipelined connection, the meter's INSERT), and each
 * was a write of its own: on loopback a write also runs the receiving side's
 * TCP processing, and these writes were the largest single cost of the
 * service's CPU per read. The first write of a turn still leaves at once;
 * the socket is corked for the ones after it and uncorked when the turn's
 * I/O callbacks are done (setImmediate), so they leave together, having
 * waited for those callbacks only: nothing waits for a timer.
 */
import * as Net from "node:net"
import { watchAnswers } from "./AnswerWatchdog.ts"

/**
 * The first write of a turn leaves at once (a lone statement waits for
 * nothing); the ones after it in the same turn are corked and leave together
 * once the turn's I/O callbacks are done.
 */
export const coalesceWrites = (socket: Net.Socket): Net.Socket => {
  const write = socket.write.bind(socket) as (...args: ReadonlyArray<unknown>) => boolean
  /** idle: no write this turn; sent: one went out; corked: later ones are held. */
  let state: "idle" | "sent" | "corked" = "idle"
  const endOfTurn = () => {
    if (state === "corked") socket.uncork()
    state = "idle"
  }
  socket.write = ((...args: ReadonlyArray<unknown>) => {
    if (state === "idle") {
      state = "sent"
      setImmediate(endOfTurn)
    } else if (state === "sent") {
      state = "corked"
      socket.cork()
    }
    return write(...args)
  }) as typeof socket.write
  return socket
}

/**
 * A connection to `host:port` as @effect/sql-pg opens one (no Nagle delay),
 * with its writes coalesced and, given `answerTimeoutMs`, closed when the
 * database stops answering (AnswerWatchdog.ts).
 */
export const coalescedConnection = (host: string, port: number, answerTimeoutMs?: number) => () => {
  const socket = coalesceWrites(Net.connect({ host, port, noDelay: true }))
  return answerTimeoutMs === undefined ? socket : watchAnswers(socket, answerTimeoutMs)
}
