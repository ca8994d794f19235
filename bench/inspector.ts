/**
 * A minimal Chrome DevTools Protocol client for a node process started with
 * `--inspect=127.0.0.1:0`: what bench/memory.ts reads inside the service and
 * its database process (JS heap, WebAssembly memory, heap snapshots).
 */

/** The inspector URLs a process (and its children, on the same stderr) printed: `Debugger listening on ws://…`. */
export const inspectorUrls = (output: string): Array<string> => [
  ...new Set([...output.matchAll(/Debugger listening on (ws:\/\/\S+)/g)].map((match) => match[1]!))
]

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
}

export interface Inspector {
  readonly send: <A = unknown>(method: string, params?: Record<string, unknown>) => Promise<A>
  /** Calls `listener` with each event `method`'s params until the returned function is called. */
  readonly on: (method: string, listener: (params: any) => void) => () => void
  /** `expression`'s value (JSON-serialisable), evaluated in the process's main context. */
  readonly evaluate: <A>(expression: string) => Promise<A>
  readonly close: () => void
}

export const connectInspector = (url: string): Promise<Inspector> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(url)
    const pending = new Map<number, Pending>()
    const listeners = new Map<string, Set<(params: any) => void>>()
    let nextId = 1
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as {
        readonly id?: number
        readonly method?: string
        readonly params?: unknown
        readonly result?: unknown
        readonly error?: { readonly message: string }
      }
      if (message.id !== undefined) {
        const waiting = pending.get(message.id)
        pending.delete(message.id)
        if (message.error !== undefined) waiting?.reject(new Error(message.error.message))
        else waiting?.resolve(message.result)
      } else if (message.method !== undefined) {
        for (const listener of listeners.get(message.method) ?? []) listener(message.params)
      }
    })
    socket.addEventListener("close", () => {
      for (const waiting of pending.values()) waiting.reject(new Error("the inspector closed"))
      pending.clear()
    })
    socket.addEventListener("error", () => reject(new Error(`cannot connect to the inspector at ${url}`)))
    const send = <A>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<A>((resolve, reject) => {
        const id = nextId++
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
        socket.send(JSON.stringify({ id, method, params }))
      })
    socket.addEventListener("open", () =>
      resolve({
        send,
        on: (method, listener) => {
          const set = listeners.get(method) ?? new Set()
          listeners.set(method, set)
          set.add(listener)
          return () => set.delete(listener)
        },
        evaluate: async <A>(expression: string) => {
          const reply = await send<{ readonly result: { readonly value: A }; readonly exceptionDetails?: { readonly text: string } }>(
            "Runtime.evaluate",
            { expression, returnByValue: true, awaitPromise: true }
          )
          if (reply.exceptionDetails !== undefined) throw new Error(`${expression}: ${reply.exceptionDetails.text}`)
          return reply.result.value
        },
        close: () => socket.close()
      }))
  })
