import CLMDB
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#endif

/// Durability levels (issue 4): each level commits, closes and reopens with everything there
/// (a process that ends loses nothing at any level); per-transaction levels and the log flushes
/// each makes; `syncOnCommit` mapped; mapped pages released.
@Suite struct DurabilityTests {
  @Test(arguments: Durability.allCases)
  func commitsSurviveClosingAndReopening(_ durability: Durability) throws {
    let directory = makeTemporaryDirectory("reef-durability-tests")
    defer { removeTree(directory) }
    let path = directory + "/store.reef"
    do {
      let store = try Store(path: path, options: StoreOptions(durability: durability))
      #expect(store.options.durability == durability)
      for index in 0..<20 { try store.collection("c").insert(document(#"{"_id": \#(index)}"#)) }
      _ = try store.write { transaction in
        try transaction.collection("c").insertMany((20..<50).map { try document(#"{"_id": \#($0)}"#) })
      }
      if durability != .full { try store.sync() }
    }
    for reopened in Durability.allCases {
      let store = try Store(path: path, options: StoreOptions(durability: reopened))
      #expect(try store.collection("c").count() == 50, "written with \(durability), reopened with \(reopened)")
    }
    let readOnly = try Store(path: path, options: StoreOptions(readOnly: true, durability: durability))
    #expect(try readOnly.collection("c").count() == 50)
  }

  @Test(arguments: Durability.allCases)
  func oneTransactionChoosesItsOwnLevel(_ storeLevel: Durability) throws {
    let directory = makeTemporaryDirectory("reef-durability-tests")
    defer { removeTree(directory) }
    let path = directory + "/store.reef"
    do {
      let store = try Store(path: path, options: StoreOptions(durability: storeLevel))
      let log = try #require(store.log)
      // LMDB never flushes on commit: the log does, once per fully durable commit.
      #expect(store.environmentFlags & UInt32(MDB_NOSYNC | MDB_NOMETASYNC) == UInt32(MDB_NOSYNC))
      for (index, level) in Durability.allCases.enumerated() {
        let flushes = log.commitFlushes
        _ = try store.write(durability: level) { transaction in
          try transaction.collection("c").insert(document(#"{"_id": \#(index)}"#))
        }
        #expect(log.commitFlushes - flushes == (level == .full ? 1 : 0), "a commit at \(level)")
      }
      var flushes = log.commitFlushes
      _ = try store.write { transaction in
        try transaction.collection("c").insert(document(#"{"_id": "default"}"#))
      }
      #expect(log.commitFlushes - flushes == (storeLevel == .full ? 1 : 0), "a commit at the store's level")
      // A transaction that throws commits nothing and writes nothing to the log.
      flushes = log.commitFlushes
      #expect(throws: StoreError.self) {
        try store.write(durability: .full) { transaction in
          try transaction.collection("c").insert(document(#"{"_id": "rolled back"}"#))
          throw StoreError(.invalidQuery, "stop")
        }
      }
      #expect(log.commitFlushes == flushes)
      // A transaction that changes nothing is not logged.
      try store.write(durability: .full) { transaction in
        _ = try transaction.collection("c").findOne(["_id": 0])
      }
      #expect(log.commitFlushes == flushes)
    }
    let store = try Store(path: path)
    #expect(try store.collection("c").count() == 4)
    #expect(try store.collection("c").findOne(["_id": "rolled back"]) == nil)
  }

  @Test func importsStillSwapInWholeWithOneFlushBatches() throws {
    let directory = makeTemporaryDirectory("reef-durability-tests")
    defer { removeTree(directory) }
    var bytes: [UInt8] = []
    for index in 0..<2_500 { bytes += try document(#"{"_id": \#(index), "n": "x"}"#).bytes }
    let input = directory + "/in.bson"
    writeFile(input, bytes)
    let path = directory + "/store.reef"
    do {
      let store = try Store(path: path)
      let log = try #require(store.log)
      let flushes = log.commitFlushes
      let report = try store.importDump(
        from: DumpSource(path: input), options: ImportOptions(collection: "c", batchDocuments: 1_000))
      #expect(report.documents == 2_500)
      // The preparation and the batches are logged without a flush; the swap, at the store's
      // level, flushes once.
      #expect(log.commitFlushes - flushes == 1)
    }
    #expect(try Store(path: path).collection("c").count() == 2_500)
  }

  /// A process that wrote keeps a read transaction on the last checkpoint (its pin, see
  /// Specs/store/log.md) so that its writes never overwrite the checkpoint's pages. Once another
  /// process has checkpointed, the next read here lets the pin go, so that a process that has
  /// stopped writing does not hold back the other writers' page reuse; its next write takes a
  /// pin again (with a checkpoint of its own).
  @Test func aProcessThatStoppedWritingLetsGoOfItsPin() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let log = try #require(store.log)
    try store.collection("mine").insert(document(#"{"_id": 1}"#))
    #expect(log.hasPin)
    let checkpoints = log.checkpoints
    // Another process writes: its first write checkpoints.
    let input = temporary.directory + "/in.bson"
    writeFile(input, try (0..<50).flatMap { try document(#"{"_id": \#($0)}"#).bytes })
    let status = try runReef(["import", input, "--store", temporary.path, "--collection", "other"])
    #expect(status == 0, "reef import failed (\(status))")
    #expect(log.hasPin, "nothing has read or written here since")
    #expect(try store.collection("other").count() == 50)
    #expect(!log.hasPin, "a read after another process's checkpoint lets the pin go")
    try store.collection("mine").insert(document(#"{"_id": 2}"#))
    #expect(log.hasPin)
    #expect(log.checkpoints == checkpoints + 1, "the next write takes a pin with a checkpoint")
    #expect(try store.collection("mine").count() == 2)
  }

  /// Every read transaction first looks, without a lock, at the pin's checkpoint and at the
  /// shared block's sequence (`releaseStalePin`) while a writer on another thread replaces the
  /// pin at each checkpoint: those accesses are atomic. Reads on four threads run alongside 40
  /// writes that each checkpoint, and see every commit in order. (`make sanitize` runs it under
  /// ThreadSanitizer, which reported a data race here between `replacePin`'s store and
  /// `releaseStalePin`'s load of the plain pointer this replaced.)
  @Test func readsOnOtherThreadsWhileCheckpointsReplaceThePin() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let log = try #require(store.log)
    try store.collection("c").insert(document(#"{"_id": 0}"#))
    final class Context: @unchecked Sendable {
      let store: Store
      let done = AtomicCounter()
      let failures = AtomicCounter()
      init(_ store: Store) { self.store = store }
    }
    let context = Context(store)
    var threads: [pthread_t] = []
    for _ in 0..<4 {
      var thread = pthread_t()
      pthread_create(
        &thread, nil,
        { argument in
          let context = Unmanaged<Context>.fromOpaque(argument!).takeUnretainedValue()
          var last = 0
          while context.done.load() == 0 {
            let count = (try? context.store.collection("c").count()) ?? -1
            if count < last { context.failures.add(1) }
            last = count
          }
          return nil
        }, Unmanaged.passUnretained(context).toOpaque())
      threads.append(thread)
    }
    let checkpoints = log.checkpoints
    for index in 1...40 {
      try store.write { transaction in
        try transaction.collection("c").insert(document(#"{"_id": \#(index)}"#))
        try log.checkpoint(environment: store.environment)
      }
    }
    context.done.add(1)
    for thread in threads { pthread_join(thread, nil) }
    #expect(context.failures.load() == 0, "a read saw fewer documents than a read before it")
    #expect(log.checkpoints >= checkpoints + 40)
    #expect(try store.collection("c").count() == 41)
  }

  /// A store is four files; `Store.deleteFiles(at:)` removes them all, and says whether the
  /// store was there.
  @Test func aStoreIsItsFileLockFileAndCommitLog() throws {
    let directory = TemporaryDirectory()
    let path = directory.store
    do {
      let store = try Store(path: path)
      try store.collection("c").insert(document(#"{"_id": 1}"#))
    }
    let present = Store.files(at: path).filter { access($0, F_OK) == 0 }
    #expect(present == [path, path + "-lock", path + "-log", path + "-log-shared"])
    #expect(try Store.deleteFiles(at: path))
    #expect(Store.files(at: path).allSatisfy { access($0, F_OK) != 0 })
    #expect(try !Store.deleteFiles(at: path))
    // A new store at the same path starts empty (no log of the old one is applied to it).
    #expect(try Store(path: path).collection("c").count() == 0)
  }

  @available(*, deprecated, message: "tests the deprecated syncOnCommit")
  @Test func syncOnCommitMapsToFullAndNone() {
    #expect(StoreOptions(syncOnCommit: true).durability == .full)
    #expect(StoreOptions(syncOnCommit: false).durability == .none)
    var options = StoreOptions(durability: .normal)
    #expect(options.syncOnCommit)
    options.syncOnCommit = false
    #expect(options.durability == .none)
    #expect(!options.syncOnCommit)
    options.syncOnCommit = true
    #expect(options.durability == .full)
  }

  #if os(Linux)
    /// Reading maps the store's pages into this process; releasing them drops them from its
    /// resident memory, and documents still read the same (also views read before).
    @Test func releasingMappedPagesKeepsEveryDocument() throws {
      let temporary = try TemporaryStore()
      let store = temporary.store
      let filler = String(repeating: "x", count: 1_000)
      try store.write { transaction in
        let collection = transaction.collection("c")
        for index in 0..<8_000 { try collection.insert(document(#"{"_id": \#(index), "f": "\#(filler)"}"#)) }
      }
      try store.read { transaction in
        let collection = transaction.collection("c")
        var first: Document?
        var count = 0
        try collection.forEach { document in
          if first == nil { first = document.copied() }
          count += 1
          return true
        }
        #expect(count == 8_000)
        let before = mappedResidentKilobytes(store)
        #expect(before > 4_000, "a scan of 8 MB mapped only \(before) kB")
        store.releaseMappedPages()
        let after = mappedResidentKilobytes(store)
        #expect(after < 1_000, "\(after) kB still mapped after releasing (\(before) kB before)")
        // The same transaction reads the same bytes again.
        var again = 0
        try collection.forEach { document in
          if again == 0 { #expect(document.bytes == first?.bytes) }
          again += 1
          return true
        }
        #expect(again == 8_000)
      }
      #expect(try store.collection("c").count() == 8_000)
    }
  #endif
}

#if os(Linux)
  /// The resident kilobytes of the store's memory map, from /proc/self/smaps.
  func mappedResidentKilobytes(_ store: Store) -> Int {
    var info = MDB_envinfo()
    mdb_env_info(store.environment, &info)
    guard let (address, _) = store.mappings(ofSize: info.me_mapsize).first else { return -1 }
    let start = UInt(bitPattern: address)
    guard let bytes = readFile("/proc/self/smaps") else { return -1 }
    var inMap = false
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
      if let dash = line.firstIndex(of: "-"), let address = UInt(line[..<dash], radix: 16),
        line[line.index(after: dash)...].first?.isHexDigit == true
      {
        inMap = address == start
        continue
      }
      if inMap && line.hasPrefix("Rss:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? -1
      }
    }
    return -1
  }
#endif
