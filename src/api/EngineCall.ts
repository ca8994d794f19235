/**
 * A write's precondition (`If-Match`): the record it changes must still be at
 * the version the client saw, its `updatedAt`. The engine checks it with the
 * record's row locked, in the write's transaction, so no other write can slip
 * in between the check and the change.
 */
export interface WritePrecondition {
  readonly id: string
  readonly updatedAt: string
}

/** Whose call this is: every record belongs to one app; the request id names the call in the engine's errors and logs. */
export interface CallScope {
  readonly appId: string
  readonly requestId: string
  readonly precondition?: WritePrecondition | undefined
}

/** An operation's input where its endpoint is known only at run time: the parts its schemas decoded. */
export interface DecodedInput {
  readonly params?: unknown
  readonly query?: unknown
  readonly payload?: unknown
}
