// ReefStore against SQLite 3 (its C API, called from C in CSQLiteBench; WAL mode, prepared
// statements, a 256 MiB page cache and a 1 GiB memory map), on documents generated from the
// Examples' models (BenchSupport/ExamplesModel.swift). Stores live in a temporary directory under
// /tmp, removed when the process exits.
//
// - import/<N>: open a new store, insert N documents in one write transaction, commit (with
//   fsync: Reef's default `durability: .full`, SQLite `synchronous=FULL`), close. SQLite stores the
//   same BSON bytes as blobs under an `_id` BLOB primary key (a WITHOUT ROWID table). One
//   operation is the whole import; the paired ratio is of wall-clock times (the commit's I/O
//   counts).
// - lookup/<N>: a random existing `_id`: `DocumentCollection.document(forID:)` (the primary-key read,
//   in its own read transaction, as a user calls it; `findOne(["_id": id])`, which compiles a
//   filter first, is measured too) against `SELECT doc FROM docs WHERE _id = ?` (autocommit,
//   so a read transaction of its own too). Paired thread-CPU ratio.
// - commit/<N>: one document inserted and committed durably (fsync): `DocumentCollection.insert` against
//   an autocommit INSERT with `synchronous=FULL`; N documents are in each store first. Paired
//   wall-clock ratio (the latency is the fsync). Also, not the goal's comparison: Reef at
//   `durability: .normal` (reef-insert-normal: no flush per commit, a power loss may undo the
//   last commits) against SQLite FULL and against SQLite WAL `synchronous=NORMAL`
//   (sqlite-insert-normal: no flush per commit).
// - query-indexed/<N> and query-scan/<N>: `find(["address.city": "Los Angeles"])` on a
//   collection with an index on `address.city` and on one without, against
//   `SELECT doc FROM docs_json WHERE json_extract(doc, '$.address.city') = ?` over the same
//   documents as JSON, with an expression index on json_extract and with `NOT INDEXED`.
//   Paired thread-CPU ratio; one operation is the whole query.
//
// N: REEF_STORE_IMPORT_DOCS (default 1,000,000) for import, REEF_STORE_READ_DOCS (default
// 100,000) for the others.

import BenchSupport
import Benchmark
import CSQLiteBench
import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

func environment(_ name: String, _ fallback: Int) -> Int {
  guard let text = getenv(name), let value = Int(String(cString: text)), value > 0 else { return fallback }
  return value
}

func label(_ count: Int) -> String {
  if count % 1_000_000 == 0 { return "\(count / 1_000_000)M" }
  if count % 1_000 == 0 { return "\(count / 1_000)k" }
  return "\(count)"
}

// MARK: Temporary stores

/// This process's directory of stores, removed at exit.
nonisolated(unsafe) var scratchDirectory = ""
nonisolated(unsafe) var scratchFiles = Set<String>()

func scratchPath(_ name: String) -> String {
  if scratchDirectory.isEmpty {
    var template = Array("/tmp/reef-store-bench-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot create a directory under /tmp") }
    scratchDirectory = String(cString: made)
    atexit {
      for file in scratchFiles { unlink(file) }
      rmdir(scratchDirectory)
    }
  }
  let path = scratchDirectory + "/" + name
  scratchFiles.formUnion(storeFiles(path))
  return path
}

/// The files of a store at `path`: a Reef store's (`Store.files(at:)`: the file, its lock file
/// and its commit log); SQLite adds its WAL and shared-memory index (or its rollback journal).
func storeFiles(_ path: String) -> [String] {
  Store.files(at: path) + [path + "-wal", path + "-shm", path + "-journal"]
}

func removeStore(_ path: String) {
  for file in storeFiles(path) { unlink(file) }
}

// MARK: Data

/// Generated documents: one BSON stream both sides read, and Reef's views of it.
final class Dataset: @unchecked Sendable {
  let count: Int
  let pinned: PinnedBytes
  let offsets: [Int]
  let documents: [Document]
  let ids: [ObjectId]

  init(count: Int, first: Int = 0) {
    let (bytes, offsets) = generateStream(count: count, first: first)
    self.count = count
    self.offsets = offsets
    pinned = PinnedBytes(bytes)
    documents = pinned.documents(startingAt: offsets)
    ids = documents.map { document in
      guard case .objectId(let id)? = document["_id"] else { fatalError("a generated document without an ObjectId") }
      return id
    }
  }

  /// SQLite's bulk import of the whole stream into `docs`.
  func insertIntoSQLite(_ store: OpaquePointer) -> Bool {
    offsets.withUnsafeBufferPointer { table in
      csq_bulk_insert_bson(store, pinned.pointer, table.baseAddress!, count, pinned.count) == 0
    }
  }
}

func openSQLite(_ path: String, synchronous: Int32) -> OpaquePointer {
  guard let store = csq_open(path, synchronous, CSQ_WITHOUT_ROWID) else { fatalError("cannot open SQLite at \(path)") }
  return store
}

// MARK: Registration helpers

/// The per-iteration ratio anchor / Reef of wall-clock times, times 1,000.
let pairedWallRatio = BenchmarkMetric.custom(
  "Paired ratio (wall clock) x1000", polarity: .prefersLarger, useScalingFactor: false)

/// One operation per iteration (scaling factor 1).
func longConfiguration(maxIterations: Int, seconds: Int) -> Benchmark.Configuration {
  var configuration = reefBenchmarkConfiguration
  configuration.scalingFactor = .one
  configuration.warmupIterations = 1
  configuration.maxIterations = maxIterations
  configuration.maxDuration = .seconds(seconds)
  return configuration
}

/// The wall-clock time of one import, as the operation measures it.
let importWall = BenchmarkMetric.custom("Import wall clock (ns)", polarity: .prefersSmaller, useScalingFactor: false)

/// An explicit, nearly empty timed section, after an operation that timed itself (see the import).
func untimedSection(_ benchmark: Benchmark) {
  benchmark.startMeasurement()
  consume(threadCPUNanoseconds())
  benchmark.stopMeasurement()
}

/// "ratio/<name>": each iteration runs `batch` operations of each side (order alternating between
/// iterations) and
/// records anchor / Reef of the wall-clock nanoseconds the operations report for themselves.
func registerWallPair(
  _ name: String, configuration base: Benchmark.Configuration, batch: Int, reef: @escaping () -> Int,
  anchor: @escaping () -> Int
) {
  var configuration = base
  configuration.metrics = [.throughput, pairedWallRatio]
  final class Order: @unchecked Sendable { var reefFirst = true }
  let order = Order()
  Benchmark("ratio/" + name, configuration: configuration) { benchmark in
    // One paired measurement per iteration, whatever the scaling factor.
    do {
      let reefFirst = order.reefFirst
      var reefTime = 0
      var anchorTime = 0
      for side in reefFirst ? [true, false] : [false, true] {
        for _ in 0..<batch {
          if side { reefTime += reef() } else { anchorTime += anchor() }
        }
      }
      order.reefFirst.toggle()
      benchmark.measurement(pairedWallRatio, anchorTime &* 1000 / max(1, reefTime))
      untimedSection(benchmark)
    }
  }
}

// MARK: Benchmarks

/// Reef and SQLite stores holding the same `count` documents, made on first use.
final class ReadStores: @unchecked Sendable {
  let data: Dataset
  let reef: Store
  let sqlite: OpaquePointer

  init(count: Int) {
    let data = Dataset(count: count)
    self.data = data
    let reefPath = scratchPath("read.reef")
    let reef = try! Store(path: reefPath, options: StoreOptions(initialMapSize: 1 << 30, durability: .none))
    self.reef = reef
    try! reef.write { transaction in
      let plain = transaction.collection("plain")
      let indexed = transaction.collection("indexed")
      try indexed.createIndex(["address.city": 1])
      for document in data.documents {
        try plain.insert(document)
        try indexed.insert(document)
      }
    }
    try! reef.sync()
    let sqlite = openSQLite(scratchPath("read.sqlite"), synchronous: 0)
    self.sqlite = sqlite
    check(data.insertIntoSQLite(sqlite), "SQLite's import failed")
    // The same documents as JSON (relaxed Extended JSON: `{"$oid": …}` ids), NUL-terminated.
    var json: [CChar] = []
    var jsonOffsets: [Int] = []
    for document in data.documents {
      jsonOffsets.append(json.count)
      json += document.extendedJSON(.relaxed).utf8CString
    }
    let inserted = jsonOffsets.withUnsafeBufferPointer { offsets in
      csq_bulk_insert_json(sqlite, json, offsets.baseAddress!, data.count)
    }
    check(inserted == 0 && csq_create_city_index(sqlite) == 0, "SQLite's JSON import failed")
  }
}

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = reefBenchmarkConfiguration
  let importCount = environment("REEF_STORE_IMPORT_DOCS", 1_000_000)
  let readCount = environment("REEF_STORE_READ_DOCS", 100_000)
  let importLabel = label(importCount)
  let readLabel = label(readCount)

  // Made on first use, in the process of the benchmark that needs it.
  nonisolated(unsafe) var importData: Dataset?
  func imports() -> Dataset {
    if let importData { return importData }
    let made = Dataset(count: importCount)
    printError("reef benchmarks: import: \(importCount) documents, \(made.pinned.buffer.count) bytes of BSON")
    importData = made
    return made
  }
  nonisolated(unsafe) var readStores: ReadStores?
  func reads() -> ReadStores {
    if let readStores { return readStores }
    let made = ReadStores(count: readCount)
    readStores = made
    return made
  }

  // Bulk import.
  nonisolated(unsafe) var importRuns = 0
  let reefImport = { () -> Int in
    let data = imports()
    importRuns += 1
    let path = scratchPath("import-\(importRuns).reef")
    let start = wallClockNanoseconds()
    do {
      let store = try! Store(path: path, options: StoreOptions(initialMapSize: 1 << 30))
      try! store.write { transaction in
        let contacts = transaction.collection("contacts")
        for document in data.documents { try contacts.insert(document) }
      }
    }
    let elapsed = wallClockNanoseconds() - start
    if importRuns == 1 {
      let store = try! Store(path: path, options: StoreOptions(initialMapSize: 1 << 30))
      check(try! store.collection("contacts").count() == data.count, "Reef's import lost documents")
      printError("reef benchmarks: import: Reef store \(store.fileSize) bytes")
    }
    removeStore(path)
    return elapsed
  }
  let sqliteImport = { () -> Int in
    let data = imports()
    importRuns += 1
    let path = scratchPath("import-\(importRuns).sqlite")
    let start = wallClockNanoseconds()
    let store = openSQLite(path, synchronous: 2)
    check(data.insertIntoSQLite(store), "SQLite's import failed")
    csq_close(store)
    let elapsed = wallClockNanoseconds() - start
    removeStore(path)
    return elapsed
  }
  // One import per iteration. The benchmark tool drops a benchmark from its JMH export when its
  // throughput (whole operations per second of its own timing) rounds to 0, as it does for
  // operations over 2 s; so the import runs before an empty timed section and reports its own
  // times ("Import wall clock (ns)" and "Thread CPU (ns)"), which ratios.py reads for `import`.
  let importConfiguration = longConfiguration(maxIterations: importCount >= 500_000 ? 3 : 10, seconds: 600)
  var importMetrics = importConfiguration
  importMetrics.metrics = [.throughput, importWall, threadCPU]
  for (name, operation) in [("reef-insert", reefImport), ("sqlite-insert-blob", sqliteImport)] {
    Benchmark("import/\(importLabel)/\(name)", configuration: importMetrics) { benchmark in
      let start = threadCPUNanoseconds()
      benchmark.measurement(importWall, operation())
      benchmark.measurement(threadCPU, threadCPUNanoseconds() &- start)
      untimedSection(benchmark)
    }
  }
  registerWallPair(
    "import/\(importLabel)/reef-insert~sqlite-insert-blob", configuration: importConfiguration, batch: 1,
    reef: reefImport, anchor: sqliteImport)

  // Point lookup by _id.
  nonisolated(unsafe) var probes: [(ObjectId, [UInt8])] = []
  nonisolated(unsafe) var probe = 0
  func prepareProbes() -> ReadStores {
    let stores = reads()
    if probes.isEmpty {
      var random = SplitMix(state: 99)
      probes = (0..<4096).map { _ in
        let id = stores.data.ids[random.below(stores.data.count)]
        return (id, id.byteArray)
      }
      let reefFound = try! stores.reef.collection("plain").findOne(["_id": .objectId(probes[0].0)])
      let sqliteFound = csq_get_bson(stores.sqlite, probes[0].1, 12)
      check(reefFound != nil && Int64(reefFound!.byteCount) == sqliteFound, "Reef and SQLite found different documents")
      let explain = try! stores.reef.collection("plain").explain(["_id": .objectId(probes[0].0)])
      printError("reef benchmarks: lookup: Reef \(explain)")
    }
    return stores
  }
  let reefLookup = {
    let stores = prepareProbes()
    probe = (probe + 1) & 4095
    let found = try! stores.reef.collection("plain").findOne(["_id": .objectId(probes[probe].0)])
    precondition(found != nil)
  }
  let sqliteLookup = {
    let stores = prepareProbes()
    probe = (probe + 1) & 4095
    let length = probes[probe].1.withUnsafeBufferPointer { csq_get_bson(stores.sqlite, $0.baseAddress, 12) }
    precondition(length > 0)
  }
  let reefGet = {
    let stores = prepareProbes()
    probe = (probe + 1) & 4095
    let found = try! stores.reef.collection("plain").document(forID: .objectId(probes[probe].0))
    precondition(found != nil)
  }
  register("lookup/\(readLabel)/reef-documentForID") { reefGet() }
  registerPair("lookup/\(readLabel)/reef-documentForID~sqlite-select-pk", reef: reefGet, anchor: sqliteLookup)
  register("lookup/\(readLabel)/reef-findOne") { reefLookup() }
  register("lookup/\(readLabel)/sqlite-select-pk") { sqliteLookup() }
  registerPair("lookup/\(readLabel)/reef-findOne~sqlite-select-pk", reef: reefLookup, anchor: sqliteLookup)

  // Single-document commits, each in a transaction of its own. `durability: .full` against SQLite
  // FULL is the goal's comparison; the other pairs (labelled, no goal) set Reef `.normal`
  // (the commit log's record written, not flushed; a power loss may undo the last commits) against SQLite FULL
  // (fully durable, one flush) and against SQLite WAL NORMAL (no flush per commit; a power loss
  // may undo the last commits).
  /// Stores filled with the read set, made on first use, and the fresh documents committed one by
  /// one into them (ids not in the stores).
  final class CommitStores: @unchecked Sendable {
    let name: String
    let durability: Durability
    let synchronous: Int32
    let readCount: Int
    var made: (reef: Store, sqlite: OpaquePointer, fresh: Dataset)?
    var reefNext = 0
    var sqliteNext = 0

    init(_ name: String, durability: Durability, synchronous: Int32, readCount: Int) {
      self.name = name
      self.readCount = readCount
      self.durability = durability
      self.synchronous = synchronous
    }

    func stores() -> (reef: Store, sqlite: OpaquePointer, fresh: Dataset) {
      if let made { return made }
      let base = Dataset(count: readCount)
      let reef = try! Store(
        path: scratchPath("\(name).reef"), options: StoreOptions(initialMapSize: 1 << 30, durability: durability))
      try! reef.write { transaction in
        for document in base.documents { try transaction.collection("contacts").insert(document) }
      }
      let sqlite = openSQLite(scratchPath("\(name).sqlite"), synchronous: synchronous)
      check(base.insertIntoSQLite(sqlite), "SQLite's import failed")
      made = (reef, sqlite, Dataset(count: 20_000, first: 50_000_000))
      return made!
    }

    /// Wall-clock nanoseconds of one Reef insert.
    func reefCommit() -> Int {
      let (store, _, fresh) = stores()
      let document = fresh.documents[reefNext % fresh.count]
      reefNext += 1
      let start = wallClockNanoseconds()
      try! store.collection("contacts").insert(document)
      return wallClockNanoseconds() - start
    }

    /// Wall-clock nanoseconds of one SQLite insert in autocommit.
    func sqliteCommit() -> Int {
      let (_, store, fresh) = stores()
      let index = sqliteNext % fresh.count
      sqliteNext += 1
      let length = fresh.documents[index].byteCount
      let start = wallClockNanoseconds()
      let code = csq_insert_bson(store, fresh.pinned.pointer + fresh.offsets[index], length)
      let elapsed = wallClockNanoseconds() - start
      precondition(code == 0)
      return elapsed
    }
  }
  let full = CommitStores("commit", durability: .full, synchronous: 2, readCount: readCount)
  let normal = CommitStores("commit-normal", durability: .normal, synchronous: 1, readCount: readCount)
  let reefCommit = full.reefCommit
  let sqliteCommit = full.sqliteCommit
  let reefNormalCommit = normal.reefCommit
  let sqliteNormalCommit = normal.sqliteCommit
  let commitConfiguration = longConfiguration(maxIterations: 2_000, seconds: 4)
  register("commit/\(readLabel)/reef-insert-fsync", configuration: commitConfiguration) { consume(reefCommit()) }
  register("commit/\(readLabel)/sqlite-insert-full", configuration: commitConfiguration) { consume(sqliteCommit()) }
  var commitPairConfiguration = longConfiguration(maxIterations: 500, seconds: 6)
  commitPairConfiguration.warmupIterations = 2
  registerWallPair(
    "commit/\(readLabel)/reef-insert-fsync~sqlite-insert-full", configuration: commitPairConfiguration, batch: 4,
    reef: reefCommit, anchor: sqliteCommit)
  register("commit/\(readLabel)/reef-insert-normal", configuration: commitConfiguration) {
    consume(reefNormalCommit())
  }
  register("commit/\(readLabel)/sqlite-insert-normal", configuration: commitConfiguration) {
    consume(sqliteNormalCommit())
  }
  registerWallPair(
    "commit/\(readLabel)/reef-insert-normal~sqlite-insert-full", configuration: commitPairConfiguration, batch: 4,
    reef: reefNormalCommit, anchor: sqliteCommit)
  registerWallPair(
    "commit/\(readLabel)/reef-insert-normal~sqlite-insert-normal", configuration: commitPairConfiguration, batch: 4,
    reef: reefNormalCommit, anchor: sqliteNormalCommit)

  // Equality on an embedded field, through an index and by a scan.
  let city = "Los Angeles"
  nonisolated(unsafe) var queriesChecked = false
  func queryStores() -> ReadStores {
    let stores = reads()
    if !queriesChecked {
      queriesChecked = true
      for (collection, indexed) in [("indexed", true), ("plain", false)] {
        let found = try! stores.reef.collection(collection).find(["address.city": .string(city)]).count()
        let rows = Int(csq_query_city(stores.sqlite, city, city.utf8.count, indexed))
        check(found == rows && found > 0, "\(collection): Reef found \(found) documents, SQLite \(rows)")
        let explain = try! stores.reef.collection(collection).explain(["address.city": .string(city)])
        var plan = [CChar](repeating: 0, count: 512)
        csq_explain_city(stores.sqlite, indexed, &plan, plan.count)
        printError(
          "reef benchmarks: query \(collection): \(found) of \(stores.data.count) documents; Reef \(explain); SQLite \(String(cString: plan))"
        )
      }
    }
    return stores
  }
  for (group, collection, reefName, sqliteName) in [
    ("query-indexed", "indexed", "reef-find-index", "sqlite-json_extract-index"),
    ("query-scan", "plain", "reef-find-scan", "sqlite-json_extract-scan"),
  ] {
    let indexed = collection == "indexed"
    let reef = {
      consume(try! queryStores().reef.collection(collection).find(["address.city": .string(city)]).toArray())
    }
    let sqlite = { consume(csq_query_city(queryStores().sqlite, city, city.utf8.count, indexed)) }
    let configuration = longConfiguration(maxIterations: 200, seconds: 3)
    register("\(group)/\(readLabel)/\(reefName)", configuration: configuration, reef)
    register("\(group)/\(readLabel)/\(sqliteName)", configuration: configuration, sqlite)
    registerPair("\(group)/\(readLabel)/\(reefName)~\(sqliteName)", reef: reef, anchor: sqlite)
  }
}
