/**
 * The model analysis on real files written here: analytic shapes (unit
 * cube, 2×3×4 box, cube with a square hole) in every format, measures exact
 * to 1e-9 relative; 3MF units, build and component transforms, several
 * objects; and malformed files, each a ModelError saying what is wrong.
 *
 * Then files as the world writes them: OBJ vertex colours (`nan` ones too),
 * weights and continued lines; ZIP64 3MF archives (end records only, extra
 * fields in every header, streamed); a stated unit for STL and OBJ, a 3MF's
 * own winning; the 3MF rules enforced (CRC-32 of every entry, required
 * extensions, namespaces, unique ids, no DTD, UTF-8) and the refusals
 * naming the rule and the entry; degenerate triangles left out of the edges.
 *
 * Then its budgets: triangles counted through 3MF component instancing
 * before anything is placed, the unpacked bytes of a 3MF counted as
 * produced (lying sizes, deflate bombs), the XML read in linear time; and
 * the model analyser's worker threads: the time budget terminates a thread
 * (from when the task starts, not while it waits), a thread out of memory
 * is a refusal, one app's analyses wait for its own turn, never another's.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Exit, Fiber } from "effect"
import { modelAnalysisConfig, modelAnalysisProblem, modelFetchConfig } from "../../src/domain/ModelSettings.ts"
import { DEFAULT_LIMITS } from "../../src/engine/geometry/limits.ts"
import { analyse, type Geometry, type Mesh, ModelError } from "../../src/engine/geometry/mesh.ts"
import { analyseModel, analyseModelSync } from "../../src/engine/geometry/model.ts"
import { defaultAnalyserOptions, makeModelAnalyser, type ModelAnalyserOptions, perAppOf } from "../../src/engine/geometry/ModelAnalyser.ts"
import { isPrivateAddress } from "../../src/engine/geometry/ModelFetcher.ts"
import {
  asciiStl,
  binaryStl,
  box,
  componentFanOut3mf,
  corruptEntry,
  cubeWithHole,
  deflatedRepeat,
  lyingParts3mf,
  meshXml,
  obj,
  paddedCube3mf,
  sphere,
  threeMf,
  unclosedTags3mf,
  withDegenerateTriangles,
  zip
} from "../../src/engine/geometry/writers.ts"
import { readZip, streamEntry, unpackBudget } from "../../src/engine/geometry/zip.ts"

const text = (source: string) => new TextEncoder().encode(source)

const close = (actual: number, expected: number, what: string) =>
  assert.isAtMost(Math.abs(actual - expected), 1e-9 * Math.max(Math.abs(expected), 1e-300), `${what}: ${actual} vs ${expected}`)

const expectGeometry = (geometry: Geometry, expected: Geometry) => {
  close(geometry.volume, expected.volume, "volume")
  close(geometry.surfaceArea, expected.surfaceArea, "surfaceArea")
  close(geometry.boundingBox.x, expected.boundingBox.x, "boundingBox.x")
  close(geometry.boundingBox.y, expected.boundingBox.y, "boundingBox.y")
  close(geometry.boundingBox.z, expected.boundingBox.z, "boundingBox.z")
  assert.strictEqual(geometry.triangleCount, expected.triangleCount, "triangleCount")
  assert.strictEqual(geometry.watertight, expected.watertight, "watertight")
}

const boxGeometry = (x: number, y: number, z: number, triangleCount = 12): Geometry => ({
  volume: x * y * z,
  surfaceArea: 2 * (x * y + y * z + x * z),
  boundingBox: { x, y, z },
  triangleCount,
  watertight: true
})

/** 10 mm cube, 4 mm square hole along z. */
const HOLED: Geometry = {
  volume: 1000 - 16 * 10,
  surfaceArea: 600 - 2 * 16 + 4 * 4 * 10,
  boundingBox: { x: 10, y: 10, z: 10 },
  triangleCount: 32,
  watertight: true
}

const failure = (bytes: Uint8Array, fileName: string): string => {
  const error = Effect.runSync(Effect.flip(analyseModel(bytes, fileName)))
  assert.instanceOf(error, ModelError)
  return error.reason
}

const flip = (mesh: Mesh, triangle: number): Mesh => {
  const triangles = Uint32Array.from(mesh.triangles)
  const a = triangles[3 * triangle + 1]!
  triangles[3 * triangle + 1] = triangles[3 * triangle + 2]!
  triangles[3 * triangle + 2] = a
  return { positions: mesh.positions, triangles }
}

describe("geometry of analytic shapes", () => {
  it("unit cube, binary STL", () => {
    expectGeometry(analyseModelSync(binaryStl(box(1, 1, 1)), "cube.stl"), boxGeometry(1, 1, 1))
  })

  it("2×3×4 box off the origin: binary and ASCII STL agree, exactly", () => {
    const mesh = box(2, 3, 4, 1000.5, -250.25, 12.125)
    const binary = analyseModelSync(binaryStl(mesh), "box.stl")
    const ascii = analyseModelSync(text(asciiStl(mesh)), "box.stl")
    expectGeometry(binary, boxGeometry(2, 3, 4))
    assert.deepStrictEqual(ascii, binary)
  })

  it("a binary STL whose header starts with \"solid\" is read as binary", () => {
    expectGeometry(analyseModelSync(binaryStl(box(2, 3, 4), "solid but binary"), "box.stl"), boxGeometry(2, 3, 4))
  })

  it("cube with a square hole: volume, area exact to 1e-9; watertight", () => {
    expectGeometry(analyseModelSync(binaryStl(cubeWithHole(10, 4, 3.5, -7.25, 100)), "holed.stl"), HOLED)
    expectGeometry(analyseModelSync(text(asciiStl(cubeWithHole(10, 4))), "holed.stl"), HOLED)
    expectGeometry(analyseModelSync(text(obj(cubeWithHole(10, 4))), "holed.obj"), HOLED)
    expectGeometry(analyseModelSync(threeMf({ objects: [{ id: 1, mesh: cubeWithHole(10, 4) }], items: [{ objectId: 1 }] }), "holed.3mf"), HOLED)
  })

  it("a sphere converges on 4/3·π·r³ and 4·π·r² and is watertight", () => {
    const geometry = analyse(sphere(10, 256, 128))
    assert.isTrue(geometry.watertight)
    assert.strictEqual(geometry.triangleCount, 2 * 256 * 127)
    assert.isBelow(Math.abs(geometry.volume / (4 / 3 * Math.PI * 1000) - 1), 1e-3)
    assert.isBelow(Math.abs(geometry.surfaceArea / (4 * Math.PI * 100) - 1), 1e-3)
  })

  it("inside-out triangles give the same volume; one flipped triangle or a missing one is not watertight", () => {
    const cube = box(2, 3, 4)
    const inverted: Mesh = { positions: cube.positions, triangles: Uint32Array.from(cube.triangles).reverse() }
    expectGeometry(analyse(inverted), boxGeometry(2, 3, 4))
    assert.isFalse(analyse(flip(cube, 5)).watertight)
    const open = analyseModelSync(binaryStl({ positions: cube.positions, triangles: cube.triangles.subarray(0, 33) }), "open.stl")
    assert.strictEqual(open.triangleCount, 11)
    assert.isFalse(open.watertight)
    // Two cubes sharing an edge: it has four triangles.
    const two = analyseModelSync(text(asciiStl(box(1, 1, 1)) + asciiStl(box(1, 1, 1, 1, 1, 0))), "two.stl")
    close(two.volume, 2, "two cubes")
    assert.isFalse(two.watertight)
  })
})

describe("OBJ", () => {
  it("quads, negative indices, texture and normal references, comments and groups", () => {
    const source = [
      "# a 2x3x4 box in quads",
      "mtllib box.mtl",
      "o box",
      "v 0 0 0",
      "v 2 0 0",
      "v 2 3 0",
      "v 0 3 0",
      "v 0 0 4",
      "v 2 0 4",
      "v 2 3 4",
      "v 0 3 4",
      "vt 0 0",
      "vn 0 0 1",
      "g sides",
      "usemtl steel",
      "f 1/1/1 4/1/1 3/1/1 2/1/1",
      "f -4//1 -3//1 -2//1 -1//1",
      "f 1 2 6 5",
      "f -7/1 -6/1 -2/1 -3/1",
      "s off",
      "f 3 4 8 7",
      "f 4 1 5 8",
      ""
    ].join("\r\n")
    expectGeometry(analyseModelSync(text(source), "box.obj"), boxGeometry(2, 3, 4))
  })

  it("relative indices throughout", () => {
    expectGeometry(analyseModelSync(text(obj(box(2, 3, 4), { relative: true })), "box.obj"), boxGeometry(2, 3, 4))
  })
})

describe("3MF", () => {
  const cube = box(10, 10, 10)

  it("millimetres, a build item moved and turned 90° about z", () => {
    const file = threeMf({ objects: [{ id: 1, mesh: box(2, 3, 4) }], items: [{ objectId: 1, transform: "0 1 0 -1 0 0 0 0 1 50 60 70" }] })
    // Turned: the x and y extents swap.
    expectGeometry(analyseModelSync(file, "part.3mf"), { ...boxGeometry(2, 3, 4), boundingBox: { x: 3, y: 2, z: 4 } })
  })

  it("inches: a unit cube is 25.4 mm a side; a build scale of 2 makes it 50.8", () => {
    const inch = 25.4
    const one = threeMf({ unit: "inch", objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 1 }] })
    expectGeometry(analyseModelSync(one, "part.3mf"), boxGeometry(inch, inch, inch))
    const scaled = threeMf({ unit: "inch", objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 1, transform: "2 0 0 0 2 0 0 0 2 1 1 1" }] })
    expectGeometry(analyseModelSync(scaled, "part.3mf"), boxGeometry(2 * inch, 2 * inch, 2 * inch))
  })

  it("every unit", () => {
    for (const [unit, mm] of [["micron", 0.001], ["millimeter", 1], ["centimeter", 10], ["inch", 25.4], ["foot", 304.8], ["meter", 1000]] as const) {
      const file = threeMf({ unit, objects: [{ id: 1, mesh: box(2, 3, 4) }], items: [{ objectId: 1 }] })
      expectGeometry(analyseModelSync(file, "part.3mf"), boxGeometry(2 * mm, 3 * mm, 4 * mm))
    }
  })

  it("components with transforms, nested, several build items, a mirrored one; supports left out; stored entries", () => {
    const file = threeMf({
      stored: true,
      objects: [
        { id: 1, mesh: cube },
        // Two cubes side by side, 20 mm apart.
        { id: 2, components: [{ objectId: 1 }, { objectId: 1, transform: "1 0 0 0 1 0 0 0 1 20 0 0" }] },
        // That pair, raised 100 mm.
        { id: 3, components: [{ objectId: 2, transform: "1 0 0 0 1 0 0 0 1 0 0 100" }] },
        { id: 4, type: "support", mesh: box(500, 500, 500) },
        { id: 5, mesh: cubeWithHole(10, 4) }
      ],
      items: [
        { objectId: 3 },
        { objectId: 4 },
        // The holed cube, mirrored in x and placed at y = 50.
        { objectId: 5, transform: "-1 0 0 0 1 0 0 0 1 10 50 0" }
      ]
    })
    const geometry = analyseModelSync(file, "assembly.3mf")
    expectGeometry(geometry, {
      volume: 2000 + HOLED.volume,
      surfaceArea: 1200 + HOLED.surfaceArea,
      boundingBox: { x: 30, y: 60, z: 110 },
      triangleCount: 24 + 32,
      watertight: true
    })
  })
})

// ---------------------------------------------------------------------------
// Files as the world writes them

const CORE = "http://schemas.microsoft.com/3dmanufacturing/core/2015/02"

/** A 3MF whose model part is `model` (its XML), stored. */
const modelPart3mf = (model: string) => zip([{ name: "3D/3dmodel.model", content: `<?xml version="1.0" encoding="UTF-8"?>\n${model}` }], true)

/** The ModelError of analysing `bytes` (in `unit`, when given). */
const refused = (bytes: Uint8Array, fileName: string, unit?: "mm" | "in") => Effect.runSync(Effect.flip(analyseModel(bytes, fileName, DEFAULT_LIMITS, unit)))

describe("OBJ as MeshLab, scanners and hand editors write it", () => {
  const holed = cubeWithHole(10, 4)

  it("vertex colours (v x y z r g b), nan colours, a weight before the colour: the position, never divided", () => {
    for (const colours of ["rgb", "nan", "weighted-rgb"] as const) {
      const geometry = analyseModelSync(text(obj(holed, { colours })), "holed.obj")
      expectGeometry(geometry, HOLED)
      assert.strictEqual(geometry.unit, "mm")
    }
    // Six numbers with a fourth of 2 (a red channel): read as before, it halved every coordinate.
    expectGeometry(analyseModelSync(text("v 0 0 0 2 0 0\nv 4 0 0 2 0 0\nv 0 4 0 2 0 0\nv 0 0 4 2 0 0\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"), "t.obj"), {
      volume: 64 / 6,
      surfaceArea: 3 * 8 + Math.sqrt(3) / 4 * 32,
      boundingBox: { x: 4, y: 4, z: 4 },
      triangleCount: 4,
      watertight: true
    })
  })

  it("exactly four numbers are x y z w: the position is x/w, y/w, z/w; a weight of 0 or a word is refused", () => {
    expectGeometry(analyseModelSync(text(obj(holed, { weight: 2 })), "holed.obj"), HOLED)
    expectGeometry(analyseModelSync(text(obj(holed, { weight: 0.5 })), "holed.obj"), HOLED)
    assert.include(failure(text("v 1 2 3 0\n"), "w.obj"), "OBJ line 1: the weight \"0\" is not a non-zero number")
    assert.include(failure(text("v 1 2 3 nan\n"), "w.obj"), "OBJ line 1: the weight \"nan\"")
    assert.include(failure(text("v 1 nan 3 0.5 0.5 0.5\n"), "w.obj"), "OBJ line 1: \"nan\" is not a coordinate")
  })

  it("a line ending in a backslash continues on the next; a comment does not; errors name the statement's first line", () => {
    const continued = obj(holed, { continued: true })
    assert.include(continued, "\\\n")
    expectGeometry(analyseModelSync(text(continued), "holed.obj"), HOLED)
    expectGeometry(analyseModelSync(text(obj(holed, { continued: true, colours: "nan" })), "holed.obj"), HOLED)
    // A continuation at the very end of the file ends the statement there.
    expectGeometry(analyseModelSync(text("v 0 0 0\nv 4 0 0\nv 0 4 0\nv 0 0 4\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 \\\n 3 \\\n 4 \\"), "t.obj"), {
      volume: 64 / 6,
      surfaceArea: 3 * 8 + Math.sqrt(3) / 4 * 32,
      boundingBox: { x: 4, y: 4, z: 4 },
      triangleCount: 4,
      watertight: true
    })
    assert.include(failure(text("v 0 0 0\nf 1 \\\n 2 \\\n 9\n"), "t.obj"), "OBJ line 2: vertex 2 does not exist")
  })
})

describe("units: STL and OBJ in the unit stated, a 3MF in its own", () => {
  const MM = { um: 0.001, mm: 1, cm: 10, m: 1000, in: 25.4, ft: 304.8 } as const

  it("every unit, in STL (binary and ASCII) and OBJ: the figures in millimetres, the unit said", () => {
    for (const [unit, mm] of Object.entries(MM) as ReadonlyArray<[keyof typeof MM, number]>) {
      for (
        const [bytes, fileName] of [[binaryStl(box(1, 2, 3)), "b.stl"], [text(asciiStl(box(1, 2, 3))), "b.stl"], [text(obj(box(1, 2, 3))), "b.obj"]] as const
      ) {
        const geometry = analyseModelSync(bytes, fileName, DEFAULT_LIMITS, unit)
        expectGeometry(geometry, boxGeometry(mm, 2 * mm, 3 * mm))
        assert.strictEqual(geometry.unit, unit, `${fileName} in ${unit}`)
      }
    }
    // Without a unit: millimetres, and said so.
    assert.strictEqual(analyseModelSync(binaryStl(box(1, 2, 3)), "b.stl").unit, "mm")
  })

  it("an inch STL: a 1 × 2 × 3 in box is 16,387.064 × 6 mm³", () => {
    const geometry = analyseModelSync(binaryStl(box(1, 2, 3)), "inch.stl", DEFAULT_LIMITS, "in")
    expectGeometry(geometry, {
      volume: 6 * 16387.064,
      surfaceArea: 22 * 645.16,
      boundingBox: { x: 25.4, y: 50.8, z: 76.2 },
      triangleCount: 12,
      watertight: true
    })
  })

  it("a 3MF's own unit wins: the same unit stated is fine, another is a ModelUnitConflict naming both", () => {
    const inch = threeMf({ unit: "inch", objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 1 }] })
    assert.strictEqual(analyseModelSync(inch, "i.3mf").unit, "in")
    expectGeometry(analyseModelSync(inch, "i.3mf", DEFAULT_LIMITS, "in"), boxGeometry(25.4, 25.4, 25.4))
    const error = refused(inch, "i.3mf", "mm")
    assert.strictEqual(error.type, "ModelUnitConflict")
    assert.strictEqual(
      error.reason,
      "\"mm\" contradicts the 3MF's own unit, \"in\" (its model's unit attribute, which wins): state \"in\" or leave the unit out"
    )
    // No unit attribute: millimetres, by the specification's default, which a stated inch contradicts.
    const plain = modelPart3mf(
      `<model xmlns="${CORE}"><resources><object id="1">${meshXml(box(1, 1, 1))}</object></resources><build><item objectid="1"/></build></model>`
    )
    assert.strictEqual(analyseModelSync(plain, "p.3mf").unit, "mm")
    assert.strictEqual(refused(plain, "p.3mf", "in").type, "ModelUnitConflict")
  })
})

describe("ZIP64 and streamed 3MF archives", () => {
  const file = (options: Partial<Parameters<typeof threeMf>[0]>) =>
    threeMf({ objects: [{ id: 1, mesh: cubeWithHole(10, 4) }], items: [{ objectId: 1, transform: "1 0 0 0 1 0 0 0 1 5 5 5" }], ...options })

  it("read exactly: ZIP64 end records only, ZIP64 extra fields in every header, data descriptors; stored or deflated", () => {
    for (const zip64 of [undefined, "end-records", "extra-fields"] as const) {
      for (const dataDescriptor of [false, true]) {
        for (const stored of [false, true]) {
          const bytes = file({ ...(zip64 === undefined ? {} : { zip64 }), dataDescriptor, stored })
          expectGeometry(analyseModelSync(bytes, "holed.3mf"), HOLED)
        }
      }
    }
    // The extra fields carry the sizes and offsets: the headers' own say 0xFFFFFFFF.
    const entry = readZip(file({ zip64: "extra-fields" })).get("3D/part.model")!
    assert.isBelow(entry.compressedSize, 10_000)
    assert.isAbove(entry.localOffset, 0)
  })

  it("a damaged ZIP64 archive is refused, saying what is wrong", () => {
    const withRecords = file({ zip64: "end-records", stored: true })
    // The locator (20 bytes before the 22-byte end record) broken: the end record defers to a record nobody points to.
    const noLocator = withRecords.slice()
    noLocator[noLocator.length - 42] = 0
    assert.include(failure(noLocator, "z.3mf"), "the end of central directory defers to a ZIP64 record, and there is no ZIP64 end of central directory locator")
    const wide = file({ zip64: "extra-fields", stored: true })
    const view = new DataView(wide.buffer)
    // The ZIP64 record's entry count set past the bound on entries.
    const record = Number(view.getBigUint64(wide.length - 22 - 20 + 8, true))
    const many = wide.slice()
    new DataView(many.buffer).setBigUint64(record + 32, 70_000n, true)
    const error = refused(many, "z.3mf")
    assert.strictEqual(error.type, "ModelTooLarge")
    assert.include(error.reason, "the 3MF archive lists 70000 entries, more than 65535")
    // A central header saying 0xFFFFFFFF without its extra field: the extra field's id overwritten.
    const central = view.getUint32(record + 48, true)
    const noExtra = wide.slice()
    const nameLength = view.getUint16(central + 28, true)
    new DataView(noExtra.buffer).setUint16(central + 46 + nameLength, 0x9999, true)
    assert.include(failure(noExtra, "z.3mf"), "has a size or offset of 0xFFFFFFFF and no ZIP64 extra field")
  })
})

describe("3MF integrity and the core specification's rules", () => {
  const part = (options: Partial<Parameters<typeof threeMf>[0]> = {}) =>
    threeMf({ objects: [{ id: 1, mesh: box(10, 20, 30) }], items: [{ objectId: 1 }], stored: true, ...options })

  it("every entry's CRC-32 is checked: one changed digit (10 → 90 mm) is refused naming the entry, not measured", () => {
    const good = part()
    expectGeometry(analyseModelSync(good, "b.3mf"), boxGeometry(10, 20, 30))
    const damaged = corruptEntry(good, "3D/part.model", "x=\"10\"", "x=\"90\"")
    const error = refused(damaged, "b.3mf")
    assert.isUndefined(error.type)
    assert.match(
      error.reason,
      /^the 3MF archive is damaged: the entry 3D\/part\.model does not match its CRC-32 \(the archive says 0x[0-9a-f]{8}, its content is 0x[0-9a-f]{8}\)$/
    )
    // The relationships entry too: every entry read is checked.
    const rels = corruptEntry(good, "_rels/.rels", "rel0", "rel9")
    assert.include(failure(rels, "b.3mf"), "the entry _rels/.rels does not match its CRC-32")
    // A deflated entry changed in its compressed bytes: refused either way, naming it.
    const deflated = part({ stored: false })
    const entry = readZip(deflated).get("3D/part.model")!
    const flipped = deflated.slice()
    flipped[entry.localOffset + 30 + "3D/part.model".length + Math.floor(entry.compressedSize / 2)]! ^= 0x10
    assert.match(failure(flipped, "b.3mf"), /(damaged: the entry 3D\/part\.model|3MF 3D\/part\.model is not well-formed)/)
  })

  it("a required extension the reader does not implement is refused, naming it; the ones read are read", () => {
    const beams = part({ requiredExtensions: { b: "http://schemas.microsoft.com/3dmanufacturing/beamlattice/2017/02" } })
    const error = refused(beams, "b.3mf")
    assert.strictEqual(error.type, "UnsupportedModelExtension")
    assert.strictEqual(
      error.reason,
      "3MF 3D/part.model requires the extension \"b\" (http://schemas.microsoft.com/3dmanufacturing/beamlattice/2017/02), which this reader does not implement " +
        "(3MF core specification 2.3.1: a consumer must not read a model whose required extensions it does not support)"
    )
    assert.strictEqual(
      refused(part({ requiredExtensions: { s: "http://schemas.microsoft.com/3dmanufacturing/slice/2015/07" } }), "s.3mf").type,
      "UnsupportedModelExtension"
    )
    const read = part({
      requiredExtensions: {
        p: "http://schemas.microsoft.com/3dmanufacturing/production/2015/06",
        m: "http://schemas.microsoft.com/3dmanufacturing/material/2015/02",
        t: "http://schemas.microsoft.com/3dmanufacturing/trianglesets/2021/07"
      },
      extraResources: `<m:colorgroup id="9"><m:color color="#FF0000"/></m:colorgroup>`
    })
    expectGeometry(analyseModelSync(read, "p.3mf"), boxGeometry(10, 20, 30))
    const undeclared = modelPart3mf(`<model xmlns="${CORE}" requiredextensions="q"><resources/><build/></model>`)
    assert.include(failure(undeclared, "q.3mf"), "requiredextensions names the prefix \"q\", which the model does not declare")
  })

  it("elements and attributes of other namespaces are ignored, the core's read whatever their prefix", () => {
    const model = `<c:model xmlns:c="${CORE}" xmlns:x="urn:example:other" c:unit="centimeter" x:unit="meter">
<c:resources><c:object id="1">${meshXml(box(1, 2, 3)).replaceAll("<", "<c:").replaceAll("<c:/", "</c:")}</c:object>
<x:object id="2"><x:mesh/></x:object></c:resources>
<c:build><c:item objectid="1"/><x:item objectid="1" transform="1 0 0 0 1 0 0 0 1 100 0 0"/></c:build></c:model>`
    expectGeometry(analyseModelSync(modelPart3mf(model), "ns.3mf"), boxGeometry(10, 20, 30))
    // A model in no namespace at all is read as the core's; one in another namespace is no model.
    assert.include(failure(modelPart3mf(`<model xmlns="urn:example:other"><resources/><build/></model>`), "o.3mf"), "has no <model> element")
  })

  it("object ids are unique, no DTD, UTF-8 only", () => {
    const twice = `<model xmlns="${CORE}"><resources><object id="1">${meshXml(box(1, 1, 1))}</object><object id="1">${
      meshXml(box(9, 9, 9))
    }</object></resources><build><item objectid="1"/></build></model>`
    assert.include(
      failure(modelPart3mf(twice), "d.3mf"),
      "3MF 3D/3dmodel.model: object id 1 is defined twice (3MF core specification 3.4.2: resource ids must be unique)"
    )
    const dtd = zip([{ name: "3D/3dmodel.model", content: `<?xml version="1.0"?><!DOCTYPE model [<!ENTITY a "1">]><model xmlns="${CORE}"/>` }])
    assert.include(failure(dtd, "d.3mf"), "3MF 3D/3dmodel.model has a DTD (<!DOCTYPE …>): the 3MF core specification (2.3.2) forbids DTDs")
    const latin = zip([{ name: "3D/3dmodel.model", content: `<?xml version="1.0" encoding="ISO-8859-1"?><model xmlns="${CORE}"/>` }])
    assert.include(failure(latin, "e.3mf"), "declares the encoding ISO-8859-1: the 3MF core specification (2.3.2) requires UTF-8")
  })

  it("an object with components is placed whatever its type; support meshes (solid or not) are left out", () => {
    const file = threeMf({
      objects: [
        { id: 1, mesh: box(10, 10, 10) },
        { id: 2, mesh: box(50, 50, 50), type: "solidsupport" },
        { id: 3, type: "support", components: [{ objectId: 1 }, { objectId: 2 }] }
      ],
      items: [{ objectId: 3 }]
    })
    expectGeometry(analyseModelSync(file, "c.3mf"), boxGeometry(10, 10, 10))
  })
})

describe("degenerate triangles", () => {
  it("a cube with a zero-area triangle beside each of its 12: the cube's figures, closed, and its edges all shared by two", () => {
    const geometry = analyseModelSync(binaryStl(withDegenerateTriangles(box(10, 10, 10))), "cube.stl")
    expectGeometry(geometry, boxGeometry(10, 10, 10, 24))
    assert.deepInclude(geometry.dfm!, { openEdges: 0, nonManifoldEdges: 0, inconsistentEdges: 0, degenerateTriangles: 12, shells: 1 })
  })
})

describe("unreadable files say what is wrong", () => {
  const cases: ReadonlyArray<readonly [string, Uint8Array, string, string]> = [
    ["empty", new Uint8Array(0), "part.stl", "the file is empty"],
    ["an HTML page", text("<!DOCTYPE html><html><body>Sign in</body></html>"), "part.stl", "HTML page"],
    ["JSON", text("{\"error\": \"denied\"}"), "part.stl", "JSON"],
    ["a truncated binary STL", binaryStl(box(1, 1, 1)).subarray(0, 400), "part.stl", "header says 12 triangles"],
    ["a short file", text("hello"), "part.stl", "too short"],
    [
      "a facet of two vertices",
      text("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\nendsolid x\n"),
      "part.stl",
      "facet 1 has 2 vertices"
    ],
    ["a vertex that is not a number", text("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 zero 0\n"), "part.stl", "three numbers"],
    ["an ASCII STL without facets", text("solid x\nendsolid x\n"), "part.stl", "no facets"],
    ["an OBJ face on a missing vertex", text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n"), "part.obj", "vertex 4 does not exist"],
    ["an OBJ vertex with a word", text("v 0 0 zero\n"), "part.obj", "line 1"],
    ["an OBJ without faces", text("v 0 0 0\n"), "part.obj", "no faces"],
    ["a 3MF that is not a ZIP", text("solid x"), "part.3mf", "not a ZIP archive"],
    ["a ZIP named .stl", zip([{ name: "a.txt", content: "a" }]), "part.stl", "ZIP archive, not an STL"],
    ["a 3MF without a model part", zip([{ name: "a.txt", content: "a" }]), "part.3mf", "no model part 3D/3dmodel.model"],
    ["a truncated 3MF", threeMf({ objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 1 }] }).subarray(0, 200), "part.3mf", "damaged"],
    [
      "a 3MF in furlongs",
      threeMf({ unit: "furlong", objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 1 }] }),
      "part.3mf",
      "unit \"furlong\" is unknown"
    ],
    ["a 3MF without build items", threeMf({ objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [] }), "part.3mf", "no items"],
    ["a 3MF item on a missing object", threeMf({ objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 7 }] }), "part.3mf", "no object 7"],
    [
      "a 3MF with a bad transform",
      threeMf({ objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 1, transform: "1 0 0" }] }),
      "part.3mf",
      "is not 12 numbers"
    ],
    [
      "a 3MF component cycle",
      threeMf({ objects: [{ id: 1, components: [{ objectId: 2 }] }, { id: 2, components: [{ objectId: 1 }] }], items: [{ objectId: 1 }] }),
      "part.3mf",
      "nest deeper"
    ],
    ["an unknown format", text("just some text"), "part.step", "not recognised"]
  ]
  for (const [what, bytes, fileName, expected] of cases) {
    it(what, () => {
      assert.include(failure(bytes, fileName), expected)
    })
  }
  it("the format follows the content when the name has no known extension", () => {
    expectGeometry(analyseModelSync(binaryStl(box(2, 3, 4)), "download"), boxGeometry(2, 3, 4))
    expectGeometry(analyseModelSync(text(obj(box(2, 3, 4))), null), boxGeometry(2, 3, 4))
    expectGeometry(analyseModelSync(threeMf({ objects: [{ id: 1, mesh: box(2, 3, 4) }], items: [{ objectId: 1 }] }), "x.bin"), boxGeometry(2, 3, 4))
  })
})

describe("the fetcher's address check", () => {
  it("refuses loopback, private, link-local, mapped and reserved addresses; allows public ones", () => {
    for (
      const address of [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "::",
        "fd00::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:7f00:1",
        "224.0.0.1",
        "not an address"
      ]
    ) {
      assert.isTrue(isPrivateAddress(address), address)
    }
    for (const address of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) assert.isFalse(isPrivateAddress(address), address)
  })

  it("reads MODEL_FETCH_*: defaults (no placeholder hosts), values, `none` for no placeholder hosts", () => {
    const read = (env: Record<string, string>) =>
      Effect.runSync(modelFetchConfig.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env))))
    const defaults = read({})
    assert.deepStrictEqual(
      [defaults.allowPrivate, defaults.maxBytes, Duration.toMillis(defaults.timeout), defaults.maxRedirects, defaults.placeholderHosts],
      [false, 100 * 1024 * 1024, 20_000, 3, []]
    )
    const set = read({
      MODEL_FETCH_ALLOW_PRIVATE: "true",
      MODEL_FETCH_MAX_BYTES: "1000",
      MODEL_FETCH_TIMEOUT: "5000 millis",
      MODEL_FETCH_MAX_REDIRECTS: "0",
      MODEL_FETCH_PLACEHOLDER_HOSTS: "example, .test"
    })
    assert.deepStrictEqual(
      [set.allowPrivate, set.maxBytes, Duration.toMillis(set.timeout), set.maxRedirects, set.placeholderHosts],
      [true, 1000, 5000, 0, ["example", "test"]]
    )
    assert.deepStrictEqual(read({ MODEL_FETCH_PLACEHOLDER_HOSTS: "none" }).placeholderHosts, [])
  })
})

// ---------------------------------------------------------------------------
// Budgets

const MiB = 1024 * 1024

/** The ModelError of analysing `bytes` in this thread with `limits`, and how long it took. */
const refusal = (bytes: Uint8Array, fileName: string, limits = DEFAULT_LIMITS) => {
  const start = performance.now()
  const error = Effect.runSync(Effect.flip(analyseModel(bytes, fileName, limits)))
  return { error, ms: performance.now() - start }
}

const limited = (maxTriangles: number, maxUnpackedBytes = DEFAULT_LIMITS.maxUnpackedBytes) => ({ maxTriangles, maxUnpackedBytes })

const MODEL_OPEN = `<?xml version="1.0" encoding="UTF-8"?>\n<model unit="millimeter">`

describe("budgets: triangles, counted through component instancing before anything is placed", () => {
  it("10⁶ and 10⁷ cubes from a kilobyte of nested components are refused at once, naming MODEL_MAX_TRIANGLES", () => {
    for (const [levels, placed] of [[6, 12_000_000], [7, 120_000_000]] as const) {
      const file = componentFanOut3mf(levels)
      assert.isBelow(file.length, 2000)
      const { error, ms } = refusal(file, "fan.3mf")
      assert.strictEqual(error.type, "ModelTooComplex")
      assert.strictEqual(error.reason, `it has more than 5000000 triangles (MODEL_MAX_TRIANGLES): the 3MF build places ${placed}`)
      assert.isBelow(ms, 500, "refused before placing anything")
    }
    // 10² cubes: placed and measured.
    expectGeometry(analyseModelSync(componentFanOut3mf(2), "fan.3mf"), { ...boxGeometry(19, 19, 1, 1200), volume: 100, surfaceArea: 600 })
  })

  it("each instance counts: a shared sub-assembly twice is twice its triangles; the budget is inclusive", () => {
    // Object 3 = two of object 2, object 2 = two cubes: four cubes, 48 triangles.
    const diamond = threeMf({
      objects: [
        { id: 1, mesh: box(1, 1, 1) },
        { id: 2, components: [{ objectId: 1 }, { objectId: 1, transform: "1 0 0 0 1 0 0 0 1 2 0 0" }] },
        { id: 3, components: [{ objectId: 2 }, { objectId: 2, transform: "1 0 0 0 1 0 0 0 1 0 2 0" }] },
        { id: 4, type: "support", mesh: box(500, 500, 500) }
      ],
      items: [{ objectId: 3 }, { objectId: 4 }]
    })
    assert.strictEqual(analyseModelSync(diamond, "d.3mf", limited(48)).triangleCount, 48)
    const { error } = refusal(diamond, "d.3mf", limited(47))
    assert.strictEqual(error.type, "ModelTooComplex")
    assert.include(error.reason, "more than 47 triangles (MODEL_MAX_TRIANGLES): the 3MF build places 48")
  })

  it("components nest up to 32 levels; 33, or a cycle, are refused", () => {
    const chain = (levels: number) =>
      threeMf({
        objects: [
          { id: 1, mesh: box(1, 1, 1) },
          ...Array.from({ length: levels }, (_, k) => ({ id: k + 2, components: [{ objectId: k + 1 }] }))
        ],
        items: [{ objectId: levels + 1 }]
      })
    assert.strictEqual(analyseModelSync(chain(32), "c.3mf").triangleCount, 12)
    assert.include(refusal(chain(33), "c.3mf").error.reason, "nest deeper than 32")
  })

  it("vertices are budgeted too (three a triangle), defined or placed", () => {
    const manyVertices: Mesh = { positions: new Float64Array(3 * 40).map((_, i) => i), triangles: Uint32Array.from([0, 1, 2]) }
    const { error } = refusal(threeMf({ objects: [{ id: 1, mesh: manyVertices }], items: [{ objectId: 1 }] }), "v.3mf", limited(10))
    assert.strictEqual(error.type, "ModelTooComplex")
    assert.include(error.reason, "more than 30 vertices (3 × MODEL_MAX_TRIANGLES)")
  })

  it("binary STL by its header, ASCII STL by its facets, OBJ by its faces", () => {
    const cube = box(1, 1, 1)
    for (
      const [bytes, fileName, detail] of [
        [binaryStl(cube), "c.stl", "the binary STL header says 12"],
        [text(asciiStl(cube)), "c.stl", "the ASCII STL has more facets"],
        [text(obj(cube)), "c.obj", "OBJ line"]
      ] as const
    ) {
      assert.strictEqual(analyseModelSync(bytes, fileName, limited(12)).triangleCount, 12, fileName)
      const { error } = refusal(bytes, fileName, limited(11))
      assert.strictEqual(error.type, "ModelTooComplex", fileName)
      assert.include(error.reason, `it has more than 11 triangles (MODEL_MAX_TRIANGLES): ${detail}`)
    }
  })
})

describe("budgets: the unpacked bytes of a 3MF, as produced, never as declared", () => {
  it("an entry declaring 10 bytes is charged what it inflates to; the sink never sees more than the budget", () => {
    const file = paddedCube3mf(3)
    const entry = readZip(file).get("3D/3dmodel.model")!
    assert.strictEqual(entry.size, 10)
    let seen = 0
    const budget = unpackBudget(limited(5_000_000, MiB))
    const error = Effect.runSync(
      Effect.flip(Effect.try({ try: () => streamEntry(file, entry, budget, (chunk) => void (seen += chunk.length)), catch: (e) => e as ModelError }))
    )
    assert.strictEqual(error.type, "ModelTooLarge")
    assert.include(error.reason, `the 3MF archive unpacks to more than ${MiB} bytes (MODEL_MAX_UNPACKED_BYTES): stopped in the entry 3D/3dmodel.model`)
    assert.isAtMost(seen, MiB)
    // With room for it, the same entry is read whole, and is a cube.
    assert.strictEqual(analyseModelSync(file, "padded.3mf", limited(100, 4 * MiB)).volume, 1)
  })

  it("the budget is shared by every part: six lying parts of 3 MiB pass 8 MiB in the third", () => {
    const file = lyingParts3mf(3)
    assert.strictEqual(analyseModelSync(file, "parts.3mf", limited(100, 32 * MiB)).triangleCount, 60)
    const { error } = refusal(file, "parts.3mf", limited(100, 8 * MiB))
    assert.strictEqual(error.type, "ModelTooLarge")
    assert.include(error.reason, "(MODEL_MAX_UNPACKED_BYTES): stopped in the entry 3D/part2.model")
  })

  it("an entry that declares more than the budget is refused before it is inflated", () => {
    const file = zip([{ name: "3D/3dmodel.model", content: "<model/>", declaredSize: 2 * MiB }])
    const entry = readZip(file).get("3D/3dmodel.model")!
    let called = false
    const error = Effect.runSync(
      Effect.flip(Effect.try({ try: () => streamEntry(file, entry, unpackBudget(limited(10, MiB)), () => (called = true)), catch: (e) => e as ModelError }))
    )
    assert.strictEqual(error.type, "ModelTooLarge")
    assert.include(error.reason, "the entry 3D/3dmodel.model declares 2097152 bytes")
    assert.isFalse(called)
  })

  it("a 1.6 MB deflate bomb of a gigabyte is refused after the budget, not after the gigabyte; one of zeros at once", () => {
    const bomb = paddedCube3mf(1024)
    assert.isBelow(bomb.length, 2_000_000)
    const { error, ms } = refusal(bomb, "bomb.3mf", limited(100, 64 * MiB))
    assert.strictEqual(error.type, "ModelTooLarge")
    assert.include(error.reason, "more than 67108864 bytes (MODEL_MAX_UNPACKED_BYTES)")
    assert.isBelow(ms, 5000)
    const zeros = zip([{
      name: "3D/3dmodel.model",
      content: "",
      declaredSize: 10,
      ...deflatedRepeat(MODEL_OPEN, new Uint8Array(MiB), 1024, "</model>")
    }])
    const nul = refusal(zeros, "zeros.3mf")
    assert.isUndefined(nul.error.type)
    assert.include(nul.error.reason, "is not well-formed XML")
    assert.isBelow(nul.ms, 1000)
  })
})

describe("the 3MF XML is read in linear time", () => {
  it("`<a` × 120,000 (415 bytes; 54 s with the old regular expressions) is refused at once as malformed XML", () => {
    const file = unclosedTags3mf()
    assert.strictEqual(file.length, 415)
    const { error, ms } = refusal(file, "a.3mf")
    assert.isUndefined(error.type)
    assert.include(error.reason, "3MF 3D/3dmodel.model is not well-formed XML")
    assert.isBelow(ms, 1000)
  })

  it("a comment or attribute of 16 MiB is refused (the parser would hold it whole)", () => {
    const file = zip([{
      name: "3D/3dmodel.model",
      content: "",
      ...deflatedRepeat(`${MODEL_OPEN}<!--`, new Uint8Array(MiB).fill(0x61), 20, "--></model>")
    }])
    assert.include(refusal(file, "c.3mf").error.reason, "more than 16777216 characters without a tag")
  })

  it("entities, prefixed attributes and CDATA are read as before", () => {
    const model = `<?xml version="1.0" encoding="UTF-8"?>
<m:model xmlns:m="http://schemas.microsoft.com/3dmanufacturing/core/2015/02" m:unit="&#99;entimeter">
<![CDATA[ <object id="9"/> ]]>
<m:resources><m:object id="o&amp;1">${meshXml(box(1, 2, 3))}</m:object></m:resources>
<m:build><m:item objectid="o&amp;1" transform="1 0 0 0 1 0 0 0 1 0 0 0"/></m:build></m:model>`
    expectGeometry(analyseModelSync(zip([{ name: "3D/3dmodel.model", content: model }]), "e.3mf"), boxGeometry(10, 20, 30))
  })
})

// ---------------------------------------------------------------------------
// The model analyser: worker threads

/** A legal model that takes a second or more: 400,000 cubes (4,800,000 triangles, within the budget) from a kilobyte. */
const slowModel = () => componentFanOut3mf([10, 10, 10, 10, 10, 4])

const analyserWith = (options: Partial<ModelAnalyserOptions>) => makeModelAnalyser({ ...defaultAnalyserOptions, ...options })

const cubeStl = () => binaryStl(box(10, 10, 10))

describe("the model analyser (worker threads)", () => {
  it.live("analyses in a thread what the engine's own thread measures, in every format", () =>
    Effect.scoped(Effect.gen(function*() {
      const analyser = yield* analyserWith({ workers: 2 })
      const files: ReadonlyArray<readonly [Uint8Array, string]> = [
        [binaryStl(cubeWithHole(10, 4)), "holed.stl"],
        [text(asciiStl(cubeWithHole(10, 4))), "holed.stl"],
        [text(obj(cubeWithHole(10, 4))), "holed.obj"],
        [
          threeMf({ unit: "inch", objects: [{ id: 1, mesh: cubeWithHole(10, 4) }], items: [{ objectId: 1, transform: "-1 0 0 0 1 0 0 0 1 0 0 0" }] }),
          "holed.3mf"
        ]
      ]
      for (const [bytes, fileName] of files) {
        const inThread = analyseModelSync(bytes, fileName)
        assert.deepStrictEqual(yield* analyser.analyse(bytes.slice(), fileName, "app"), inThread, fileName)
      }
      const error = yield* Effect.flip(analyser.analyse(text("solid x\nendsolid x\n"), "empty.stl", "app"))
      assert.strictEqual(error.type, "UnreadableModel")
      assert.include(error.reason, "no facets")
    })))

  it.live("starts a thread for the first file, another only for a file that would wait, and ends them once no file has come for the idle timeout", () =>
    Effect.scoped(Effect.gen(function*() {
      const analyser = yield* makeModelAnalyser({ ...defaultAnalyserOptions, workers: 2 }, Duration.millis(300))
      assert.deepStrictEqual(analyser.threadIds(), [], "no thread before a file")
      assert.strictEqual((yield* analyser.analyse(cubeStl(), "first.stl", "app")).volume, 1000)
      assert.lengthOf(analyser.threadIds(), 1, "one file at a time needs one thread")
      yield* Effect.all([analyser.analyse(cubeStl(), "own.stl", "app"), analyser.analyse(cubeStl(), "own.stl", "app")], { concurrency: 2 })
      assert.lengthOf(analyser.threadIds(), 1, "an app's files take turns on one of two threads")
      const slow = yield* Effect.forkChild(analyser.analyse(slowModel(), "slow.3mf", "a"))
      yield* Effect.sleep(Duration.millis(50))
      assert.strictEqual((yield* analyser.analyse(cubeStl(), "b.stl", "b")).volume, 1000)
      assert.lengthOf(analyser.threadIds(), 2, "another app's file while one runs starts the second")
      yield* Fiber.interrupt(slow)
      yield* Effect.sleep(Duration.millis(100))
      assert.strictEqual((yield* analyser.analyse(cubeStl(), "second.stl", "app")).volume, 1000)
      yield* Effect.sleep(Duration.millis(200))
      assert.isAtLeast(analyser.threadIds().length, 1, "a file within the timeout keeps the pool")
      yield* Effect.sleep(Duration.millis(400))
      assert.deepStrictEqual(analyser.threadIds(), [], "gone once idle")
      assert.strictEqual((yield* analyser.analyse(cubeStl(), "after.stl", "app")).volume, 1000, "a file after a quiet spell starts one again")
      assert.lengthOf(analyser.threadIds(), 1)
    })))

  it.live("over the time budget the thread is terminated and replaced; the next file is analysed", () =>
    Effect.scoped(Effect.gen(function*() {
      const analyser = yield* analyserWith({ workers: 1, timeout: Duration.millis(400) })
      yield* analyser.analyse(cubeStl(), "warm.stl", "app")
      const [before] = analyser.threadIds()
      const start = performance.now()
      const error = yield* Effect.flip(analyser.analyse(slowModel(), "slow.3mf", "app"))
      assert.strictEqual(error.type, "ModelAnalysisTimeout")
      assert.strictEqual(error.reason, "its analysis took longer than 400ms (MODEL_ANALYSIS_TIMEOUT)")
      assert.isBelow(performance.now() - start, 2500)
      assert.notInclude(analyser.threadIds(), before, "the thread that ran it is gone")
      assert.strictEqual((yield* analyser.analyse(cubeStl(), "cube.stl", "app")).volume, 1000)
    })))

  it.live("the time budget runs from when the task starts, not while it waits for a thread", () =>
    Effect.scoped(Effect.gen(function*() {
      const analyser = yield* analyserWith({ workers: 1, timeout: Duration.millis(600) })
      const slow = yield* Effect.forkChild(analyser.analyse(slowModel(), "slow.3mf", "a"))
      yield* Effect.sleep(Duration.millis(50))
      const start = performance.now()
      // App b waits for the only thread (held by a until its budget ends), then has its own budget.
      const geometry = yield* analyser.analyse(cubeStl(), "cube.stl", "b")
      assert.strictEqual(geometry.volume, 1000)
      assert.isAbove(performance.now() - start, 500, "it waited longer than the budget, and was still analysed")
      assert.strictEqual((yield* Effect.flip(Fiber.join(slow))).type, "ModelAnalysisTimeout")
    })))

  it.live("a file queued while every thread runs a file over its budget is analysed once they are terminated", () =>
    Effect.scoped(Effect.gen(function*() {
      const analyser = yield* analyserWith({ workers: 2, timeout: Duration.millis(600) })
      const slow = yield* Effect.forkChild(
        Effect.all([analyser.analyse(slowModel(), "slow.3mf", "a"), analyser.analyse(slowModel(), "slow.3mf", "b")].map(Effect.flip), { concurrency: 2 })
      )
      yield* Effect.sleep(Duration.millis(100))
      assert.strictEqual((yield* analyser.analyse(cubeStl(), "cube.stl", "c")).volume, 1000)
      assert.deepStrictEqual((yield* Fiber.join(slow)).map((error) => error.type), ["ModelAnalysisTimeout", "ModelAnalysisTimeout"])
    })))

  it.live("a thread out of memory is a refusal naming the limit; the pool goes on", () =>
    Effect.scoped(Effect.gen(function*() {
      const analyser = yield* analyserWith({ workers: 1, maxMemoryMb: 32 })
      // One face of eight million corners: the line's words alone outgrow a 32 MB heap.
      const huge = text(`v 0 0 0\nv 1 0 0\nv 0 1 0\nf${" 1".repeat(8_000_000)}\n`)
      const error = yield* Effect.flip(analyser.analyse(huge, "huge.obj", "app"))
      assert.strictEqual(error.type, "ModelAnalysisOutOfMemory")
      assert.strictEqual(error.reason, "its analysis needed more than 32 MB of memory (MODEL_ANALYSIS_MAX_MEMORY_MB)")
      assert.strictEqual((yield* analyser.analyse(cubeStl(), "cube.stl", "app")).volume, 1000)
    })))

  it.live("an app runs at most half the threads: its next file waits for its own turn, another app's does not", () =>
    Effect.scoped(Effect.gen(function*() {
      const analyser = yield* analyserWith({ workers: 2, timeout: Duration.millis(1000) })
      assert.strictEqual(perAppOf({ ...defaultAnalyserOptions, workers: 2 }), 1)
      assert.strictEqual(perAppOf({ ...defaultAnalyserOptions, workers: 5 }), 3)
      yield* Effect.all([analyser.analyse(cubeStl(), "warm.stl", "x"), analyser.analyse(cubeStl(), "warm.stl", "y")], { concurrency: 2 })
      const start = performance.now()
      const finished: Record<string, number> = {}
      const timed = (label: string, effect: Effect.Effect<unknown, ModelError>) =>
        Effect.exit(effect).pipe(Effect.tap(() => Effect.sync(() => (finished[label] = performance.now() - start))))
      const greedy = yield* Effect.forkChild(timed("a: slow", analyser.analyse(slowModel(), "slow.3mf", "a")))
      yield* Effect.sleep(Duration.millis(50))
      const [own, other] = yield* Effect.all([
        timed("a: cube", analyser.analyse(cubeStl(), "cube.stl", "a")),
        timed("b: cube", analyser.analyse(cubeStl(), "cube.stl", "b"))
      ], { concurrency: 2 })
      yield* Fiber.join(greedy)
      assert.isTrue(Exit.isSuccess(own) && Exit.isSuccess(other))
      assert.isBelow(finished["b: cube"]!, 700, "app b is not kept waiting by app a")
      assert.isAbove(finished["a: cube"]!, finished["a: slow"]! - 50, "app a's second file waited for its first")
    })))

  it.live("an analysis interrupted (the request gone) ends its thread", () =>
    Effect.scoped(Effect.gen(function*() {
      const analyser = yield* analyserWith({ workers: 1 })
      yield* analyser.analyse(cubeStl(), "warm.stl", "app")
      const [before] = analyser.threadIds()
      const outcome = yield* analyser.analyse(slowModel(), "slow.3mf", "app").pipe(Effect.timeoutOption(Duration.millis(300)))
      assert.isTrue(outcome._tag === "None")
      assert.notInclude(analyser.threadIds(), before)
      assert.strictEqual((yield* analyser.analyse(cubeStl(), "cube.stl", "app")).volume, 1000)
    })))

  it("reads MODEL_ANALYSIS_* and MODEL_MAX_*: defaults, values, and refuses non-positive numbers", () => {
    const read = (env: Record<string, string>) =>
      Effect.runSync(modelAnalysisConfig.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env))))
    const defaults = read({})
    assert.deepStrictEqual(
      [defaults.workers, Duration.toMillis(defaults.timeout), defaults.maxMemoryMb, defaults.maxTriangles, defaults.maxUnpackedBytes],
      [2, 20_000, 512, 5_000_000, 512 * MiB]
    )
    const set = read({
      MODEL_ANALYSIS_WORKERS: "4",
      MODEL_ANALYSIS_TIMEOUT: "5 seconds",
      MODEL_ANALYSIS_MAX_MEMORY_MB: "512",
      MODEL_MAX_TRIANGLES: "1000",
      MODEL_MAX_UNPACKED_BYTES: "1048576"
    })
    assert.deepStrictEqual(
      [set.workers, Duration.toMillis(set.timeout), set.maxMemoryMb, set.maxTriangles, set.maxUnpackedBytes],
      [4, 5000, 512, 1000, MiB]
    )
    assert.isUndefined(modelAnalysisProblem(set))
    assert.strictEqual(modelAnalysisProblem({ ...set, workers: 0 }), "MODEL_ANALYSIS_WORKERS must be positive, not 0")
    assert.strictEqual(modelAnalysisProblem({ ...set, maxTriangles: -1 }), "MODEL_MAX_TRIANGLES must be positive, not -1")
  })
})
