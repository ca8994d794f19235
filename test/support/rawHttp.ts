/**
 * HTTP/1.1 over a raw socket, for requests a normal client refuses to send
 * (repeated or non-ASCII Authorization headers) and for byte-level checks.
 */
import * as Net from "node:net"

export interface RawReply {
  readonly status: number
  /** Header lines as sent, lower-cased names, without the ones that vary by time or connection. */
  readonly headers: ReadonlyArray<string>
  readonly body: string
}

const VARYING = new Set(["date", "connection", "keep-alive", "x-request-id"])

export const rawRequest = (port: number, method: string, path: string, headerLines: ReadonlyArray<string | Buffer>) =>
  new Promise<RawReply>((resolve, reject) => {
    const socket = Net.connect({ port, host: "127.0.0.1" })
    const chunks: Array<Buffer> = []
    socket.setTimeout(10_000, () => socket.destroy(new Error("raw request timed out")))
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", reject)
    socket.on("end", () => {
      const text = Buffer.concat(chunks).toString("latin1")
      const [head = "", body = ""] = text.split("\r\n\r\n")
      const [statusLine = "", ...lines] = head.split("\r\n")
      resolve({
        status: Number(statusLine.split(" ")[1]),
        headers: lines
          .map((line) => {
            const colon = line.indexOf(":")
            return `${line.slice(0, colon).toLowerCase()}:${line.slice(colon + 1).trim()}`
          })
          .filter((line) => !VARYING.has(line.slice(0, line.indexOf(":"))))
          .sort(),
        body
      })
    })
    const head = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close"]
    socket.write(Buffer.concat([
      Buffer.from(head.join("\r\n") + "\r\n"),
      ...headerLines.map((line) => Buffer.concat([typeof line === "string" ? Buffer.from(line) : line, Buffer.from("\r\n")])),
      Buffer.from("\r\n")
    ]))
  })
