/**
 * A V8 heap snapshot (`.heapsnapshot`, as DevTools writes it) summarised for
 * bench/memory.ts: the self size by constructor (or by kind for strings,
 * code, closures...), and for the largest single objects the path that
 * holds them from the root (the first found, breadth first, weak edges
 * skipped), so "what is this 10 MB array and who keeps it" has an answer
 * without opening DevTools.
 */
import { readFileSync } from "node:fs"

interface RawSnapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: ReadonlyArray<string>
      readonly node_types: readonly [ReadonlyArray<string>, ...Array<unknown>]
      readonly edge_fields: ReadonlyArray<string>
      readonly edge_types: readonly [ReadonlyArray<string>, ...Array<unknown>]
    }
  }
  readonly nodes: ReadonlyArray<number>
  readonly edges: ReadonlyArray<number>
  readonly strings: ReadonlyArray<string>
}

export interface SnapshotGroup {
  readonly name: string
  readonly count: number
  readonly selfBytes: number
}

export interface HeldObject {
  readonly name: string
  readonly selfBytes: number
  /** From the object up to the root: `edge name → holder`, nearest first. */
  readonly path: ReadonlyArray<string>
}

export interface SnapshotSummary {
  readonly totalBytes: number
  readonly objects: number
  readonly groups: ReadonlyArray<SnapshotGroup>
  readonly largest: ReadonlyArray<HeldObject>
}

/** Objects are grouped by constructor; the rest by kind (every string together, every closure...). */
const groupName = (type: string, name: string) => {
  switch (type) {
    case "object":
    case "native":
      return name
    case "hidden":
    case "array":
    case "object shape":
      return `(${type}) ${name.replace(/\s*\/\s*\S+$/, "").slice(0, 60)}`
    case "concatenated string":
    case "sliced string":
    case "string":
      return "(strings)"
    default:
      return `(${type})`
  }
}

export const summarizeSnapshot = (file: string, top = 25, largest = 10): SnapshotSummary => {
  const raw = JSON.parse(readFileSync(file, "utf8")) as RawSnapshot
  const { meta } = raw.snapshot
  const nodeFieldCount = meta.node_fields.length
  const typeField = meta.node_fields.indexOf("type")
  const nameField = meta.node_fields.indexOf("name")
  const sizeField = meta.node_fields.indexOf("self_size")
  const edgeCountField = meta.node_fields.indexOf("edge_count")
  const edgeFieldCount = meta.edge_fields.length
  const edgeTypeField = meta.edge_fields.indexOf("type")
  const edgeNameField = meta.edge_fields.indexOf("name_or_index")
  const edgeToField = meta.edge_fields.indexOf("to_node")
  const nodeTypes = meta.node_types[0]
  const edgeTypes = meta.edge_types[0]
  const { nodes, edges, strings } = raw
  const nodeCount = nodes.length / nodeFieldCount

  const nodeName = (node: number) => {
    const base = node * nodeFieldCount
    return groupName(nodeTypes[nodes[base + typeField]!]!, strings[nodes[base + nameField]!]!)
  }
  const selfSize = (node: number) => nodes[node * nodeFieldCount + sizeField]!

  const groups = new Map<string, { count: number; selfBytes: number }>()
  let totalBytes = 0
  for (let node = 0; node < nodeCount; node++) {
    const name = nodeName(node)
    const size = selfSize(node)
    totalBytes += size
    const group = groups.get(name) ?? { count: 0, selfBytes: 0 }
    group.count++
    group.selfBytes += size
    groups.set(name, group)
  }

  // The first edge of each node, then breadth first from the root: each reachable node's holder.
  const firstEdge = new Uint32Array(nodeCount + 1)
  for (let node = 0; node < nodeCount; node++) {
    firstEdge[node + 1] = firstEdge[node]! + nodes[node * nodeFieldCount + edgeCountField]! * edgeFieldCount
  }
  const holder = new Int32Array(nodeCount).fill(-1)
  const holderEdge = new Int32Array(nodeCount).fill(-1)
  holder[0] = 0
  const queue = new Uint32Array(nodeCount)
  let head = 0
  let tail = 0
  queue[tail++] = 0
  while (head < tail) {
    const node = queue[head++]!
    for (let edge = firstEdge[node]!; edge < firstEdge[node + 1]!; edge += edgeFieldCount) {
      if (edgeTypes[edges[edge + edgeTypeField]!] === "weak") continue
      const to = edges[edge + edgeToField]! / nodeFieldCount
      if (holder[to] !== -1) continue
      holder[to] = node
      holderEdge[to] = edge
      queue[tail++] = to
    }
  }
  const edgeLabel = (edge: number) => {
    const type = edgeTypes[edges[edge + edgeTypeField]!]!
    const nameOrIndex = edges[edge + edgeNameField]!
    return type === "element" || type === "hidden" ? `[${nameOrIndex}]` : strings[nameOrIndex]!.slice(0, 40)
  }
  const pathOf = (node: number) => {
    const path: Array<string> = []
    for (let at = node; at !== 0 && holder[at]! >= 0 && path.length < 8; at = holder[at]!) {
      path.push(`${edgeLabel(holderEdge[at]!)} → ${nodeName(holder[at]!)}`)
    }
    return path
  }

  const bySize = Array.from({ length: nodeCount }, (_, node) => node).sort((a, b) => selfSize(b) - selfSize(a)).slice(0, largest)
  return {
    totalBytes,
    objects: nodeCount,
    groups: [...groups].map(([name, group]) => ({ name, ...group })).sort((a, b) => b.selfBytes - a.selfBytes).slice(0, top),
    largest: bySize.map((node) => ({ name: nodeName(node), selfBytes: selfSize(node), path: pathOf(node) }))
  }
}
