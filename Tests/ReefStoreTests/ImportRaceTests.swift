import Dispatch
import ReefBSON
import ReefTestSupport
import Testing

@_spi(ReefTesting) @testable import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Imports racing other writers (issue 12): imports into one collection take turns, any other
/// write to an import's target makes the import fail with nothing imported, and waits are
/// reported. Other writers overlap an import for sure because the import is paused before its
/// swap (``ImportOptions/beforeSwap``; `REEF_TEST_PAUSE_BEFORE_SWAP` for the `reef` tool).
@Suite struct ImportRaceTests {
  /// The longest any step may take before the test gives up instead of hanging (a guard, not
  /// something measured: every step normally takes milliseconds).
  static let patience = 120.0

  // MARK: In one process, on two threads

  @Test(arguments: [false, true])
  func twoImportsIntoOneCollectionTakeTurns(drop: Bool) throws {
    let waits = Waits()
    let temporary = try TemporaryStore(options: StoreOptions(onWait: { waits.record($0) }))
    let store = temporary.store
    let count = 300
    let first = temporary.directory + "/first.jsonl"
    let second = temporary.directory + "/second.jsonl"
    writeLines(first, ids: 0..<count, tag: "first")
    writeLines(second, ids: count..<2 * count, tag: "second")
    let paused = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    var pausing = ImportOptions(collection: "A", drop: drop)
    pausing.beforeSwap = {
      paused.signal()
      resume.wait()
    }
    let firstOptions = pausing
    let results = Results()
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
      results.set(0, Result { try store.importDump(from: DumpSource(path: first), options: firstOptions).documents })
    }
    try #require(paused.wait(timeout: .now() + Self.patience) == .success, "the first import never paused")
    DispatchQueue.global().async(group: group) {
      results.set(
        1,
        Result {
          try store.importDump(from: DumpSource(path: second), options: ImportOptions(collection: "A", drop: drop))
            .documents
        })
    }
    // The second import finds the first one's lease and says it waits.
    let waited = waits.leaseWaited.wait(timeout: .now() + Self.patience) == .success
    #expect(waited, "the second import did not wait for the first")
    resume.signal()
    _ = group.wait(timeout: .now() + Self.patience)
    #expect(try results.get(0)?.get() == count)
    #expect(try results.get(1)?.get() == count)
    #expect(waits.all == [StoreWait(kind: .importLease, collection: "A", processID: getpid())])
    #expect(waits.all.first?.description == "waiting for the import by process \(getpid()) into A…")
    let names = try store.collection("A").find().toArray().map(nameOf)
    if drop {
      // The later import replaced the earlier one: its documents only.
      #expect(names.count == count && names.allSatisfy { $0.hasPrefix("second ") })
    } else {
      #expect(names.count == 2 * count)
      #expect(names.filter { $0.hasPrefix("first ") }.count == count)
    }
    #expect(try leases(in: store).isEmpty)
    #expect(try store.read { try $0.catalogNames() } == ["A"])
  }

  @Test func anImportTakesOverTheLeaseOfADeadProcess() throws {
    let waits = Waits()
    let temporary = try TemporaryStore(options: StoreOptions(onWait: { waits.record($0) }))
    let store = temporary.store
    let dead = deadProcessID()
    try store.write { transaction in
      let meta = try transaction.database(Transaction.metaName, create: true)!
      try transaction.lmdb.put(meta, ImportRun.leaseKey("A"), Array("__import.\(dead).1".utf8))
      // A lease with this process's id but no import of this process behind it: left by an
      // earlier process that had the same id.
      try transaction.lmdb.put(meta, ImportRun.leaseKey("B"), Array("__import.\(getpid()).2".utf8))
    }
    let source = temporary.directory + "/a.jsonl"
    writeLines(source, ids: 0..<3, tag: "a")
    for target in ["A", "B"] {
      let report = try store.importDump(from: DumpSource(path: source), options: ImportOptions(collection: target))
      #expect(report.documents == 3)
    }
    #expect(waits.all.isEmpty)
    #expect(try leases(in: store).isEmpty)
  }

  @Test(arguments: ["insert", "createIndex", "drop", "update"])
  func aWriteToTheTargetDuringAnImportFailsTheImport(write: String) throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.collection("A").insert(["_id": 1000, "name": "before"])
    let source = temporary.directory + "/a.jsonl"
    writeLines(source, ids: 0..<50, tag: "imported")
    var options = ImportOptions(collection: "A", batchDocuments: 10)
    options.beforeSwap = {
      // Another writer, while the import is between its last batch and its swap.
      let collection = store.collection("A")
      switch write {
      case "insert": _ = try? collection.insert(["_id": 2000, "name": "meanwhile"])
      case "createIndex": try? collection.createIndex(["name": 1])
      case "drop": _ = try? store.write { try $0.collection("A").drop() }
      default: _ = try? collection.updateOne(["_id": 1000], ["$set": ["name": "meanwhile"]])
      }
    }
    let expected = "collection A was changed by another writer while the import ran"
    #expect {
      try store.importDump(from: DumpSource(path: source), options: options)
    } throws: { error in
      guard let error = error as? StoreError else { return false }
      return error.kind == .conflict && error.message.contains(expected)
        && error.message.hasSuffix("nothing was imported")
    }
    // The other writer's write is there; nothing of the import is.
    let collection = store.collection("A")
    switch write {
    case "insert": #expect(try collection.count() == 2 && collection.count(["name": "meanwhile"]) == 1)
    case "createIndex": #expect(try collection.listIndexes().count == 2 && collection.count() == 1)
    case "drop": #expect(try store.collectionNames().isEmpty)
    default: #expect(try collection.count() == 1 && collection.count(["name": "meanwhile"]) == 1)
    }
    #expect(try leases(in: store).isEmpty)
    #expect(try store.read { try $0.catalogNames() }.allSatisfy { !$0.hasPrefix("__") })
  }

  /// The generation counts write transactions, not documents, and renames count too.
  @Test func theGenerationCountsWriteTransactionsThatChangeTheCollection() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    func version(_ name: String) throws -> CollectionVersion? {
      try store.read { try $0.info(name, create: false)?.version }
    }
    try store.write { transaction in
      for i in 0..<10 { try transaction.collection("a").insert(["_id": .int32(Int32(i))]) }
    }
    let created = try #require(try version("a"))
    #expect(created.generation == 1)
    try store.collection("a").createIndex(["x": 1])
    #expect(try version("a")?.generation == 2)
    try store.collection("a").updateOne(["_id": 1], ["$set": ["x": 1]])
    #expect(try version("a")?.generation == 3)
    // Writes that change nothing do not count.
    try store.collection("a").updateOne(["_id": 99], ["$set": ["x": 1]])
    try store.collection("a").deleteMany(["_id": 99])
    try store.collection("a").createIndex(["x": 1])
    #expect(try version("a")?.generation == 3)
    try store.collection("a").deleteOne(["_id": 1])
    try store.collection("a").dropIndex("x_1")
    #expect(try version("a")?.generation == 5)
    try store.collection("b").insert(["_id": 1])
    try store.write { try $0.collection("b").rename(to: "a", dropTarget: true) }
    let renamed = try #require(try version("a"))
    #expect(renamed.generation == 6 && renamed.id != created.id)
    // The stored entry says so (another process reads it): its first field, patched in place
    // by writes that change only documents.
    for i in 0..<3 { try store.collection("a").insert(["_id": .int32(Int32(100 + i))]) }
    let stored = try #require(try catalogEntry("a", in: store))
    #expect(stored.keys == ["generation", "id", "uuid", "indexes"])
    #expect(stored["generation"] == .int64(9))
    #expect(try CollectionInfo(stored, name: "a").version == CollectionVersion(id: renamed.id, generation: 9))
  }

  /// An entry written before generations existed reads as generation 0, and the next write
  /// stores it with one.
  @Test func anEntryWithoutAGenerationGainsOneAtTheNextWrite() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.collection("a").insert(["_id": 1])
    let current = try #require(try catalogEntry("a", in: store))
    var old = DocumentBuilder()
    for element in current where element.key != "generation" { old.append(element.key, element.value) }
    try store.write { transaction in
      let catalog = try transaction.database(Transaction.catalogName, create: false)!
      try transaction.lmdb.put(catalog, Array("a".utf8), old.document.bytes)
    }
    #expect(try store.read { try $0.info("a", create: false)?.generation } == 0)
    try store.collection("a").insert(["_id": 2])
    let upgraded = try #require(try catalogEntry("a", in: store))
    #expect(upgraded.keys == ["generation", "id", "uuid", "indexes"])
    #expect(upgraded["generation"] == .int64(1))
    try store.collection("a").insert(["_id": 3])
    #expect(try catalogEntry("a", in: store)?["generation"] == .int64(2))
    #expect(try store.collection("a").count() == 3)
  }

  // MARK: Writers that wait

  @Test func aWriteThatWaitsForAnotherWriterIsReported() throws {
    let waits = Waits()
    var options = StoreOptions(onWait: { waits.record($0) })
    options.writerWaitDelay = 0.05
    let temporary = try TemporaryStore(options: options)
    let store = temporary.store
    let inside = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
      _ = try? store.write { _ in
        inside.signal()
        release.wait()
      }
    }
    try #require(inside.wait(timeout: .now() + Self.patience) == .success)
    DispatchQueue.global().async(group: group) { _ = try? store.collection("c").insert(["_id": 1]) }
    let reported = waits.writerWaited.wait(timeout: .now() + Self.patience) == .success
    #expect(reported, "the waiting writer was not reported")
    release.signal()
    _ = group.wait(timeout: .now() + Self.patience)
    #expect(waits.all == [StoreWait(kind: .writer)])
    #expect(waits.all.first?.description == "waiting for another writer…")
    #expect(try store.collection("c").count() == 1)
  }

  // MARK: In two processes (the built `reef`)

  /// A `reef` write waiting behind another process's write transaction says so when its
  /// standard error is a terminal.
  @Test func aReefWriterWaitingForAnotherProcessSaysSoOnATerminal() throws {
    let run = try ReefRun()
    let store = try Store(path: run.store)
    try store.collection("c").insert(["_id": 1, "a": 1])
    let terminal = try PseudoTerminal()
    let holding = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
      _ = try? store.write { _ in
        holding.signal()
        release.wait()
      }
    }
    try #require(holding.wait(timeout: .now() + Self.patience) == .success)
    let pid = try run.start(
      "index", ["index", "create", "--store", run.store, "--collection", "c", "--keys", #"{"a": 1}"#],
      standardError: terminal.devicePath)
    var said = ""
    var waited = 0.0
    while !said.contains("reef: waiting for another writer…") && waited < Self.patience {
      said += terminal.readAvailable()
      usleep(10_000)
      waited += 0.01
    }
    release.signal()
    #expect(said.contains("reef: waiting for another writer…"), "reef said: \(said)")
    #expect(try run.finish(pid) == 0)
    _ = group.wait(timeout: .now() + Self.patience)
    #expect(try store.collection("c").listIndexes().count == 2)
  }

  /// Two `reef import`s into one collection, the second started while the first is paused
  /// before its swap: the second waits for the first (and says so), then both succeed.
  @Test(arguments: [false, true], [false, true])
  func twoReefImportsIntoOneCollection(drop: Bool, reversed: Bool) throws {
    let run = try ReefRun()
    let count = 5_000
    writeLines(run.directory + "/a.jsonl", ids: 0..<count, tag: "a")
    writeLines(run.directory + "/b.jsonl", ids: count..<2 * count, tag: "b")
    let (first, second) = reversed ? ("b", "a") : ("a", "b")
    let extra = drop ? ["--drop"] : []
    let paused = try run.start(
      "first", ["import", run.directory + "/\(first).jsonl", "--store", run.store, "--collection", "A"] + extra,
      pausing: true)
    try run.waitUntilPaused(paused)
    let waiting = try run.start(
      "second", ["import", run.directory + "/\(second).jsonl", "--store", run.store, "--collection", "A"] + extra)
    try run.waitFor("second", toSay: "reef: waiting for the import by process \(paused) into A…")
    run.resume()
    #expect(try run.finish(paused) == 0, "first: \(run.errors("first"))")
    #expect(try run.finish(waiting) == 0, "second: \(run.errors("second"))")
    #expect(run.output("first") == "imported \(count) documents into 1 collection, 0 skipped\n")
    #expect(run.output("second") == "imported \(count) documents into 1 collection, 0 skipped\n")
    let store = try Store(path: run.store)
    let names = try store.collection("A").find().toArray().map(nameOf)
    if drop {
      #expect(names.count == count && names.allSatisfy { $0.hasPrefix("\(second) ") })
    } else {
      #expect(names.count == 2 * count)
      #expect(names.filter { $0.hasPrefix("a ") }.count == count)
    }
    #expect(try leases(in: store).isEmpty)
  }

  /// An index created by `reef index create` and a document inserted by this process while a
  /// `reef import` is paused before its swap: the import fails, saying why, and they stay.
  @Test(arguments: ["index", "insert"], [false, true])
  func aWriteOfAnotherProcessDuringAReefImportSurvives(write: String, drop: Bool) throws {
    let run = try ReefRun()
    do {
      let store = try Store(path: run.store)
      try store.collection("A").insert(["_id": -1, "name": "before"])
    }
    writeLines(run.directory + "/a.jsonl", ids: 0..<2_000, tag: "a")
    let importer = try run.start(
      "import",
      ["import", run.directory + "/a.jsonl", "--store", run.store, "--collection", "A"] + (drop ? ["--drop"] : []),
      pausing: true)
    try run.waitUntilPaused(importer)
    let store = try Store(path: run.store)
    if write == "index" {
      #expect(
        try runReef(["index", "create", "--store", run.store, "--collection", "A", "--keys", #"{"name": 1}"#]) == 0)
    } else {
      try store.collection("A").insert(["_id": -2, "name": "meanwhile"])
    }
    run.resume()
    #expect(try run.finish(importer) == 1 << 8)  // exit code 1
    #expect(
      run.errors("import")
        == "reef: error: collection A was changed by another writer while the import ran (documents or indexes were written); nothing was imported\n"
    )
    #expect(run.output("import").isEmpty)
    if write == "index" {
      #expect(try store.collection("A").listIndexes().count == 2)
      #expect(try store.collection("A").count() == 1)
    } else {
      #expect(try store.collection("A").count() == 2)
    }
    #expect(try leases(in: store).isEmpty)
    #expect(try store.read { try $0.catalogNames() } == ["A"])
  }
}

// MARK: Helpers

/// The waits a store reported, in order, with semaphores signalled at the first of each kind.
final class Waits: @unchecked Sendable {
  private let lock = TestLock()
  private var waits: [StoreWait] = []
  let leaseWaited = DispatchSemaphore(value: 0)
  let writerWaited = DispatchSemaphore(value: 0)

  func record(_ wait: StoreWait) {
    lock.withLock { waits.append(wait) }
    if wait.kind == .importLease { leaseWaited.signal() }
    if wait.kind == .writer { writerWaited.signal() }
  }

  var all: [StoreWait] { lock.withLock { waits } }
}

/// Results of work on other threads, by slot.
final class Results: @unchecked Sendable {
  private let lock = TestLock()
  private var results: [Int: Result<Int, any Error>] = [:]
  func set(_ slot: Int, _ result: Result<Int, any Error>) { lock.withLock { results[slot] = result } }
  func get(_ slot: Int) -> Result<Int, any Error>? { lock.withLock { results[slot] } }
}

/// A pthread mutex for the helpers above.
final class TestLock: @unchecked Sendable {
  private var mutex = pthread_mutex_t()
  init() { pthread_mutex_init(&mutex, nil) }
  deinit { pthread_mutex_destroy(&mutex) }
  func withLock<R>(_ body: () -> R) -> R {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return body()
  }
}

/// The `name` string of a document, or "".
func nameOf(_ document: Document) -> String {
  if case .string(let name)? = document["name"] { return name }
  return ""
}

/// Writes documents `{_id, name: "<tag> <id>"}` as Extended JSON lines.
func writeLines(_ path: String, ids: Range<Int>, tag: String) {
  var text = ""
  for id in ids { text += "{\"_id\": \(id), \"name\": \"\(tag) \(id)\"}\n" }
  writeFile(path, Array(text.utf8))
}

/// The catalog entry of a collection, as stored.
func catalogEntry(_ name: String, in store: Store) throws -> Document? {
  let bytes = try store.read { transaction -> [UInt8]? in
    guard let catalog = try transaction.database(Transaction.catalogName, create: false) else { return nil }
    return try transaction.lmdb.get(catalog, Array(name.utf8)).map { Array($0) }
  }
  return try bytes.map { try Document(bytes: $0) }
}

/// The import leases in a store's `__meta` database, by key.
func leases(in store: Store) throws -> [String] {
  try store.read { transaction in
    guard let meta = try transaction.database(Transaction.metaName, create: false) else { return [] }
    var keys: [String] = []
    try transaction.lmdb.scan(meta) { key, _ throws(StoreError) in
      let name = String(decoding: key, as: UTF8.self)
      if name.hasPrefix("import:") { keys.append(name) }
      return true
    }
    return keys
  }
}

/// A process id that no process has: the largest that `kill` reports as missing.
func deadProcessID() -> pid_t {
  var dead: pid_t = 4_000_000
  while kill(dead, 0) == 0 || errno != ESRCH { dead -= 1 }
  return dead
}

/// Runs of the built `reef` against one store in a temporary folder, each with its standard
/// output and error in files named after it, optionally paused before its swap.
final class ReefRun {
  let directory: String
  var store: String { directory + "/s.reef" }
  var pauseFolder: String { directory + "/pause" }

  init() throws {
    directory = makeTemporaryDirectory("reef-import-race")
    mkdir(pauseFolder, 0o755)
  }

  deinit { removeTree(directory) }

  /// Starts `reef` with `arguments`; with `pausing`, its import pauses before the swap. Its
  /// standard error goes to `<name>.err`, or to `standardError` (a terminal) when given.
  func start(_ name: String, _ arguments: [String], pausing: Bool = false, standardError: String? = nil) throws
    -> pid_t
  {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, directory + "/\(name).out", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    if let standardError {
      posix_spawn_file_actions_addopen(&actions, 2, standardError, O_RDWR | O_NOCTTY, 0)
    } else {
      posix_spawn_file_actions_addopen(&actions, 2, directory + "/\(name).err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    }
    var environment: [String] = []
    var entry = environ
    while let pointer = entry.pointee {
      let variable = String(cString: pointer)
      if !variable.hasPrefix("REEF_TEST_PAUSE_BEFORE_SWAP=") { environment.append(variable) }
      entry += 1
    }
    if pausing { environment.append("REEF_TEST_PAUSE_BEFORE_SWAP=\(pauseFolder)") }
    var argv: [UnsafeMutablePointer<CChar>?] = ([reefBinary] + arguments).map { strdup($0) } + [nil]
    var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var pid = pid_t()
    let code = posix_spawn(&pid, reefBinary, &actions, nil, &argv, &envp)
    guard code == 0 else { throw StoreError(.storage, "cannot start \(reefBinary) (error \(code))") }
    return pid
  }

  /// Waits until the import of `pid` has paused before its swap.
  func waitUntilPaused(_ pid: pid_t) throws {
    try poll("process \(pid) to pause before its swap") { access(pauseFolder + "/paused.\(pid)", F_OK) == 0 }
  }

  /// Waits until the run `name` has written `text` on standard error.
  func waitFor(_ name: String, toSay text: String) throws {
    try poll("\(name) to say \(text)") { errors(name).contains(text) }
  }

  /// Lets paused imports go on.
  func resume() { writeFile(pauseFolder + "/resume", []) }

  /// Waits for `pid` to exit and returns its raw wait status.
  func finish(_ pid: pid_t) throws -> Int32 { try waitForReef(pid) }

  func output(_ name: String) -> String { String(decoding: readFile(directory + "/\(name).out") ?? [], as: UTF8.self) }
  func errors(_ name: String) -> String { String(decoding: readFile(directory + "/\(name).err") ?? [], as: UTF8.self) }

  /// Polls `done` every 10 ms; gives up after ``ImportRaceTests/patience`` seconds.
  private func poll(_ what: String, _ done: () -> Bool) throws {
    var waited = 0.0
    while !done() {
      guard waited < ImportRaceTests.patience else {
        resume()
        throw StoreError(.storage, "gave up waiting for \(what)")
      }
      usleep(10_000)
      waited += 0.01
    }
  }
}

/// A pseudo-terminal: a process given its device as standard error writes to a terminal, and
/// the test reads what it wrote from the other side.
final class PseudoTerminal {
  private let controller: Int32
  /// The terminal device, to open in the child.
  let devicePath: String

  init() throws {
    #if os(Linux)
      // Glibc's posix_openpt, unlockpt and ptsname are not imported: their ioctls, which are
      // the same on every Linux architecture (asm-generic).
      controller = open("/dev/ptmx", O_RDWR | O_NOCTTY)
      var unlocked: Int32 = 0
      var number: UInt32 = 0
      guard controller >= 0, ioctl(controller, 0x4004_5431 /* TIOCSPTLCK */, &unlocked) == 0,
        ioctl(controller, 0x8004_5430 /* TIOCGPTN */, &number) == 0
      else { throw StoreError(.storage, "cannot open a pseudo-terminal (errno \(errno))") }
      devicePath = "/dev/pts/\(number)"
    #else
      controller = posix_openpt(O_RDWR | O_NOCTTY)
      guard controller >= 0, grantpt(controller) == 0, unlockpt(controller) == 0, let name = ptsname(controller)
      else { throw StoreError(.storage, "cannot open a pseudo-terminal (errno \(errno))") }
      devicePath = String(cString: name)
    #endif
    _ = fcntl(controller, F_SETFD, FD_CLOEXEC)
    _ = fcntl(controller, F_SETFL, fcntl(controller, F_GETFL) | O_NONBLOCK)
    // Keep the device open here too, so that reads do not fail before the child opens it.
    device = open(devicePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
  }

  private var device: Int32 = -1

  deinit {
    if device >= 0 { close(device) }
    close(controller)
  }

  /// What has been written to the terminal since the last call (nothing when nothing was).
  func readAvailable() -> String {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(controller, &buffer, buffer.count)
      guard count > 0 else { break }
      bytes += buffer[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
