/**
 * What the HTTP request says about its caller: the presented secret and the
 * client address. Only the socket peer is believed, unless it is a trusted
 * proxy, whose `X-Forwarded-For` then names the client.
 */
import type { HttpServerRequest } from "effect/http"
import type { IncomingMessage } from "node:http"
import { type IpRange, isAllowed } from "../../domain/IpAllowList.ts"

/** Longer values are malformed whatever they contain. */
const MAX_CREDENTIAL_LENGTH = 256
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/
const BEARER = /^bearer +/i

type Presented = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly cause: "missing" | "duplicate-header" | "malformed" }

const authorizationValues = (request: HttpServerRequest.HttpServerRequest): ReadonlyArray<string> => {
  const source = request.source as Partial<IncomingMessage>
  // Node keeps only the first of repeated Authorization headers: count them in the raw list.
  if (Array.isArray(source.rawHeaders)) {
    const values: Array<string> = []
    const raw = source.rawHeaders
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === "authorization") values.push(raw[i + 1]!)
    }
    return values
  }
  const single = request.headers["authorization"]
  return single === undefined ? [] : [single]
}

/** The secret value from `Authorization: <SECRET>` or `Authorization: Bearer <SECRET>`. */
export const presentedSecret = (request: HttpServerRequest.HttpServerRequest): Presented => {
  const values = authorizationValues(request)
  if (values.length === 0) return { ok: false, cause: "missing" }
  if (values.length > 1) return { ok: false, cause: "duplicate-header" }
  const header = values[0]!.trim()
  if (header.length === 0) return { ok: false, cause: "missing" }
  const value = header.replace(BEARER, "")
  if (value.length === 0 || value.length > MAX_CREDENTIAL_LENGTH || !PRINTABLE_ASCII.test(value)) {
    return { ok: false, cause: "malformed" }
  }
  return { ok: true, value }
}

/**
 * The client's address: the socket peer; behind a trusted proxy, the
 * right-most `X-Forwarded-For` entry that is not itself a trusted proxy.
 */
export const clientAddress = (
  request: HttpServerRequest.HttpServerRequest,
  trustedProxies: ReadonlyArray<IpRange>
): string => {
  const peer = request.remoteAddress._tag === "Some" ? request.remoteAddress.value : ""
  if (trustedProxies.length === 0 || !isAllowed(trustedProxies, peer)) return peer
  const forwarded = request.headers["x-forwarded-for"]
  if (forwarded === undefined) return peer
  const hops = forwarded.split(",").map((hop) => hop.trim()).filter((hop) => hop.length > 0)
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!isAllowed(trustedProxies, hops[i]!)) return hops[i]!
  }
  return hops[0] ?? peer
}
