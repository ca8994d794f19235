/**
 * What the gateway hands the engine for one call of a public operation:
 * whose call it is, and the input as the endpoint's schemas decoded it.
 */
/** Whose call this is: every record belongs to one app. */
export interface CallScope {
  readonly appId: string
  readonly requestId: string
}

/** An operation's input, as the gateway decoded it from the HTTP request. */
export interface EngineRequest {
  readonly params?: Readonly<Record<string, unknown>> | undefined
  readonly query?: Readonly<Record<string, unknown>> | undefined
  readonly payload?: unknown
}
