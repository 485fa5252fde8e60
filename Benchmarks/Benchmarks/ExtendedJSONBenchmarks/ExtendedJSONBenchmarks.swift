// BSON -> Extended JSON and back: Reef against libbson's bson_as_canonical_extended_json,
// bson_as_relaxed_extended_json and bson_new_from_json (in C, Sources/CBench).
//
// Reef's writer and parser are probed in a forked child first: while either still stops with
// fatalError, its benchmarks are skipped with a message and only the libbson anchors run.

import BenchSupport
import Benchmark
import CBench
import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

private func warn(_ message: String) { printError("reef benchmarks: \(message)") }

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = reefBenchmarkConfiguration

  for dataset in Dataset.extended {
    let bytes = dataset.bson
    let document = try! Document(bytes: bytes)
    let pinned = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
    pinned.copyBytes(from: bytes)
    nonisolated(unsafe) let p = UnsafePointer(pinned.baseAddress!.assumingMemoryBound(to: UInt8.self))
    let n = bytes.count
    let jsonBytes = dataset.json
    let jsonString = dataset.jsonString

    check(cb_to_canonical_json(p, n) > 0, "libbson cannot write \(dataset.name)")
    check(
      cb_from_json(jsonString, jsonBytes.count) == n, "libbson's parse of \(dataset.name)_bson.json differs in length")

    // MARK: BSON -> canonical / relaxed Extended JSON

    do {
      let canonical = document.extendedJSON(.canonical)
      // Interop check: libbson reads Reef's canonical output back to the same bytes.
      var back = [UInt8](repeating: 0, count: n + 64)
      let backLength = canonical.withCString { cb_from_json_copy($0, canonical.utf8.count, &back, back.count) }
      if backLength != n || Array(back[0..<n]) != bytes {
        warn("MISMATCH: libbson does not read Reef's canonical \(dataset.name) back to the same bytes")
      }
    }
    var buffer = [UInt8]()
    buffer.reserveCapacity(jsonBytes.count * 2)
    let canonical: KeyValuePairs<String, () -> Void> = [
      "reef-extendedJSON": { blackHole(document.extendedJSON(.canonical)) },
      "reef-appendExtendedJSON": {
        buffer.removeAll(keepingCapacity: true)
        document.appendExtendedJSON(to: &buffer, mode: .canonical)
        blackHole(buffer.count)
      },
      "libbson-bson_as_canonical_extended_json": { blackHole(cb_to_canonical_json(p, n)) },
    ]
    registerGroup(
      "ejson-canonical", dataset.name, canonical,
      pairs: [
        ("reef-extendedJSON", "libbson-bson_as_canonical_extended_json"),
        ("reef-appendExtendedJSON", "libbson-bson_as_canonical_extended_json"),
      ])
    let relaxed: KeyValuePairs<String, () -> Void> = [
      "reef-extendedJSON": { blackHole(document.extendedJSON(.relaxed)) },
      "libbson-bson_as_relaxed_extended_json": { blackHole(cb_to_relaxed_json(p, n)) },
    ]
    registerGroup(
      "ejson-relaxed", dataset.name, relaxed, pairs: [("reef-extendedJSON", "libbson-bson_as_relaxed_extended_json")])

    // MARK: Extended JSON -> BSON

    do {
      do {
        // pymongo moved `_id` to the front when it wrote the .bson files; Reef keeps JSON order.
        let parsed = try Document(extendedJSON: jsonString)
        if idFirst(parsed).bytes != bytes {
          warn("MISMATCH: Reef's parse of \(dataset.name)_bson.json differs from \(dataset.name)_bson.bson")
        }
      } catch {
        warn("MISMATCH: Reef cannot parse \(dataset.name)_bson.json: \(error)")
      }
    }
    let libbsonParse: () -> Void = {
      blackHole(
        jsonBytes.withUnsafeBufferPointer { json in
          json.withMemoryRebound(to: CChar.self) { cb_from_json($0.baseAddress, json.count) }
        })
    }
    let parse: KeyValuePairs<String, () -> Void> = [
      "reef-Document-extendedJSON": { blackHole(try? Document(extendedJSON: jsonString)) },
      "reef-ExtendedJSONParser-bytes": {
        var parser = ExtendedJSONParser(bytes: jsonBytes)
        blackHole(try? parser.nextDocument())
      },
      "libbson-bson_new_from_json": libbsonParse,
    ]
    registerGroup(
      "ejson-parse", dataset.name, parse,
      pairs: [
        ("reef-Document-extendedJSON", "libbson-bson_new_from_json"),
        ("reef-ExtendedJSONParser-bytes", "libbson-bson_new_from_json"),
      ])
  }
}
