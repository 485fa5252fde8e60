// Reef's core against libbson anchors written in C (Sources/CBench): validation, dotted-path
// lookup, building, and iteration without allocation. Every Reef benchmark has an anchor that
// runs in the same process, on the same bytes, in the same run; Scripts/ratios.sh turns the
// pairs into ratios.
//
// Names are "<group>/<dataset>/<implementation>". One operation is one document.

import BenchSupport
import Benchmark
import CBench
import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads every value of a document the way `cb_iter_walk` does: key length, scalars decoded,
/// strings and binaries touched in place, embedded documents and arrays recursed into.
/// Allocates nothing.
@inline(never)
func reefWalk(_ document: Document) -> Int {
  var acc = 0
  for element in document {
    element.withUnsafeKeyBytes { acc &+= $0.count }
    switch element.type {
    case .document, .array:
      switch element.value {
      case .document(let d): acc &+= reefWalk(d)
      case .array(let a): acc &+= reefWalk(a.document)
      default: break
      }
    case .string, .javascript, .symbol, .binary, .regex, .dbPointer, .javascriptWithScope:
      // Reef has no allocation-free way to reach a code-with-scope's scope as a Document (its
      // `value` decodes the code into a String), so the scope's bytes are touched, not walked.
      element.withUnsafeValueBytes { raw in acc &+= raw.count &+ Int(raw[raw.count &- 1]) }
    default:
      switch element.value {
      case .double(let d): acc &+= Int(truncatingIfNeeded: d.bitPattern)
      case .int32(let v): acc &+= Int(v)
      case .int64(let v): acc &+= Int(v)
      case .bool(let v): acc &+= v ? 1 : 0
      case .datetime(let v): acc &+= Int(v.millisecondsSinceEpoch)
      case .objectId(let o): acc &+= Int(o.bytes.11)
      case .timestamp(let t): acc &+= Int(t.timestamp) &+ Int(t.increment)
      case .decimal128(let d): acc &+= Int(truncatingIfNeeded: d.low)
      default: acc &+= 1
      }
    }
  }
  return acc
}

/// The top-level loop of the allocation check: types only.
@inline(never)
func reefTypes(_ document: Document) -> Int {
  var acc = 0
  for element in document { acc &+= Int(element.type.rawValue) }
  return acc
}

/// A dotted path that exists in a dataset and the value found there.
struct PathCase {
  let dataset: String
  let path: String
  let expected: BSON
}

let pathCases = [
  // flat: a single segment, the 137th of 145 keys, int32.
  PathCase(dataset: "flat", path: "CFujXoob", expected: .int32(-92)),
  // deep: six levels down the "left" side of a tree whose every level lists "right" first.
  PathCase(dataset: "deep", path: "left.left.left.left.left.leftValue", expected: .string("ONIZsGFD")),
  // full: the last element of the last array (87th key of 91).
  PathCase(dataset: "full", path: "UwZlNrHv.7", expected: .int32(4)),
]

/// Compares an element's value with `expected` without decoding it into a `BSON`.
@inline(__always)
func elementEquals(_ element: Document.Element, _ expected: BSON) -> Bool {
  switch expected {
  case .int32(let v):
    return element.type == .int32
      && element.withUnsafeValueBytes { Int32(littleEndian: $0.loadUnaligned(as: Int32.self)) } == v
  case .string(var s):
    guard element.type == .string else { return false }
    return s.withUTF8 { utf8 in
      element.withUnsafeValueBytes { raw in
        raw.count == utf8.count + 5 && memcmp(raw.baseAddress! + 4, utf8.baseAddress!, utf8.count) == 0
      }
    }
  default:
    return element.value == expected
  }
}

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = reefBenchmarkConfiguration

  let datasets = Dataset.extended
  if datasets.isEmpty { return }

  for dataset in datasets {
    let bytes = PinnedBytes(dataset.bson)
    let document = try! Document(bytesNoCopy: bytes.buffer, owner: nil)

    // Sanity: both sides accept the bytes and walk the same number of values.
    check(cb_iter_walk(bytes.pointer, bytes.count) >= 0, "libbson cannot walk \(dataset.name)")
    check(cb_validate_utf8(bytes.pointer, bytes.count), "bson_validate rejects \(dataset.name)")
    check(try! Document.validatedLength(of: bytes.buffer) == bytes.count, "validatedLength(\(dataset.name))")

    // MARK: 1. Validating walk of every value

    registerGroup(
      "validate", dataset.name,
      [
        "reef-validatedLength": { blackHole(try? Document.validatedLength(of: bytes.buffer)) },
        "reef-bytesNoCopy": { blackHole(try? Document(bytesNoCopy: bytes.buffer, owner: nil)) },
        "libbson-iter-walk": { blackHole(cb_iter_walk(bytes.pointer, bytes.count)) },
        "libbson-bson_validate": { blackHole(cb_validate_utf8(bytes.pointer, bytes.count)) },
      ],
      pairs: [
        ("reef-validatedLength", "libbson-iter-walk"), ("reef-bytesNoCopy", "libbson-iter-walk"),
        ("reef-validatedLength", "libbson-bson_validate"),
      ])

    // MARK: 6. Iterating allocates nothing (mallocCountTotal per operation)

    registerGroup(
      "iterate", dataset.name,
      [
        "reef-types": { blackHole(reefTypes(document)) },
        "reef-walk-values": { blackHole(reefWalk(document)) },
        "libbson-iter-walk": { blackHole(cb_iter_walk(bytes.pointer, bytes.count)) },
      ],
      pairs: [("reef-walk-values", "libbson-iter-walk")])

    // MARK: 3. Building

    // Straight-line code with literal keys and values on both sides (GeneratedBuild.swift and
    // generated_build.c, from the same JSON).
    let generated: (swift: () -> Document, c: (UnsafeMutablePointer<UInt8>?, Int) -> Int)? =
      switch dataset.name {
      case "flat": (buildFlat, cb_build_flat)
      case "deep": (buildDeep, cb_build_deep)
      default: nil
      }
    if let generated {
      check(generated.swift().bytes == dataset.bson, "buildFlat/buildDeep do not reproduce \(dataset.name)_bson.bson")
      var cBuilt = [UInt8](repeating: 0, count: bytes.count)
      check(generated.c(&cBuilt, cBuilt.count) == bytes.count && cBuilt == dataset.bson, "cb_build_\(dataset.name)")
      registerGroup(
        "build", dataset.name,
        [
          "reef-DocumentBuilder": { blackHole(generated.swift()) },
          "libbson-bson_append": { blackHole(generated.c(nil, 0)) },
        ],
        pairs: [("reef-DocumentBuilder", "libbson-bson_append")])
    }

    // The same documents rebuilt from a list of operations read from the BSON (as a decoder or
    // a converter would): the interpretation is part of what is measured, on both sides.
    if let program = BuildProgram(document), let cProgram = cb_program_new(bytes.pointer, bytes.count) {
      let rebuilt = program.build()
      check(rebuilt.bytes == dataset.bson, "DocumentBuilder does not reproduce \(dataset.name)_bson.bson")
      var cRebuilt = [UInt8](repeating: 0, count: bytes.count)
      let cLength = cb_program_build_copy(cProgram, &cRebuilt, cRebuilt.count)
      check(cLength == bytes.count && cRebuilt == dataset.bson, "libbson does not reproduce \(dataset.name)_bson.bson")
      nonisolated(unsafe) let c = cProgram

      registerGroup(
        "build-program", dataset.name,
        [
          "reef-DocumentBuilder": { blackHole(program.build()) },
          "libbson-bson_append": { blackHole(cb_program_build(c)) },
        ],
        pairs: [("reef-DocumentBuilder", "libbson-bson_append")])
    }
  }

  // MARK: 2. Dotted-path lookup plus compare

  for pathCase in pathCases {
    guard let dataset = datasets.first(where: { $0.name == pathCase.dataset }) else { continue }
    let bytes = PinnedBytes(dataset.bson)
    let document = try! Document(bytesNoCopy: bytes.buffer, owner: nil)
    let path = pathCase.path
    let expected = pathCase.expected
    let cPath = Array(path.utf8CString)

    check(document[path] == expected, "\(dataset.name): \(path) is \(String(describing: document[path]))")
    check(document.element(atPath: path).map { elementEquals($0, expected) } == true, "elementEquals \(path)")
    check(document.element(atPath: path)?.equals(expected) == true, "Element.equals \(path)")

    let cLookup: @Sendable () -> Bool
    switch expected {
    case .int32(let v):
      cLookup = {
        cPath.withUnsafeBufferPointer { cb_path_equals_int32(bytes.pointer, bytes.count, $0.baseAddress, v) }
      }
    case .string(let s):
      let cExpected = Array(s.utf8CString)
      let n = s.utf8.count
      cLookup = {
        cPath.withUnsafeBufferPointer { p in
          cExpected.withUnsafeBufferPointer { e in
            cb_path_equals_utf8(bytes.pointer, bytes.count, p.baseAddress, e.baseAddress, n)
          }
        }
      }
    default: fatalError("no C comparison for \(expected)")
    }
    check(cLookup(), "libbson: \(path) in \(dataset.name)")

    registerGroup(
      "path", dataset.name,
      [
        "reef-subscript": { blackHole(document[path] == expected) },
        "reef-element": { blackHole(document.element(atPath: path).map { elementEquals($0, expected) } ?? false) },
        "reef-equals": { blackHole(document.element(atPath: path)?.equals(expected) ?? false) },
        "libbson-find_descendant": { blackHole(cLookup()) },
      ],
      pairs: [
        ("reef-subscript", "libbson-find_descendant"), ("reef-element", "libbson-find_descendant"),
        ("reef-equals", "libbson-find_descendant"),
      ])
  }
}
