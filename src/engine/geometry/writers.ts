/**
 * Model files written from a mesh: binary and ASCII STL, OBJ (with vertex
 * colours, weights, continued lines), and a 3MF archive (stored or
 * deflated, plain ZIP, ZIP64 or streamed: zipWriter.ts; with required
 * extensions). The tests and the benchmark use them to produce real files;
 * shapes with known measures are here too, and the hostile files the
 * analysis must refuse cheaply (components fanning out, deflate bombs, ZIP
 * entries that lie about their size).
 */
import { constants, crc32, deflateRawSync } from "node:zlib"
import type { Mesh } from "./mesh.ts"
import { zip, type ZipOptions } from "./zipWriter.ts"

export { corruptEntry, zip, type ZipEntryInput, type ZipOptions } from "./zipWriter.ts"

// ---------------------------------------------------------------------------
// Shapes

/** Triangles of quads [a, b, c, d] (counter-clockwise seen from outside). */
const fromQuads = (positions: ReadonlyArray<number>, quads: ReadonlyArray<readonly [number, number, number, number]>): Mesh => ({
  positions: Float64Array.from(positions),
  triangles: Uint32Array.from(quads.flatMap(([a, b, c, d]) => [a, b, c, a, c, d]))
})

/** An axis-aligned box from (x0, y0, z0) of size x × y × z: 8 vertices, 12 triangles. */
export const box = (x: number, y: number, z: number, x0 = 0, y0 = 0, z0 = 0): Mesh =>
  fromQuads(
    [
      x0,
      y0,
      z0,
      x0 + x,
      y0,
      z0,
      x0 + x,
      y0 + y,
      z0,
      x0,
      y0 + y,
      z0,
      x0,
      y0,
      z0 + z,
      x0 + x,
      y0,
      z0 + z,
      x0 + x,
      y0 + y,
      z0 + z,
      x0,
      y0 + y,
      z0 + z
    ],
    [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]]
  )

/**
 * A cube of side `size` with a square hole of side `hole` through it along
 * z, centred: volume size²·size − hole²·size, area 6·size² − 2·hole² + 4·hole·size.
 * 16 vertices, 32 triangles.
 */
export const cubeWithHole = (size: number, hole: number, x0 = 0, y0 = 0, z0 = 0): Mesh => {
  const a = (size - hole) / 2, b = a + hole
  const ring = [[0, 0], [size, 0], [size, size], [0, size], [a, a], [b, a], [b, b], [a, b]] as const
  const positions = [
    ...ring.flatMap(([x, y]) => [x0 + x, y0 + y, z0]),
    ...ring.flatMap(([x, y]) => [x0 + x, y0 + y, z0 + size])
  ]
  // Outer ring 0-3, inner ring 4-7 at the bottom; +8 at the top.
  const quads: Array<[number, number, number, number]> = []
  for (let k = 0; k < 4; k++) {
    const o = k, on = (k + 1) % 4, i = 4 + k, inext = 4 + (k + 1) % 4
    quads.push([8 + o, 8 + on, 8 + inext, 8 + i]) // top
    quads.push([o, i, inext, on]) // bottom
    quads.push([o, on, 8 + on, 8 + o]) // outer wall
    quads.push([inext, i, 8 + i, 8 + inext]) // inner wall, facing the hole
  }
  return fromQuads(positions, quads)
}

/** A UV sphere with `segments` × `rings` quads (2·segments·(rings − 1) triangles), watertight. */
export const sphere = (radius: number, segments: number, rings: number): Mesh => {
  const positions: Array<number> = [0, 0, -radius]
  for (let r = 1; r < rings; r++) {
    const theta = Math.PI * r / rings - Math.PI / 2
    for (let s = 0; s < segments; s++) {
      const phi = 2 * Math.PI * s / segments
      positions.push(radius * Math.cos(theta) * Math.cos(phi), radius * Math.cos(theta) * Math.sin(phi), radius * Math.sin(theta))
    }
  }
  positions.push(0, 0, radius)
  const top = positions.length / 3 - 1
  const at = (r: number, s: number) => 1 + (r - 1) * segments + (s % segments)
  const triangles: Array<number> = []
  for (let s = 0; s < segments; s++) triangles.push(0, at(1, s + 1), at(1, s))
  for (let r = 1; r < rings - 1; r++) {
    for (let s = 0; s < segments; s++) {
      triangles.push(at(r, s), at(r, s + 1), at(r + 1, s + 1), at(r, s), at(r + 1, s + 1), at(r + 1, s))
    }
  }
  for (let s = 0; s < segments; s++) triangles.push(top, at(rings - 1, s), at(rings - 1, s + 1))
  return { positions: Float64Array.from(positions), triangles: Uint32Array.from(triangles) }
}

// ---------------------------------------------------------------------------
// Files

const corner = (mesh: Mesh, triangle: number, k: number) => {
  const v = mesh.triangles[3 * triangle + k]!
  return [mesh.positions[3 * v]!, mesh.positions[3 * v + 1]!, mesh.positions[3 * v + 2]!] as const
}

export const binaryStl = (mesh: Mesh, header = "binary STL"): Uint8Array => {
  const count = mesh.triangles.length / 3
  const bytes = new Uint8Array(84 + 50 * count)
  bytes.set(new TextEncoder().encode(header.slice(0, 80)))
  const view = new DataView(bytes.buffer)
  view.setUint32(80, count, true)
  for (let t = 0; t < count; t++) {
    for (let k = 0; k < 3; k++) {
      const [x, y, z] = corner(mesh, t, k)
      const offset = 84 + 50 * t + 12 + 12 * k
      view.setFloat32(offset, x, true)
      view.setFloat32(offset + 4, y, true)
      view.setFloat32(offset + 8, z, true)
    }
  }
  return bytes
}

export const asciiStl = (mesh: Mesh, name = "part"): string => {
  const lines = [`solid ${name}`]
  for (let t = 0; t < mesh.triangles.length / 3; t++) {
    lines.push("  facet normal 0 0 0", "    outer loop")
    for (let k = 0; k < 3; k++) lines.push(`      vertex ${corner(mesh, t, k).join(" ")}`)
    lines.push("    endloop", "  endfacet")
  }
  lines.push(`endsolid ${name}`)
  return lines.join("\n") + "\n"
}

export interface ObjOptions {
  /** Negative (relative) indices rather than 1-based ones. */
  readonly relative?: boolean
  /**
   * Vertex colours after the position, as MeshLab and scanners write them:
   * `rgb` (`v x y z r g b`, 0–1), `nan` (`v x y z nan nan nan`), or
   * `weighted-rgb` (`v x y z 1 r g b`, a weight of 1 between).
   */
  readonly colours?: "rgb" | "nan" | "weighted-rgb"
  /** A homogeneous weight: `v wx wy wz w`, whose position is the mesh's. */
  readonly weight?: number
  /** Every vertex and face line split over two lines by a trailing backslash. */
  readonly continued?: boolean
}

/** OBJ with 1-based indices, or negative (relative) ones; colours, weights and continued lines as `options` say. */
export const obj = (mesh: Mesh, options: ObjOptions = {}): string => {
  // A comment ends at its line, even one ending in a backslash (as a Windows path does).
  const lines = [options.continued === true ? "# written by the tests in C:\\models\\" : "# written by the tests", "o part"]
  const vertexCount = mesh.positions.length / 3
  const split = (words: ReadonlyArray<string>) =>
    options.continued === true ? `${words.slice(0, 2).join(" ")} \\\n  ${words.slice(2).join(" ")}` : words.join(" ")
  for (let v = 0; v < vertexCount; v++) {
    const w = options.weight
    const position = [0, 1, 2].map((k) => String(mesh.positions[3 * v + k]! * (w ?? 1)))
    const colour = [(v % 7) / 7, (v % 3) / 3, 1].map(String)
    const extra = w !== undefined
      ? [String(w)]
      : options.colours === "rgb"
      ? colour
      : options.colours === "nan"
      ? ["nan", "nan", "nan"]
      : options.colours === "weighted-rgb"
      ? ["1", ...colour]
      : []
    lines.push(split(["v", ...position, ...extra]))
  }
  for (let t = 0; t < mesh.triangles.length / 3; t++) {
    const refs = [0, 1, 2].map((k) => {
      const index = mesh.triangles[3 * t + k]!
      return options.relative === true ? String(index - vertexCount) : `${index + 1}//1`
    })
    lines.push(split(["f", ...refs]))
  }
  return lines.join("\n") + "\n"
}

/**
 * The box with a triangle of no area beside each of its 12 (a, b, b: a
 * repeated vertex, as CAD exports leave them): 24 triangles, still closed,
 * the box's volume and area.
 */
export const withDegenerateTriangles = (mesh: Mesh): Mesh => {
  const extra: Array<number> = []
  for (let t = 0; t < mesh.triangles.length / 3; t++) extra.push(mesh.triangles[3 * t]!, mesh.triangles[3 * t + 1]!, mesh.triangles[3 * t + 1]!)
  return { positions: mesh.positions, triangles: Uint32Array.from([...mesh.triangles, ...extra]) }
}

/** The `<mesh>` element of a 3MF object. */
export const meshXml = (mesh: Mesh): string => {
  const vertices: Array<string> = []
  for (let v = 0; v < mesh.positions.length / 3; v++) {
    vertices.push(`<vertex x="${mesh.positions[3 * v]}" y="${mesh.positions[3 * v + 1]}" z="${mesh.positions[3 * v + 2]}"/>`)
  }
  const triangles: Array<string> = []
  for (let t = 0; t < mesh.triangles.length / 3; t++) {
    triangles.push(`<triangle v1="${mesh.triangles[3 * t]}" v2="${mesh.triangles[3 * t + 1]}" v3="${mesh.triangles[3 * t + 2]}"/>`)
  }
  return `<mesh><vertices>${vertices.join("")}</vertices><triangles>${triangles.join("")}</triangles></mesh>`
}

export interface ThreeMfObject {
  readonly id: number
  readonly mesh?: Mesh
  readonly components?: ReadonlyArray<{ readonly objectId: number; readonly transform?: string }>
  readonly type?: string
}

/** A 3MF file: its objects and build items, in `unit`. */
export const threeMf = (options: {
  readonly unit?: string
  readonly objects: ReadonlyArray<ThreeMfObject>
  readonly items: ReadonlyArray<{ readonly objectId: number; readonly transform?: string }>
  readonly stored?: boolean
  /** ZIP64 (zipWriter.ts): the end records only, or with extra fields in every header. */
  readonly zip64?: ZipOptions["zip64"]
  /** Written in streaming mode (data descriptors). */
  readonly dataDescriptor?: boolean
  /** Extensions the model requires, by prefix: declared on `<model>` and listed in its `requiredextensions`. */
  readonly requiredExtensions?: Readonly<Record<string, string>>
  /** XML inside `<resources>` after the objects (another namespace's resources, say). */
  readonly extraResources?: string
}): Uint8Array => {
  const transform = (value: string | undefined) => (value === undefined ? "" : ` transform="${value}"`)
  const objects = options.objects.map((object) => {
    const content = object.mesh !== undefined
      ? meshXml(object.mesh)
      : `<components>${(object.components ?? []).map((c) => `<component objectid="${c.objectId}"${transform(c.transform)}/>`).join("")}</components>`
    return `<object id="${object.id}" type="${object.type ?? "model"}">${content}</object>`
  })
  const items = options.items.map((item) => `<item objectid="${item.objectId}"${transform(item.transform)}/>`)
  const required = Object.entries(options.requiredExtensions ?? {})
  const declarations = required.map(([prefix, namespace]) => ` xmlns:${prefix}="${namespace}"`).join("")
  const requires = required.length === 0 ? "" : ` requiredextensions="${required.map(([prefix]) => prefix).join(" ")}"`
  const model = `<?xml version="1.0" encoding="UTF-8"?>
<model unit="${options.unit ?? "millimeter"}" xml:lang="en-US" xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02"${declarations}${requires}>
<!-- written by the tests: <object id="99"/> in a comment is not an object -->
<resources>${objects.join("\n")}${options.extraResources ?? ""}</resources>
<build>${items.join("")}</build>
</model>`
  return zip([
    {
      name: "[Content_Types].xml",
      content:
        `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="model" ContentType="application/vnd.ms-package.3dmanufacturing-3dmodel+xml"/></Types>`
    },
    {
      name: "_rels/.rels",
      content:
        `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Target="/3D/part.model" Id="rel0" Type="http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"/></Relationships>`
    },
    { name: "3D/part.model", content: model }
  ], {
    stored: options.stored ?? false,
    ...(options.zip64 === undefined ? {} : { zip64: options.zip64 }),
    dataDescriptor: options.dataDescriptor ?? false
  })
}

// ---------------------------------------------------------------------------
// Hostile files (what the analysis must refuse cheaply)

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/**
 * A raw DEFLATE stream of `prefix`, then `unit` `count` times, then
 * `suffix`, without compressing the whole: each piece is deflated on its own
 * and ends on a byte boundary (a sync flush), so the pieces concatenate; the
 * unit's is repeated. A megabyte of it can inflate to a gigabyte. With the
 * content's CRC-32, as a ZIP entry declares it.
 */
export const deflatedRepeat = (
  prefix: string | Uint8Array,
  unit: Uint8Array,
  count: number,
  suffix: string | Uint8Array
): { readonly deflated: Uint8Array; readonly crc: number } => {
  const bytes = (value: string | Uint8Array) => (typeof value === "string" ? new TextEncoder().encode(value) : value)
  const flushed = (value: Uint8Array) => new Uint8Array(deflateRawSync(value, { finishFlush: constants.Z_SYNC_FLUSH }))
  const head = flushed(bytes(prefix))
  const body = flushed(unit)
  const tail = new Uint8Array(deflateRawSync(bytes(suffix)))
  let crc = crc32(bytes(prefix))
  for (let k = 0; k < count; k++) crc = crc32(unit, crc)
  crc = crc32(bytes(suffix), crc)
  return { deflated: concat([head, ...Array.from({ length: count }, () => body), tail]), crc }
}

/**
 * A 3MF of a unit cube instanced through levels of components: object 1 the
 * cube, object k+1 `fanOuts[k-1]` components of object k, the build item the
 * top one: the product of the fan-outs in cubes (12 triangles each) from a
 * kilobyte or so. A number is that many levels of 10. Level L moves its
 * component k by 2·k·10^⌊L/3⌋ mm along the axis L mod 3, so no two cubes
 * share a place (while fan-outs are at most 10).
 */
export const componentFanOut3mf = (fanOuts: number | ReadonlyArray<number>): Uint8Array => {
  const levels = typeof fanOuts === "number" ? Array.from({ length: fanOuts }, () => 10) : fanOuts
  const objects: Array<ThreeMfObject> = [{ id: 1, mesh: box(1, 1, 1) }]
  levels.forEach((fanOut, level) => {
    const step = 2 * 10 ** Math.floor(level / 3)
    const axis = level % 3
    objects.push({
      id: level + 2,
      components: Array.from({ length: fanOut }, (_, k) => {
        const offset = [0, 0, 0]
        offset[axis] = k * step
        return { objectId: level + 1, transform: `1 0 0 0 1 0 0 0 1 ${offset.join(" ")}` }
      })
    })
  })
  return threeMf({ objects, items: [{ objectId: levels.length + 1 }] })
}

const MiB = 1024 * 1024

/** A mebibyte of spaces with an empty element `<x/>` every 4 KiB (no run of text is long); deflates about 650 to 1. */
export const paddingMiB = (): Uint8Array => {
  const unit = new Uint8Array(MiB).fill(0x20)
  const tag = new TextEncoder().encode("<x/>")
  for (let i = 0; i < MiB; i += 4096) unit.set(tag, i)
  return unit
}

const MODEL_OPEN = `<?xml version="1.0" encoding="UTF-8"?>\n<model unit="millimeter" xmlns:p="http://schemas.microsoft.com/3dmanufacturing/production/2015/06">`
const CUBE_RESOURCES = () => `<resources><object id="1" type="model">${meshXml(box(1, 1, 1))}</object></resources>`

/**
 * A 3MF of a unit cube whose model part carries `mebibytes` MiB of padding
 * and declares 10 bytes: at 1024, a 1.6 MB deflate bomb of a gigabyte.
 */
export const paddedCube3mf = (mebibytes: number): Uint8Array =>
  zip([{
    name: "3D/3dmodel.model",
    content: "",
    declaredSize: 10,
    ...deflatedRepeat(MODEL_OPEN, paddingMiB(), mebibytes, `${CUBE_RESOURCES()}<build><item objectid="1"/></build></model>`)
  }])

/**
 * Six model parts, each declaring 10 bytes and unpacking to `mebibytes` MiB
 * (padding around its content): the root's object has components in the
 * five others (`p:path`), each a unit cube; 60 triangles in all.
 */
export const lyingParts3mf = (mebibytes: number): Uint8Array => {
  const padding = paddingMiB()
  const components = [1, 2, 3, 4, 5]
    .map((k) => `<component objectid="1" p:path="/3D/part${k}.model" transform="1 0 0 0 1 0 0 0 1 ${2 * k} 0 0"/>`)
    .join("")
  const lying = (name: string, content: string) => ({
    name,
    content: "",
    declaredSize: 10,
    ...deflatedRepeat(MODEL_OPEN, padding, mebibytes, `${content}</model>`)
  })
  return zip([
    lying(
      "3D/3dmodel.model",
      `<resources><object id="1" type="model"><components>${components}</components></object></resources><build><item objectid="1"/></build>`
    ),
    ...[1, 2, 3, 4, 5].map((k) => lying(`3D/part${k}.model`, `${CUBE_RESOURCES()}<build/>`))
  ])
}

/** The 3MF whose `<a` × 120,000 took the regular-expression reader 54 s: 415 bytes. */
export const unclosedTags3mf = (): Uint8Array => zip([{ name: "3D/3dmodel.model", content: `<model unit="millimeter"><resources>${"<a".repeat(120_000)}` }])
