/**
 * A PostgreSQL connection that stops answering is closed, so that its
 * statements fail (an outage: 503) and the pool opens a new one when the
 * database answers again.
 *
 * A database behind a network that drops its packets (a "black hole": the
 * connection stays open, nothing comes back) never fails a statement by
 * itself: TCP keepalive probes do not start while sent data waits for its
 * acknowledgement, and @effect/sql-pg has no statement timeout of its own.
 * So a socket that was written to and has received nothing since, for
 * DATABASE_QUERY_TIMEOUT, is destroyed. A statement whose answer is still
 * arriving (the first bytes came) is left to finish; the next statement sent
 * on the connection starts the watch again.
 *
 * The watch begins once the service has started (`startWatching`), so that a
 * migration waiting for another instance's lock is not cut short.
 */
import type * as Net from "node:net"

let watching = false

/** From now on, connections that stop answering are closed. */
export const startWatching = () => {
  watching = true
}

/** An error whose code the outage logs and `/ready` name in words. */
class NoAnswer extends Error {
  readonly code = "ETIMEDOUT"
}

/** `socket`, destroyed once it has waited `timeoutMs` for an answer to what it sent. */
export const watchAnswers = (socket: Net.Socket, timeoutMs: number): Net.Socket => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const disarm = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
  }
  const write = socket.write.bind(socket) as (...args: ReadonlyArray<unknown>) => boolean
  socket.write = ((...args: ReadonlyArray<unknown>) => {
    if (timer === undefined && watching) {
      timer = setTimeout(() => socket.destroy(new NoAnswer(`the database did not answer within ${timeoutMs} ms`)), timeoutMs)
      timer.unref()
    }
    return write(...args)
  }) as typeof socket.write
  socket.on("data", disarm)
  socket.once("close", disarm)
  return socket
}
