import ReefBSON
import ReefQuery
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Crash safety (issue 4): `reef-crash-writer` commits ``CrashTransaction``s in a loop, with
/// fsync on commit, acknowledging each on standard output after its commit returns; it is
/// killed with SIGKILL at random points. After each kill the store must open, hold every
/// acknowledged transaction in full and none in part (it equals ``CrashModel`` after the last
/// acknowledged transaction, or after the one after it, which may have committed before its
/// acknowledgement was written), and its indexes must agree with its documents.
///
/// A SIGKILL leaves the page cache, so every kill also acts out a power loss on a copy of the
/// store's files taken before the test reopens the store (``PowerLossCopy``: LMDB's meta pages and
/// the pages written since the checkpoint lost, the machine restarted); the copy must recover
/// and pass the same checks. At ``Durability/normal`` and ``Durability/none`` a power loss may
/// undo the commits since the log's last flush, so there the copy also loses one of the log's
/// records chosen at random (or none): it must then hold a prefix of the acknowledged
/// transactions (none in part, indexes agreeing), with exactly the records before the lost one
/// applied. A kill before the store's first checkpoint (only the first kill can come before it)
/// leaves no log to recover from and is counted apart.
///
/// `REEF_CRASH_KILLS` sets the number of kills (default 200) and `REEF_CRASH_SEED` the seed of
/// the kill schedule; the writer is `$REEF_CRASH_WRITER` or `reef-crash-writer` next to the
/// test bundle.
@Suite struct CrashSafetyTests {
  @Test func theWriterWithoutKillsLeavesWhatTheModelSays() throws {
    let directory = try CrashDirectory()
    let writer = try WriterProcess(
      writer: crashWriterBinary, store: directory.store, last: 40, errors: directory.errors)
    let status = writer.wait()
    #expect(status == 0, "the writer failed: \(directory.errorText())")
    #expect(writer.acknowledged == Array(1...40))
    var model = CrashModel()
    var random = SplitMix64(seed: 1)
    let problems = try verifyCrashStore(at: directory.store, model: &model, acknowledged: 40, random: &random)
    #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    // Restarting continues after the last transaction.
    let again = try WriterProcess(writer: crashWriterBinary, store: directory.store, last: 45, errors: directory.errors)
    #expect(again.wait() == 0, "the writer failed: \(directory.errorText())")
    #expect(again.acknowledged == Array(41...45))
  }

  /// Another process grows the map past this process's: reads and writes here adopt the new
  /// size instead of failing with MDB_MAP_RESIZED.
  @Test func aMapGrownByAnotherProcessIsAdopted() throws {
    let directory = try CrashDirectory()
    let store = try Store(path: directory.store, options: StoreOptions(initialMapSize: 1 << 20))
    try store.collection("mine").insert(Document(extendedJSON: #"{"_id": 1}"#))
    // The other process: `reef import` of 8 MB, next to the crash writer in the build folder.
    var bytes: [UInt8] = []
    for index in 0..<800 {
      var builder = DocumentBuilder()
      builder.append("_id", .int32(Int32(index)))
      builder.append("blob", .binary(Binary(data: [UInt8](repeating: UInt8(index % 251), count: 10_000))))
      bytes += builder.document.bytes
    }
    let input = directory.store + ".input.bson"
    writeFile(input, bytes)
    let status = try runReef(["import", input, "--store", directory.store, "--collection", "big"])
    #expect(status == 0, "reef import failed (\(status))")
    #expect(store.fileSize > 4 << 20, "the other process did not grow the store past this process's map")
    #expect(try store.collection("big").count() == 800)
    #expect(try store.collection("mine").count() == 1)
    try store.collection("mine").insert(Document(extendedJSON: #"{"_id": 2}"#))
    #expect(try store.collection("mine").count() == 2)
  }

  @Test func acknowledgedTransactionsSurviveSIGKILL() throws {
    let kills = getenvString("REEF_CRASH_KILLS").flatMap(Int.init) ?? 200
    try killAndVerify(kills: kills, durability: .full)
  }

  /// A crash of the process loses nothing at the levels that flush less (or not at all): only
  /// a crash of the machine can. A quarter of the kills of the default level.
  @Test(arguments: [Durability.normal, .none])
  func acknowledgedTransactionsSurviveSIGKILLAtLowerDurability(_ durability: Durability) throws {
    let kills = getenvString("REEF_CRASH_KILLS").flatMap(Int.init) ?? 200
    try killAndVerify(kills: max(1, kills / 4), durability: durability)
  }

  /// Kills a writer committing with `durability` `kills` times and checks the store after each.
  func killAndVerify(kills: Int, durability: Durability) throws {
    let seed = getenvString("REEF_CRASH_SEED").flatMap { UInt64($0) } ?? 0xC4A5_4001
    var random = SplitMix64(seed: seed)
    let directory = try CrashDirectory()
    var model = CrashModel()
    var durable: Int64 = 0  // the highest transaction the store is known to hold
    var roundsWithoutAcks = 0
    var acknowledgements = 0
    var unacknowledgedCommits = 0
    var powerLoss = PowerLossTally()
    var modes: [KillMode: Int] = [:]
    let start = monotonicMilliseconds()
    for round in 1...kills {
      let mode = KillMode(roll: random.next() % 100)
      modes[mode, default: 0] += 1
      let delay = Int(random.next() % 56) + 5  // 5 to 60 ms
      let writer = try WriterProcess(
        writer: crashWriterBinary, store: directory.store, last: nil, errors: directory.errors, durability: durability)
      switch mode {
      case .duringStartup:
        sleepMilliseconds(Int(random.next() % 15))
      case .atFirstAcknowledgement:
        writer.waitForAcknowledgement()
      case .afterSpawn:
        sleepMilliseconds(delay)
      case .whileCommitting:
        writer.waitForAcknowledgement()
        sleepMilliseconds(delay)
      }
      let signalled = writer.terminate()
      guard signalled else {
        Issue.record("round \(round): the writer exited by itself before the kill: \(directory.errorText())")
        return
      }
      let acknowledged = writer.acknowledged
      guard acknowledged == Array((durable + 1)..<(durable + 1 + Int64(acknowledged.count))) else {
        Issue.record("round \(round): after transaction \(durable), the writer acknowledged \(acknowledged)")
        return
      }
      if acknowledged.isEmpty { roundsWithoutAcks += 1 }
      acknowledgements += acknowledged.count
      let lastAcknowledged = acknowledged.last ?? durable
      // The power loss first: the reopen below checkpoints, which changes the store's files.
      var garbage = SplitMix64(seed: seed ^ UInt64(round) ^ 0x9E3F_0BAD)
      var lossQueries = SplitMix64(seed: seed ^ UInt64(round))
      if let copy = try PowerLossCopy(
        of: directory.store, in: directory.path + "/power-loss", losingRecords: durability != .full,
        garbage: &garbage)
      {
        let problems = powerLoss.check(copy, model: model, acknowledged: lastAcknowledged, random: &lossQueries)
        guard problems.isEmpty else {
          Issue.record(
            """
            round \(round) (\(mode), seed \(seed)): after a power loss at the checkpoint of transaction \
            \(copy.checkpoint) (last page \(copy.lastPage), \(copy.lostPages) pages after it lost, \
            \(copy.records) records, lost: \(copy.lostRecord.map(String.init) ?? "none")), acknowledgements up to \
            \(lastAcknowledged):
            \(problems.joined(separator: "\n"))
            """)
          return
        }
      } else {
        // Only the first writer can die before the store has a checkpoint: the check after each
        // kill opens the store, which makes one.
        guard round == 1 else {
          Issue.record(
            "round \(round) (\(mode), seed \(seed)): no commit log with a checkpoint to act a power loss out on")
          return
        }
        powerLoss.beforeCheckpoint += 1
      }
      // The queries' own generator, so that the kill schedule depends on the seed alone.
      var queries = SplitMix64(seed: seed ^ UInt64(round))
      let problems = try verifyCrashStore(
        at: directory.store, model: &model, acknowledged: lastAcknowledged, random: &queries)
      guard problems.isEmpty else {
        Issue.record(
          """
          round \(round) (\(mode), seed \(seed)): after acknowledgements up to \(lastAcknowledged):
          \(problems.joined(separator: "\n"))
          """)
        return
      }
      if model.last > lastAcknowledged { unacknowledgedCommits += 1 }
      durable = model.last
    }
    let seconds = Double(monotonicMilliseconds() - start) / 1000
    print(
      """
      crash safety (durability \(durability)): \(kills) kills in \(seconds) s (seed \(seed)); transactions 1 to \(durable) committed, \
      \(acknowledgements) of them acknowledged; \(roundsWithoutAcks) kills before any acknowledgement, \
      \(unacknowledgedCommits) after a commit and before its acknowledgement; \(model.documents.count) documents \
      left in a; kills by mode: \
      \(modes.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
      power-loss recoveries checked (durability \(durability)): \(powerLoss.checked) of \(kills) kills \
      (\(powerLoss.beforeCheckpoint) before the first checkpoint: nothing to recover); \(powerLoss.lostPages) pages \
      past the checkpoints lost; \(powerLoss.replayed) log records replayed in all\
      \(durability == .full ? "" : ", \(powerLoss.lostRecords) lost"); \(powerLoss.undone) copies without every \
      acknowledged transaction
      """)
  }
}

/// The power losses the crash test acted out, and what their recoveries did.
struct PowerLossTally {
  /// Copies recovered and checked.
  var checked = 0
  /// Kills before the store's first checkpoint (no log to recover from).
  var beforeCheckpoint = 0
  /// Pages past the checkpoints made garbage, in all.
  var lostPages = 0
  /// Log records applied again, in all.
  var replayed = 0
  /// Log records made garbage (below ``Durability/full``), in all.
  var lostRecords = 0
  /// Copies that held fewer than the acknowledged transactions (allowed below ``Durability/full``).
  var undone = 0

  /// Opens `copy` (which recovers) and checks it as the store itself is checked, against `model`
  /// as it was before the kill (the copy may hold one transaction more than the store: the log
  /// holds a record before LMDB commits it); when the copy lost a record, recovery must apply the
  /// records before it, and the copy hold a prefix of the acknowledged transactions. Returns the
  /// problems found.
  mutating func check(
    _ copy: PowerLossCopy, model: CrashModel, acknowledged: Int64, random: inout SplitMix64
  ) -> [String] {
    var model = model
    do {
      let store: Store
      do {
        store = try Store(path: copy.path)
      } catch {
        return ["the store does not open after the power loss: \(error)"]
      }
      let applied = store.log?.replayed ?? 0
      replayed += applied
      if let lost = copy.lostRecord, applied != lost {
        return ["recovery applied \(applied) records of the log, not the \(lost) before the lost one"]
      }
      let problems = try verifyCrashStore(
        store, model: &model, acknowledged: acknowledged,
        expecting: copy.lostRecord == nil ? .everyAcknowledged : .aPrefix, random: &random)
      guard problems.isEmpty else { return problems }
    } catch {
      return ["checking the store after the power loss: \(error)"]
    }
    checked += 1
    lostPages += copy.lostPages
    if copy.lostRecord != nil { lostRecords += 1 }
    if model.last < acknowledged { undone += 1 }
    return []
  }
}

/// When a round kills the writer.
enum KillMode: Int, CustomStringConvertible {
  /// A few milliseconds after spawning it, usually before it has committed anything.
  case duringStartup
  /// As soon as its first acknowledgement arrives.
  case atFirstAcknowledgement
  /// 5 to 60 ms after spawning it.
  case afterSpawn
  /// 5 to 60 ms after its first acknowledgement.
  case whileCommitting

  init(roll: UInt64) {
    switch roll {
    case 0..<10: self = .duringStartup
    case 10..<25: self = .atFirstAcknowledgement
    case 25..<45: self = .afterSpawn
    default: self = .whileCommitting
    }
  }

  var description: String {
    switch self {
    case .duringStartup: "during startup"
    case .atFirstAcknowledgement: "at the first acknowledgement"
    case .afterSpawn: "after spawning"
    case .whileCommitting: "while committing"
    }
  }
}

// MARK: Checking the store

/// What a checked store must hold of the acknowledged transactions.
enum CrashExpectation {
  /// Every one (and perhaps the next, which may have committed before its acknowledgement was
  /// written), and at least what it held before.
  case everyAcknowledged
  /// Transactions 1 to some number, at most the one after the last acknowledged: a power loss
  /// may undo the commits (at ``Durability/normal`` or ``Durability/none``) since the log's last
  /// flush.
  case aPrefix
}

/// Opens the store at `path` and checks it against the workload (see
/// ``verifyCrashStore(_:model:acknowledged:expecting:random:)``).
func verifyCrashStore(
  at path: String, model: inout CrashModel, acknowledged: Int64, random: inout SplitMix64
) throws -> [String] {
  let store: Store
  do {
    store = try Store(path: path)
  } catch {
    return ["the store does not open: \(error)"]
  }
  return try verifyCrashStore(store, model: &model, acknowledged: acknowledged, random: &random)
}

/// Checks `store` against the workload: it must hold transactions 1 to `acknowledged` (or to
/// `acknowledged + 1`) exactly as ``CrashModel`` says, or with ``CrashExpectation/aPrefix`` 1 to
/// any number up to that, and its indexes must agree with its documents. Advances `model` to the
/// transactions the store holds (from a new model when it holds fewer). Returns the problems
/// found, each naming the transaction, document or index concerned.
func verifyCrashStore(
  _ store: Store, model: inout CrashModel, acknowledged: Int64, expecting: CrashExpectation = .everyAcknowledged,
  random: inout SplitMix64
) throws -> [String] {
  try store.read { transaction throws -> [String] in
    var problems: [String] = []
    let ledgers = try transaction.collection(CrashTransaction.ledgers).find().toArray()
    for (offset, ledger) in ledgers.enumerated() where ledger["_id"] != .int64(Int64(offset) + 1) {
      return ["the ledger's \(offset + 1)th document is \(ledger.extendedJSON(.relaxed)); expected _id \(offset + 1)"]
    }
    let held = Int64(ledgers.count)
    switch expecting {
    case .everyAcknowledged:
      guard held >= model.last, held == acknowledged || held == acknowledged + 1 else {
        return [
          "the store holds transactions 1 to \(held), but \(acknowledged) were acknowledged (and \(model.last) held before)"
        ]
      }
    case .aPrefix:
      guard held <= acknowledged + 1 else {
        return ["the store holds transactions 1 to \(held), but only \(acknowledged) were acknowledged"]
      }
      if held < model.last { model = CrashModel() }
    }
    model.advance(to: held)

    // The writer's first transaction makes both collections and their indexes: all or nothing.
    let names = try transaction.collectionNames()
    if names.isEmpty && held == 0 { return [] }
    let indexes = try names.map { name in
      try transaction.collection(name).listIndexes().map { index -> String in
        guard case .string(let indexName)? = index["name"] else { return "?" }
        return indexName
      }
    }
    let expectedIndexes = [["_id_", "txn_1", "tags_1_j_-1"], ["_id_", "txn_1"]]
    guard names == [CrashTransaction.documents, CrashTransaction.ledgers], indexes == expectedIndexes else {
      return ["the store has the collections \(names) with the indexes \(indexes)"]
    }

    // Every transaction in full, none in part: the documents equal the model's.
    let expectedLedgers = model.ledgers.keys.sorted().map { model.ledgers[$0]! }
    if ledgers != expectedLedgers {
      for (found, expected) in zip(ledgers, expectedLedgers) where found != expected {
        problems.append("ledger \(describeLedger(found)) differs from the model's \(describeLedger(expected))")
      }
    }
    let documents = try transaction.collection(CrashTransaction.documents).find().toArray()
    problems += compareDocuments(documents, model: model)

    // Indexes agree with documents: raw entries, statistics, and index answers equal scans.
    problems += try compareIndexEntries(transaction, CrashTransaction.documents, documents)
    problems += try compareIndexEntries(transaction, CrashTransaction.ledgers, ledgers)
    problems += try compareStatistics(transaction, model: model)
    var filters: [(String, Document)] = []
    var numbers = Set([held, held - 1, held - 3, held - 7])
    for _ in 0..<2 { numbers.insert(Int64(random.next() % UInt64(max(held, 1))) + 1) }
    for number in numbers.sorted() where number >= 1 {
      filters.append((CrashTransaction.documents, ["txn": .int64(number)]))
      let found = try transaction.collection(CrashTransaction.documents).find(["txn": .int64(number)]).toArray()
      if found != model.documents(ofTransaction: number) {
        problems.append(
          "find({txn: \(number)}) returns _ids \(ids(found)), the model has \(ids(model.documents(ofTransaction: number)))"
        )
      }
    }
    let tagsInSet: Document = ["$in": ["green", "n3"]]
    let jAtMost2: Document = ["$lte": .int32(2)]
    let recent: Document = ["$gte": .int64(held - 5)]
    let lastLedgers: Document = ["$gt": .int64(held - 3)]
    filters.append((CrashTransaction.documents, ["tags": "red"]))
    filters.append((CrashTransaction.documents, ["tags": .string("u\(held)")]))
    filters.append((CrashTransaction.documents, ["tags": .document(tagsInSet), "j": .document(jAtMost2)]))
    filters.append((CrashTransaction.documents, ["txn": .document(recent)]))
    filters.append((CrashTransaction.ledgers, ["txn": .document(lastLedgers)]))
    let scanned = [CrashTransaction.documents: documents, CrashTransaction.ledgers: ledgers]
    for (name, filter) in filters {
      let collection = transaction.collection(name)
      let explain = try collection.explain(filter)
      let viaIndex = try collection.find(filter).toArray()
      let viaScan = try Query(filter: filter).find(in: scanned[name]!)
      // (A collection that has never held a document has no documents to plan over.)
      if explain.index == nil && held >= 1 {
        problems.append("\(name).find(\(filter.extendedJSON(.relaxed))).toArray() uses no index")
      }
      if viaIndex != viaScan {
        problems.append(
          "\(name).find(\(filter.extendedJSON(.relaxed))).toArray() through \(explain.index ?? "no index") returns _ids "
            + "\(ids(viaIndex)); a scan finds \(ids(viaScan))")
      }
    }
    return problems
  }
}

/// The differences between the documents of `a` and the model's, naming each document's
/// transaction.
func compareDocuments(_ documents: [Document], model: CrashModel) -> [String] {
  var problems: [String] = []
  var found: [Int64: Document] = [:]
  for document in documents {
    guard case .int64(let id)? = document["_id"] else {
      problems.append("a document has the _id \(document["_id"].map(describe) ?? "none")")
      continue
    }
    found[id] = document
  }
  for id in Set(found.keys).union(model.documents.keys).sorted() {
    let name = "document \(id) (transaction \(id / 16), j \(id % 16))"
    switch (found[id], model.documents[id]) {
    case (let document?, nil):
      problems.append("\(name) is there but should not be (state \(document["state"].map(describe) ?? "none"))")
    case (nil, _?):
      problems.append("\(name) is missing")
    case (let document?, let expected?) where document != expected:
      let keys = Set(document.keys).union(expected.keys).sorted().filter { document[$0] != expected[$0] }
      problems.append("\(name) differs from the model in \(keys) (found \(document.byteCount) bytes)")
    default:
      break
    }
  }
  return problems
}

/// Compares each index of `name`, entry by entry, with the entries its documents give.
func compareIndexEntries(_ transaction: Transaction, _ name: String, _ documents: [Document]) throws(StoreError)
  -> [String]
{
  guard let info = try transaction.info(name, create: false) else { return ["the collection \(name) is missing"] }
  var problems: [String] = []
  for index in info.indexes {
    var expected: [[UInt8]: [UInt8]] = [:]
    for document in documents {
      let primaryKey = KeyEncoding.encode([document["_id"]!])
      for (values, _) in try index.entries(for: document) {
        let key = KeyEncoding.encode(values, descending: index.keys.map { !$0.ascending })
        expected[index.unique ? key : key + primaryKey] = primaryKey
      }
    }
    guard let database = try transaction.database(info.indexName(index), create: false) else {
      problems.append("the index \(name).\(index.name) has no database")
      continue
    }
    var found: [[UInt8]: [UInt8]] = [:]
    try transaction.lmdb.scan(database) { key, value throws(StoreError) in
      found[Array(key)] = Array(value)
      return true
    }
    if found != expected {
      let missing = expected.filter { found[$0.key] != $0.value }.count
      let extra = found.filter { expected[$0.key] != $0.value }.count
      problems.append(
        "the index \(name).\(index.name) has \(found.count) entries, its documents give \(expected.count): "
          + "\(missing) missing or different, \(extra) extra or different")
    }
  }
  return problems
}

/// Compares the statistics' document and index entry counts with the model's.
func compareStatistics(_ transaction: Transaction, model: CrashModel) throws(StoreError) -> [String] {
  var problems: [String] = []
  let statistics = try transaction.statistics()
  func check(_ collection: String, _ index: String?, _ found: Int?, _ expected: Int) {
    guard found != expected else { return }
    let what = index.map { "entries of the index \(collection).\($0)" } ?? "documents of \(collection)"
    problems.append("the statistics count \(found.map(String.init) ?? "no") \(what), the model \(expected)")
  }
  let documents = statistics.first { $0.name == CrashTransaction.documents }
  let ledgers = statistics.first { $0.name == CrashTransaction.ledgers }
  func entries(_ statistics: CollectionStatistics?, _ index: String) -> Int? {
    statistics?.indexes.first { $0.name == index }?.entries
  }
  // A multikey index has one entry per distinct element; an empty array is one (undefined) entry.
  let tagEntries = model.documents.values.reduce(0) { total, document in
    guard case .array(let tags)? = document["tags"] else { return total + 1 }
    return total + max(1, Set(tags.map { $0.extendedJSON() }).count)
  }
  check(CrashTransaction.documents, nil, documents?.count, model.documents.count)
  check(CrashTransaction.documents, "txn_1", entries(documents, "txn_1"), model.documents.count)
  check(CrashTransaction.documents, "tags_1_j_-1", entries(documents, "tags_1_j_-1"), tagEntries)
  check(CrashTransaction.ledgers, nil, ledgers?.count, model.ledgers.count)
  check(CrashTransaction.ledgers, "txn_1", entries(ledgers, "txn_1"), model.ledgers.count)
  return problems
}

func ids(_ documents: [Document]) -> [String] { documents.map { $0["_id"].map(describe) ?? "none" } }

func describeLedger(_ ledger: Document) -> String { ledger.extendedJSON(.relaxed) }

// MARK: The writer process

/// The built `reef-crash-writer`: `$REEF_CRASH_WRITER`, or the one next to the test bundle, or
/// in `.build/debug`.
let crashWriterBinary: String =
  getenvString("REEF_CRASH_WRITER") ?? TestProcess.executable("reef-crash-writer")

/// The built `reef` command line tool, next to ``crashWriterBinary`` in the build folder.
let reefBinary: String = {
  guard let slash = crashWriterBinary.lastIndex(of: "/") else { return "reef" }
  return String(crashWriterBinary[...slash]) + "reef"
}()

/// Runs ``reefBinary`` with `arguments` in another process and waits for it to exit; returns its
/// raw wait status (0 when it exited with 0). Its standard streams are this process's.
///
/// - Throws: `StoreError` (`.storage`) when it cannot be started.
func runReef(_ arguments: [String]) throws -> Int32 {
  try waitForReef(startReef(arguments))
}

/// Starts ``reefBinary`` with `arguments` in another process, without waiting; returns its pid
/// for ``waitForReef(_:)``.
func startReef(_ arguments: [String]) throws -> pid_t {
  try startProcess(reefBinary, arguments)
}

/// Waits for the process `pid` started by ``startReef(_:)`` to exit; returns its raw wait status.
func waitForReef(_ pid: pid_t) throws -> Int32 {
  var status: Int32 = 0
  while waitpid(pid, &status, 0) < 0 {
    guard errno == EINTR else { throw StoreError(.storage, "cannot wait for \(reefBinary) (errno \(errno))") }
  }
  return status
}

/// A temporary directory with the store and the writer's standard error.
final class CrashDirectory {
  let path: String
  var store: String { path + "/crash.reef" }
  var errors: String { path + "/writer.stderr" }

  init() throws { path = makeTemporaryDirectory("reef-crash-tests") }

  deinit { removeTree(path) }

  /// What the writer last wrote to standard error.
  func errorText() -> String {
    guard let bytes = readFile(errors) else { return "(no standard error)" }
    return bytes.isEmpty ? "(nothing on standard error)" : String(decoding: bytes, as: UTF8.self)
  }

}

/// A running `reef-crash-writer`, its standard output read through a pipe.
final class WriterProcess {
  let pid: pid_t
  private let output: Int32
  private var pending: [UInt8] = []
  private var reaped = false
  /// The transactions acknowledged so far (complete lines read from the pipe).
  private(set) var acknowledged: [Int64] = []

  init(writer: String, store: String, last: Int64?, errors: String, durability: Durability = .full) throws {
    guard access(writer, X_OK) == 0 else {
      throw StoreError(.storage, "\(writer) is not built: run swift build --build-tests first")
    }
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw StoreError(.storage, "pipe failed (errno \(errno))") }
    // Other tests spawn processes concurrently: neither end may leak into their children.
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let arguments = [writer, store] + (last.map { ["\($0)"] } ?? []) + ["--durability=\(durability.rawValue)"]
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var child: pid_t = 0
    let code = posix_spawn(&child, writer, &actions, nil, &argv, environ)
    close(fds[1])
    guard code == 0 else {
      close(fds[0])
      throw StoreError(.storage, "cannot start \(writer) (error \(code))")
    }
    pid = child
    output = fds[0]
  }

  deinit {
    if !reaped { _ = terminate() }
    close(output)
  }

  /// Reads what the pipe holds, waiting up to `milliseconds` for something; false at end of file.
  @discardableResult
  private func readAvailable(waiting milliseconds: Int32) -> Bool {
    var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
    _ = poll(&descriptor, 1, milliseconds)
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(output, &chunk, chunk.count)
      if count > 0 {
        pending += chunk[..<count]
        continue
      }
      if count < 0 && errno == EINTR { continue }
      if count == 0 { parse(); return false }
      break
    }
    parse()
    return true
  }

  private func parse() {
    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
      let line = String(decoding: pending[..<newline], as: UTF8.self)
      acknowledged.append(Int64(line) ?? -1)
      pending.removeSubrange(...newline)
    }
  }

  /// Waits (up to 20 s) until the writer acknowledges a transaction or closes its output.
  func waitForAcknowledgement() {
    let deadline = monotonicMilliseconds() + 20_000
    while acknowledged.isEmpty && monotonicMilliseconds() < deadline {
      guard readAvailable(waiting: 100) else { return }
    }
  }

  /// Sends SIGKILL, reaps the process, and reads the rest of its output. Returns whether the
  /// signal killed it (false if it had exited by itself).
  func terminate() -> Bool {
    kill(pid, SIGKILL)
    return wait() & 0x7F == SIGKILL
  }

  /// Waits for the process to exit, then reads the rest of its output; returns the raw wait
  /// status. (The writer's few acknowledgements never fill the pipe.)
  @discardableResult
  func wait() -> Int32 {
    var status: Int32 = 0
    while !reaped {
      let result = waitpid(pid, &status, 0)
      if result == pid || (result < 0 && errno != EINTR) { reaped = true }
    }
    // The writer is dead, so what it wrote is in the pipe. Another test's child may hold a copy
    // of the write end (between pipe and fcntl), so read to an empty pipe, not to end of file.
    readAvailable(waiting: 0)
    return status
  }
}

func monotonicMilliseconds() -> Int {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
}

func sleepMilliseconds(_ milliseconds: Int) {
  if milliseconds > 0 { usleep(UInt32(milliseconds) * 1000) }
}
