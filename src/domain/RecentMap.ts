/**
 * Per-key memory bounded by count: what an instance remembers of apps and
 * secrets (their budgets, leases, verified secrets) must not grow with the
 * number of tenants that ever called it.
 */

/**
 * Sets `key` to `value` as the most recent entry of `map`; past `max`
 * entries, the least recently set is dropped (it is read again when it is
 * next needed).
 */
export const setRecent = <K, V>(map: Map<K, V>, key: K, value: V, max: number): void => {
  map.delete(key)
  map.set(key, value)
  if (map.size > max) map.delete(map.keys().next().value!)
}
