// ReefQuery against its anchors, on a stream of 100,000 documents generated from the Examples'
// models (contacts with an embedded address, businesses with a list of addresses):
//
// - scan/<path>: count the documents where `path` equals "Los Angeles", with Reef's `Query`,
//   with libbson in C (bson_iter_find_descendant, or a recursive walk for the array of embedded
//   documents) and with a decode-then-filter Swift baseline (every document decoded into a
//   dictionary tree, then tested).
// - sort/address.city: sort the stream on a dotted key with `SortSpecification`, against sorting
//   Swift keys extracted beforehand (the same comparisons on `String?`, the same stable order).
//
// One operation is one pass over the whole stream; these groups use a scaling factor of 1.

import BenchSupport
import Benchmark
import CBench
import ReefBSON
import ReefQuery

/// A decoded document: the dictionary tree of the decode-then-filter baseline.
indirect enum Tree {
  case string(String)
  case integer(Int64)
  case double(Double)
  case bool(Bool)
  case document([String: Tree])
  case array([Tree])
  case other
}

func decodeTree(_ document: Document) -> [String: Tree] {
  var result: [String: Tree] = [:]
  for element in document { result[element.key] = decodeTree(element.value) }
  return result
}

func decodeTree(_ value: BSON) -> Tree {
  switch value {
  case .string(let string): .string(string)
  case .int32(let number): .integer(Int64(number))
  case .int64(let number): .integer(number)
  case .double(let number): .double(number)
  case .bool(let flag): .bool(flag)
  case .document(let document): .document(decodeTree(document))
  case .array(let array): .array(array.map(decodeTree))
  default: .other
  }
}

/// The baseline's test of `address.city == city` on a decoded tree.
func treeDottedEquals(_ tree: [String: Tree], _ city: String) -> Bool {
  if case .document(let address)? = tree["address"], case .string(let value)? = address["city"] { return value == city }
  return false
}

/// The baseline's test of `addresses.city == city` (any element) on a decoded tree.
func treeArrayEquals(_ tree: [String: Tree], _ city: String) -> Bool {
  guard case .array(let addresses)? = tree["addresses"] else { return false }
  for case .document(let address) in addresses {
    if case .string(let value)? = address["city"], value == city { return true }
  }
  return false
}

/// Registers one pass-over-the-stream benchmark (scaling factor 1).
func registerScan(_ name: String, _ operation: @escaping () -> Void) {
  var configuration = reefBenchmarkConfiguration
  configuration.scalingFactor = .one
  configuration.maxIterations = 200
  register(name, configuration: configuration, operation)
}

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = reefBenchmarkConfiguration
  let count = 100_000
  let (bytes, offsets) = generateStream(count: count)
  let pinned = PinnedBytes(bytes)
  let documents = pinned.documents(startingAt: offsets)
  let city = "Los Angeles"

  for path in ["address.city", "addresses.city"] {
    let query = try! Query(filter: Document(extendedJSON: #"{"\#(path)": "\#(city)"}"#))
    let reef = { () -> Int in
      var matches = 0
      for document in documents where query.matches(document) { matches += 1 }
      return matches
    }
    let libbson = { () -> Int in
      offsets.withUnsafeBufferPointer { table in
        path == "address.city"
          ? Int(cb_scan_path_equals_utf8(pinned.pointer, table.baseAddress, count, path, city, city.utf8.count))
          : Int(
            cb_scan_array_field_equals_utf8(
              pinned.pointer, table.baseAddress, count, "addresses", "city", city, city.utf8.count))
      }
    }
    let decode = { () -> Int in
      var matches = 0
      for document in documents {
        let tree = decodeTree(document)
        if path == "address.city" ? treeDottedEquals(tree, city) : treeArrayEquals(tree, city) { matches += 1 }
      }
      return matches
    }
    let expected = libbson()
    check(expected > 0, "no document has \(path) == \(city)")
    check(reef() == expected, "Query found \(reef()) documents with \(path) == \(city), libbson \(expected)")
    check(
      decode() == expected, "the decoded trees give \(decode()) documents with \(path) == \(city), libbson \(expected)")
    printError("reef benchmarks: scan \(path): \(expected) of \(count) documents match")

    registerScan("scan/\(path)/reef-Query") { consume(reef()) }
    registerScan("scan/\(path)/libbson-find_descendant") { consume(libbson()) }
    registerScan("scan/\(path)/swift-decode-tree") { consume(decode()) }
    registerPair(
      "scan/\(path)/reef-Query~libbson-find_descendant", reef: { consume(reef()) }, anchor: { consume(libbson()) })
    registerPair("scan/\(path)/reef-Query~swift-decode-tree", reef: { consume(reef()) }, anchor: { consume(decode()) })
  }

  // Sorting on a dotted key; businesses have no `address` and sort first, as null.
  let sort = SortSpecification([SortKey(FieldPath("address.city"))])
  let keys: [String?] = documents.map { document in
    if case .string(let city)? = document["address.city"] { return city }
    return nil
  }
  let reefSort = { () -> [Document] in
    // Sorting can fail only for parallel arrays, which this one key cannot reach.
    do { return try sort.sorted(documents) } catch { fatalError("sorting failed: \(error)") }
  }
  let swiftSort = { () -> [Document] in
    var order = Array(documents.indices)
    order.sort { left, right in
      switch (keys[left], keys[right]) {
      case (nil, nil): return left < right
      case (nil, _): return true
      case (_, nil): return false
      case (let a?, let b?): return a == b ? left < right : a < b
      }
    }
    return order.map { documents[$0] }
  }
  let reefOrder = reefSort().map { $0["_id"]! }
  let swiftOrder = swiftSort().map { $0["_id"]! }
  check(reefOrder == swiftOrder, "SortSpecification and the Swift key sort disagree")
  registerScan("sort/address.city/reef-SortSpecification") { consume(reefSort()) }
  registerScan("sort/address.city/swift-presorted-keys") { consume(swiftSort()) }
  registerPair(
    "sort/address.city/reef-SortSpecification~swift-presorted-keys", reef: { consume(reefSort()) },
    anchor: { consume(swiftSort()) })
}
