/** Whose call this is: every record belongs to one app; the request id names the call in the engine's errors and logs. */
export interface CallScope {
  readonly appId: string
  readonly requestId: string
}

/** An operation's input where its endpoint is known only at run time: the parts its schemas decoded. */
export interface DecodedInput {
  readonly params?: unknown
  readonly query?: unknown
  readonly payload?: unknown
}
