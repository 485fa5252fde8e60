// The store operations of ReefProfile: StoreBenchmarks' import, lookup and queries, timed by phase.
import BenchSupport
import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#endif

func monotonicSeconds() -> Double { Double(wallClockNanoseconds()) / 1e9 }

func threadCPUSeconds() -> Double { Double(threadCPUNanoseconds()) / 1e9 }

/// Documents of the Examples' model, as views of one stream (`generateStream(count:first:)`).
func generatedDocuments(_ count: Int, first: Int = 0) -> [Document] {
  let (bytes, offsets) = generateStream(count: count, first: first)
  return PinnedBytes(bytes).documents(startingAt: offsets)
}

/// Runs the store operation the command line names (`store-insert`, `store-get`, `store-query`,
/// `store-commit`) with its further arguments.
func profileStore() {
  let operation = choiceArgument(1, ["store-insert", "store-get", "store-query", "store-commit"])
  let count = countArgument(2, default: 1_000_000)
  let path = "/tmp/reef-profile-\(getpid()).reef"
  defer { try? Store.deleteFiles(at: path) }
  let documents = generatedDocuments(count)
  switch operation {
  case "store-insert":
    let start = monotonicSeconds()
    var inserted = 0.0
    do {
      let store = try! Store(path: path, options: StoreOptions(initialMapSize: 1 << 30))
      try! store.write { transaction in
        let contacts = transaction.collection("contacts")
        for document in documents { try contacts.insert(document) }
        inserted = monotonicSeconds()
      }
      printError("store file: \(store.fileSize) bytes")
    }
    let end = monotonicSeconds()
    printError(
      "inserts: \(Int((inserted - start) * 1e9) / count) ns each; commit and close: \(Int((end - inserted) * 1000)) ms; "
        + "total \(Int((end - start) * 1000)) ms")
  case "store-commit":
    // StoreBenchmarks' commit group: COUNT documents, then CALLS inserts of one document each in
    // its own write transaction at DURABILITY (full, normal or none); wall clock and thread CPU
    // per commit, medians.
    let calls = countArgument(3, default: 2_000)
    let durability = Durability(rawValue: choiceArgument(4, Durability.allCases.map(\.rawValue)))!
    let store = try! Store(path: path, options: StoreOptions(initialMapSize: 1 << 30, durability: durability))
    try! store.write { transaction in
      for document in documents { try transaction.collection("contacts").insert(document) }
    }
    let fresh = generatedDocuments(calls, first: 50_000_000)
    var walls: [Double] = []
    var cpus: [Double] = []
    for call in 0..<calls {
      let document = fresh[call]
      let start = monotonicSeconds()
      let cpu = threadCPUSeconds()
      try! store.collection("contacts").insert(document)
      cpus.append(threadCPUSeconds() - cpu)
      walls.append(monotonicSeconds() - start)
    }
    walls.sort()
    cpus.sort()
    printError(
      "commit at \(durability): wall \(Int(walls[calls / 2] * 1e9)) ns, thread CPU \(Int(cpus[calls / 2] * 1e9)) ns "
        + "(medians of \(calls); wall p90 \(Int(walls[calls * 9 / 10] * 1e9)) ns, p99 \(Int(walls[calls * 99 / 100] * 1e9)) ns, "
        + "max \(Int(walls[calls - 1] * 1e9)) ns; mean \(Int(walls.reduce(0, +) / Double(calls) * 1e9)) ns)")
  case "store-get":
    let calls = countArgument(3, default: 1_000_000)
    let store = try! Store(path: path, options: StoreOptions(initialMapSize: 1 << 30))
    try! store.write { transaction in
      let plain = transaction.collection("plain")
      for document in documents { try plain.insert(document) }
    }
    let ids = documents.map { $0["_id"]! }
    var random = SplitMix(state: 99)
    let probes = (0..<4096).map { _ in ids[random.below(ids.count)] }
    let start = monotonicSeconds()
    var found = 0
    for call in 0..<calls {
      if try! store.collection("plain").document(forID: probes[call & 4095]) != nil { found += 1 }
    }
    let end = monotonicSeconds()
    printError("document(forID:): \(Int((end - start) * 1e9) / calls) ns per call, \(found) found")
  case "store-query":
    // StoreBenchmarks' query-indexed and query-scan: the same store (both collections filled in
    // one transaction, interleaved), then `find` in a loop on one of them.
    let which = choiceArgument(3, ["indexed", "plain", "one"])
    let calls = countArgument(4, default: 1_000)
    let store = try! Store(path: path, options: StoreOptions(initialMapSize: 1 << 30, durability: .none))
    try! store.write { transaction in
      let plain = transaction.collection("plain")
      let indexed = transaction.collection("indexed")
      try indexed.createIndex(["address.city": 1])
      if which == "one" { try indexed.createIndex(["name": 1]) }
      for document in documents {
        try plain.insert(document)
        try indexed.insert(document)
      }
    }
    try! store.sync()
    // `one`: an equality on the indexed `name`, which one document matches (a different one
    // each call), to see what an index plan costs when it reads a single document.
    let collection = store.collection(which == "one" ? "indexed" : which)
    let names = documents.prefix(4096).map { $0["name"]! }
    var filter: Document = ["address.city": "Los Angeles"]
    // With `cold` (the 5th argument), 64 MiB of other memory is written between calls, as the
    // paired benchmark's SQLite batch does, and only the calls are timed.
    let cold = choiceArgument(5, ["warm", "cold"]) == "cold"
    var other = [UInt8](repeating: 1, count: cold ? 64 << 20 : 0)
    var found = 0
    var times: [Double] = []
    for call in 0..<calls {
      if cold {
        for index in stride(from: 0, to: other.count, by: 64) { other[index] &+= UInt8(truncatingIfNeeded: call) }
      }
      if which == "one" { filter = ["name": names[call & 4095]] }
      let start = threadCPUSeconds()
      found += try! collection.find(filter).toArray().count
      times.append(threadCPUSeconds() - start)
    }
    times.sort()
    printError(
      "find in \(which)\(cold ? " (cold)" : ""): thread CPU per call median \(Int(times[calls / 2] * 1e9)) ns, "
        + "first quartile \(Int(times[calls / 4] * 1e9)) ns, \(found / calls) found")
  default:
    fatalError("operation \(operation) checked above")
  }
}
