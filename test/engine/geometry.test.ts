/**
 * The model analysis on real files written here: analytic shapes (unit
 * cube, 2×3×4 box, cube with a square hole) in every format, measures exact
 * to 1e-9 relative; 3MF units, build and component transforms, several
 * objects; and malformed files, each a ModelError saying what is wrong.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect } from "effect"
import { analyse, type Geometry, type Mesh, ModelError } from "../../src/engine/geometry/mesh.ts"
import { analyseModel, analyseModelSync } from "../../src/engine/geometry/model.ts"
import { isPrivateAddress, optionsFromConfig } from "../../src/engine/geometry/ModelFetcher.ts"
import { asciiStl, binaryStl, box, cubeWithHole, obj, sphere, threeMf, zip } from "../../src/engine/geometry/writers.ts"

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
      "v 0 0 0", "v 2 0 0", "v 2 3 0", "v 0 3 0", "v 0 0 4", "v 2 0 4", "v 2 3 4", "v 0 3 4",
      "vt 0 0", "vn 0 0 1",
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

describe("unreadable files say what is wrong", () => {
  const cases: ReadonlyArray<readonly [string, Uint8Array, string, string]> = [
    ["empty", new Uint8Array(0), "part.stl", "the file is empty"],
    ["an HTML page", text("<!DOCTYPE html><html><body>Sign in</body></html>"), "part.stl", "HTML page"],
    ["JSON", text("{\"error\": \"denied\"}"), "part.stl", "JSON"],
    ["a truncated binary STL", binaryStl(box(1, 1, 1)).subarray(0, 400), "part.stl", "header says 12 triangles"],
    ["a short file", text("hello"), "part.stl", "too short"],
    ["a facet of two vertices", text("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\nendsolid x\n"), "part.stl", "facet 1 has 2 vertices"],
    ["a vertex that is not a number", text("solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 zero 0\n"), "part.stl", "three numbers"],
    ["an ASCII STL without facets", text("solid x\nendsolid x\n"), "part.stl", "no facets"],
    ["an OBJ face on a missing vertex", text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n"), "part.obj", "vertex 4 does not exist"],
    ["an OBJ vertex with a word", text("v 0 0 zero\n"), "part.obj", "line 1"],
    ["an OBJ without faces", text("v 0 0 0\n"), "part.obj", "no faces"],
    ["a 3MF that is not a ZIP", text("solid x"), "part.3mf", "not a ZIP archive"],
    ["a ZIP named .stl", zip([{ name: "a.txt", content: "a" }]), "part.stl", "ZIP archive, not an STL"],
    ["a 3MF without a model part", zip([{ name: "a.txt", content: "a" }]), "part.3mf", "no model part 3D/3dmodel.model"],
    ["a truncated 3MF", threeMf({ objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 1 }] }).subarray(0, 200), "part.3mf", "damaged"],
    ["a 3MF in furlongs", threeMf({ unit: "furlong", objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 1 }] }), "part.3mf", "unit \"furlong\" is unknown"],
    ["a 3MF without build items", threeMf({ objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [] }), "part.3mf", "no items"],
    ["a 3MF item on a missing object", threeMf({ objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 7 }] }), "part.3mf", "no object 7"],
    ["a 3MF with a bad transform", threeMf({ objects: [{ id: 1, mesh: box(1, 1, 1) }], items: [{ objectId: 1, transform: "1 0 0" }] }), "part.3mf", "is not 12 numbers"],
    ["a 3MF component cycle", threeMf({ objects: [{ id: 1, components: [{ objectId: 2 }] }, { id: 2, components: [{ objectId: 1 }] }], items: [{ objectId: 1 }] }), "part.3mf", "nest deeper"],
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
    for (const address of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "224.0.0.1", "not an address"]) {
      assert.isTrue(isPrivateAddress(address), address)
    }
    for (const address of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) assert.isFalse(isPrivateAddress(address), address)
  })

  it("reads MODEL_FETCH_*: defaults (no placeholder hosts), values, `none` for no placeholder hosts", () => {
    const read = (env: Record<string, string>) =>
      Effect.runSync(optionsFromConfig.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env))))
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
