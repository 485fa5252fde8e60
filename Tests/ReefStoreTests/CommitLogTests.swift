import CLMDB
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#endif

/// The commit log (`Specs/store/log.md`), checked by acting a restart of the machine out on
/// copies of a store's files (``PowerLoss``).
///
/// While a store is open, its files read through the page cache are what a crash of the process
/// leaves. A power loss may also lose what the store file gained since the log's checkpoint, so
/// the copies get that damage (``PowerLoss/damage(storeAt:since:seed:)``): both meta pages and
/// every page written since the checkpoint overwritten with garbage. The restart itself is
/// another boot id in the copy's log header (``PowerLoss/rewriteHeader(_:slot:boot:ownFile:)``),
/// with the copy's device and inode, as the log of this very file would hold. No test sets
/// `REEF_BOOT_ID`: the tests of a process run in parallel.
@Suite("Commit log") struct CommitLogTests {
  /// A power loss after `.full` commits loses none of them. The copy of a store's files, with
  /// both meta pages and every page written since the checkpoint destroyed, opens after a
  /// restart with every document committed before the copy and nothing else (inserts, an update,
  /// a replacement, deletes, a collection dropped, collections made with indexes, and one
  /// transaction that makes, fills and drops a collection before making another), its indexes
  /// agreeing with its documents; each transaction logged since the checkpoint is applied again.
  @Test func aPowerLossAfterFullCommitsLosesNothing() throws {
    #expect(PowerLoss.anotherBoot != CommitLog.currentBoot())
    let workload = try LoggedWorkload()
    let expected = try contents(of: workload.store)
    let copy = try workload.copy()
    #expect(try LogImage(path: copy + "-log").records().count == workload.transactions)
    let damaged = try PowerLoss.damage(storeAt: copy, since: workload.checkpointImage)
    #expect(damaged > 0, "no page was written after the checkpoint")
    try PowerLoss.rewriteHeader(copy)
    #expect(workload.transactions > 0)
    try expectReopened(copy, holding: expected, replayed: workload.transactions)
  }

  /// Several processes commit into one store at once, their records interleaved in one log
  /// (each writer appends where the shared block says, under LMDB's write lock, and takes its
  /// own pin): every document is there, and a power loss acted out on a copy afterwards loses
  /// none of them.
  @Test func writersInSeveralProcessesShareOneLog() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.collection("mine").createIndex(["n": 1])
    let count = 20_000  // 20 write transactions of 1,000 documents each, per importer
    var importers: [pid_t] = []
    for name in ["a", "b"] {
      let input = temporary.directory + "/\(name).bson"
      var bytes: [UInt8] = []
      for number in 0..<count {
        bytes += try Document(
          extendedJSON: #"{"_id": \#(number), "from": "\#(name)", "pad": "\#(String(repeating: "x", count: 200))"}"#
        ).bytes
      }
      writeFile(input, bytes)
      importers.append(try startReef(["import", input, "--store", temporary.path, "--collection", name]))
    }
    // Meanwhile this process commits one document at a time, fully durable, until both
    // importers are done (and at least 200 times).
    var mine = 0
    var running = importers
    while !running.isEmpty || mine < 200 {
      _ = try store.collection("mine").insert(["_id": .int32(Int32(mine)), "n": .int32(Int32(mine % 7))])
      mine += 1
      running = running.filter { pid in
        var status: Int32 = 0
        let done = waitpid(pid, &status, WNOHANG)
        guard done == 0 else {
          #expect(done == pid && status == 0, "an importer failed (wait \(done), status \(status))")
          return false
        }
        return true
      }
    }
    let expected = try contents(of: store)
    #expect(expected["a"]?.documents.count == count)
    #expect(expected["b"]?.documents.count == count)
    #expect(expected["mine"]?.documents.count == mine)
    let copy = try PowerLoss.copyStore(temporary.path, into: temporary.directory + "/copy")
    _ = try PowerLoss.damage(storeAt: copy)
    try PowerLoss.rewriteHeader(copy)
    let recovered = try Store(path: copy)
    #expect(try problems(in: recovered, expected: expected) == [])
    #expect((recovered.log?.replayed ?? 0) > 0)
    print(
      "several writers: \(mine) commits here while two importers committed \(2 * count) documents; \(recovered.log?.replayed ?? 0) records applied after the acted-out power loss"
    )
  }

  /// A power loss may leave neither meta page readable (both written since the checkpoint, both
  /// lost, as garbage or zeros): the store file is then recovered from the checkpoint, which
  /// holds copies of both, rather than left for LMDB to refuse.
  @Test(arguments: [false, true])
  func aStoreFileWithoutAReadableMetaPageIsRecovered(zeros: Bool) throws {
    let workload = try LoggedWorkload(inserts: 5)
    let expected = try contents(of: workload.store)
    let copy = try workload.copy()
    let pageSize = try #require(try LogImage(path: copy + "-log").newest).pageSize
    var random = SplitMix64(seed: 0x3E7A)
    let size = CommitLog.metaCopySize
    for start in [0, pageSize] {
      let lost = zeros ? [UInt8](repeating: 0, count: size) : PowerLoss.garbage(size, &random)
      try PowerLoss.overwrite(copy, at: start, with: lost)
    }
    try PowerLoss.rewriteHeader(copy)
    try expectReopened(copy, holding: expected, replayed: workload.transactions)
  }

  /// A store file older than the log's checkpoint (a backup copied over it in place: the same
  /// inode) is not the file the log was written for: after a restart it opens as it is, and
  /// the checkpoint's meta pages are not written into it.
  @Test func aStoreFileOlderThanTheCheckpointIsLeftAlone() throws {
    let directory = TemporaryDirectory()
    let path = directory.store
    var older: [String: CollectionContents] = [:]
    var backup: [UInt8] = []
    do {
      let store = try Store(path: path)
      for number in 0..<5 { _ = try store.collection("c").insert(["_id": .int32(Int32(number))]) }
      older = try contents(of: store)
      backup = try #require(readFile(path))
      for number in 5..<10 { _ = try store.collection("c").insert(["_id": .int32(Int32(number))]) }
    }
    try PowerLoss.replaceContents(of: path, with: backup)
    try PowerLoss.rewriteHeader(path)
    try expectReopened(path, holding: older, replayed: 0)
  }

  /// A crash of the process alone (the machine keeps running) loses nothing either, and needs
  /// no recovery: the same copy, undamaged and with this boot's id, opens with everything and
  /// applies no record. A record the store file does not hold (a writer that died between
  /// logging a transaction and committing it) is not applied: it was never acknowledged.
  @Test func aCrashOfTheProcessAloneAppliesNothing() throws {
    let workload = try LoggedWorkload()
    let expected = try contents(of: workload.store)
    let copy = try workload.copy()
    try PowerLoss.rewriteHeader(copy, boot: CommitLog.currentBoot())
    try expectReopened(copy, holding: expected, replayed: 0)
    // The store file before one more commit, its log after it.
    let storeFileBefore = try #require(readFile(workload.path))
    _ = try workload.store.collection("people").insert(["_id": "ghost", "city": "c0"])
    let ghost = try workload.copy()
    try PowerLoss.replaceContents(of: ghost, with: storeFileBefore)
    try PowerLoss.rewriteHeader(ghost, boot: CommitLog.currentBoot())
    #expect(try LogImage(path: ghost + "-log").records().count == workload.transactions + 1)
    try expectReopened(ghost, holding: expected, replayed: 0)
  }

  /// A record torn by the power loss ends the log: every record before it is applied again, its
  /// transaction is absent, and the store works on (a write after the recovery survives closing
  /// and opening it again).
  @Test func aTornLastRecordEndsTheLog() throws {
    let workload = try LoggedWorkload()
    let expected = try contents(of: workload.store)
    _ = try workload.store.collection("people").insert(["_id": "last", "city": "c0"])
    let copy = try workload.copy()
    try PowerLoss.damage(storeAt: copy, since: workload.checkpointImage)
    try PowerLoss.rewriteHeader(copy)
    let records = try LogImage(path: copy + "-log").records()
    #expect(records.count == workload.transactions + 1)
    let last = try #require(records.last)
    // The second half of its operations never reached the disk.
    let tear = last.offset + CommitLog.recordHeaderSize + last.length / 2
    var random = SplitMix64(seed: 0x7EA2)
    try PowerLoss.overwrite(copy + "-log", at: tear, with: PowerLoss.garbage(last.offset + last.size - tear, &random))
    #expect(try LogImage(path: copy + "-log").records().count == workload.transactions)
    let after: Document = ["_id": "after", "city": "c2"]
    do {
      let store = try expectReopened(copy, holding: expected, replayed: workload.transactions)
      _ = try store.collection("people").insert(after)
    }
    var withAfter = expected
    withAfter["people"]?.documents.append(after)
    let store = try Store(path: copy)
    #expect(try problems(in: store, expected: withAfter) == [])
    #expect(try store.collection("people").document(forID: "last") == nil)
  }

  /// A header slot whose checksum fails is ignored, whatever else it holds. A checkpoint writes
  /// the slot its sequence number selects, so a checkpoint torn by a power loss leaves the other
  /// slot whole: with the newest slot broken, the older checkpoint decides and its records (still
  /// in the log: nothing was logged after the newest checkpoint) are applied again, giving the
  /// same store as the newest would. With both slots broken, the store opens as its file is.
  @Test func aHeaderSlotWithABadChecksumIsIgnored() throws {
    let directory = TemporaryDirectory()
    let path = directory.store
    do {
      let store = try Store(path: path)
      _ = try store.collection("c").insertMany((0..<10).map { ["_id": .int32(Int32($0)), "n": .int32(Int32($0))] })
    }
    let store = try Store(path: path)
    let log = try #require(store.log)
    try store.collection("c").createIndex(["n": 1])
    for number in 10..<25 { _ = try store.collection("c").insert(["_id": .int32(Int32(number)), "n": 1]) }
    let checkpoints = log.checkpoints
    try store.write { _ in try log.checkpoint(environment: store.environment) }
    #expect(log.checkpoints == checkpoints + 1)
    let expected = try contents(of: store)

    let image = try LogImage(path: path + "-log")
    let newest = try #require(image.newest)
    let older = try #require(image.header(slot: 1 - newest.slot))
    #expect(newest.sequence == older.sequence + 1)
    #expect(newest.checkpoint == older.checkpoint + 16)
    #expect(image.records(of: newest).isEmpty)
    #expect(image.records(of: older).count == 16)

    // The header as the code reads it: whole, it decodes; any byte changed, it does not.
    let slot = Array(image.bytes[newest.slot * 4096..<newest.slot * 4096 + CommitLog.headerSize])
    #expect(LogHeader(decoding: slot)?.sequence == newest.sequence)
    for position in [0, 8, 12, 16, 24, 32, 40, 48, 56, 95, 96, 200, 352, 607, 608, 611] {
      var flipped = slot
      flipped[position] ^= 0x04
      #expect(LogHeader(decoding: flipped) == nil, "a header with byte \(position) changed decodes")
    }

    // Both slots whole, after a restart: the newest decides; nothing to apply.
    let whole = try PowerLoss.copyStore(path, into: directory.path + "/whole")
    try PowerLoss.rewriteHeader(whole, slot: 0)
    try PowerLoss.rewriteHeader(whole, slot: 1)
    try expectReopened(whole, holding: expected, replayed: 0)

    // The newest slot broken: the older checkpoint and its 16 records.
    let torn = try PowerLoss.copyStore(path, into: directory.path + "/torn")
    try PowerLoss.rewriteHeader(torn, slot: 0)
    try PowerLoss.rewriteHeader(torn, slot: 1)
    try PowerLoss.overwrite(torn + "-log", at: newest.slot * 4096 + 20, with: [0xFF])
    #expect(try LogImage(path: torn + "-log").newest?.sequence == older.sequence)
    try expectReopened(torn, holding: expected, replayed: 16)

    // Both slots broken: no checkpoint; the store file opens as it is, and gets a new header.
    let none = try PowerLoss.copyStore(path, into: directory.path + "/none")
    try PowerLoss.rewriteHeader(none, slot: 0)
    try PowerLoss.rewriteHeader(none, slot: 1)
    try PowerLoss.overwrite(none + "-log", at: 20, with: [0xFF])
    try PowerLoss.overwrite(none + "-log", at: 4096 + 20, with: [0xFF])
    #expect(try LogImage(path: none + "-log").newest == nil)
    try expectReopened(none, holding: expected, replayed: 0)
    #expect(try LogImage(path: none + "-log").newest?.boot == CommitLog.currentBoot())
  }

  /// A read-only store cannot recover. The first read-only opener of a store whose log must be
  /// applied again after a restart refuses, with an error saying to open it once for writing,
  /// and changes nothing; once a writable opener has recovered it, read-only opens see
  /// everything, also after another restart (a store closed since needs no recovery).
  @Test func aReadOnlyFirstOpenerRefusesToRecover() throws {
    let workload = try LoggedWorkload(inserts: 30)
    let expected = try contents(of: workload.store)
    let copy = try workload.copy()
    try PowerLoss.damage(storeAt: copy, since: workload.checkpointImage)
    try PowerLoss.rewriteHeader(copy)
    let files = (readFile(copy), readFile(copy + "-log"))
    let error = #expect(throws: StoreError.self) {
      _ = try Store(path: copy, options: StoreOptions(readOnly: true))
    }
    #expect(error?.kind == .open)
    #expect(error?.message.contains("open it once without readOnly") == true, "\(String(describing: error))")
    #expect(readFile(copy) == files.0)
    #expect(readFile(copy + "-log") == files.1)
    do {
      let store = try Store(path: copy)
      #expect(store.log?.replayed == workload.transactions)
    }
    do {
      let store = try Store(path: copy, options: StoreOptions(readOnly: true))
      #expect(try problems(in: store, expected: expected) == [])
    }
    try PowerLoss.rewriteHeader(copy)
    let store = try Store(path: copy, options: StoreOptions(readOnly: true))
    #expect(try problems(in: store, expected: expected) == [])
  }

  /// A log left next to another store file (its device and inode are not the file's) is not
  /// that file's: it is ignored, though it holds records and its checkpoint is older than the
  /// file, and the store opens with its own documents.
  @Test func aLogOfAnotherStoreFileIsIgnored() throws {
    let workload = try LoggedWorkload(inserts: 30)
    let other = workload.directory + "/other.reef"
    var expected: [String: CollectionContents] = [:]
    do {
      let store = try Store(path: other)
      for number in 0..<60 { _ = try store.collection("b").insert(["_id": .int32(Int32(number)), "n": "b"]) }
      expected = try contents(of: store)
    }
    let copy = try PowerLoss.copyStore(other, into: workload.directory + "/mixed")
    try PowerLoss.replaceContents(of: copy + "-log", with: try #require(readFile(workload.path + "-log")))
    try PowerLoss.rewriteHeader(copy, ownFile: false)
    let image = try LogImage(path: copy + "-log")
    let header = try #require(image.newest)
    #expect(image.records().count == workload.transactions)
    // Only the device and inode tell: the store file is newer than the log's checkpoint.
    let storeFile = try #require(readFile(copy))
    let newest = [0, header.pageSize].compactMap { LMDBMetaPage(storeFile, at: $0)?.transaction }.max() ?? 0
    #expect(newest >= header.checkpoint)
    try expectReopened(copy, holding: expected, replayed: 0)
  }

  /// A transaction whose record would pass ``CommitLog/largestRecord`` is not logged: it commits
  /// through a checkpoint (the log starts over), and survives a power loss with the commits
  /// logged after it.
  @Test func aTransactionTooLargeToLogCommitsThroughACheckpoint() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let log = try #require(store.log)
    for number in 0..<3 { _ = try store.collection("small").insert(["_id": .int32(Int32(number))]) }
    let checkpoints = log.checkpoints
    let flushes = log.commitFlushes
    var random = SplitMix64(seed: 0xB16)
    let big: [Document] = (0..<100).map { number in
      ["_id": .int32(Int32(number)), "blob": .binary(Binary(data: PowerLoss.garbage(100_000, &random)))]
    }
    #expect(big.reduce(0) { $0 + $1.byteCount } > CommitLog.largestRecord)
    _ = try store.collection("big").insertMany(big)
    #expect(log.checkpoints == checkpoints + 1)
    #expect(log.commitFlushes == flushes)
    #expect(try LogImage(path: temporary.path + "-log").records().isEmpty)
    let checkpointImage = try #require(readFile(temporary.path))
    for number in 3..<8 { _ = try store.collection("small").insert(["_id": .int32(Int32(number))]) }
    let expected = try contents(of: store)
    #expect(expected["big"]?.documents.count == 100)

    let copy = try PowerLoss.copyStore(temporary.path, into: temporary.directory + "/copy")
    try PowerLoss.damage(storeAt: copy, since: checkpointImage)
    try PowerLoss.rewriteHeader(copy)
    try expectReopened(copy, holding: expected, replayed: 5)
  }

  /// A commit whose record would take the log past ``CommitLog/checkpointThreshold``
  /// checkpoints first, and its record starts the log over; after a power loss the records of
  /// the new checkpoint are applied again, and none of the earlier ones still further on in the
  /// file.
  @Test func theLogStartsOverWhenItWouldPassItsThreshold() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let log = try #require(store.log)
    let checkpoints = log.checkpoints
    let filler = BSON.string(String(repeating: "x", count: 40_000))
    var number: Int32 = 0
    while log.checkpoints == checkpoints && number < 1_000 {
      _ = try store.collection("c").insert(["_id": .int32(number), "filler": filler])
      number += 1
    }
    #expect(log.checkpoints == checkpoints + 1)
    // Not before the log was nearly full: each commit's record is a little over 40,000 bytes.
    #expect(Int(number) * 40_000 > CommitLog.checkpointThreshold * 9 / 10)
    let records = try LogImage(path: temporary.path + "-log").records()
    #expect(records.map(\.offset) == [CommitLog.recordsStart])
    for more in 0..<5 { _ = try store.collection("c").insert(["_id": .string("after \(more)")]) }
    let expected = try contents(of: store)
    let copy = try PowerLoss.copyStore(temporary.path, into: temporary.directory + "/copy")
    try PowerLoss.damage(storeAt: copy)
    try PowerLoss.rewriteHeader(copy)
    try expectReopened(copy, holding: expected, replayed: 6)
  }

  /// Commits at `.normal` write their records without flushing them; after `Store.sync()` they
  /// are in the log like any other and survive a power loss. (The copy is taken from the page
  /// cache, so what `sync` adds, the records reaching the disk, is not observable here.)
  @Test func normalCommitsAfterSyncSurviveAPowerLoss() throws {
    let workload = try LoggedWorkload(inserts: 60, options: StoreOptions(durability: .normal))
    let log = try #require(workload.store.log)
    #expect(log.commitFlushes == 0)
    try workload.store.sync()
    let expected = try contents(of: workload.store)
    let copy = try workload.copy()
    try PowerLoss.damage(storeAt: copy, since: workload.checkpointImage)
    try PowerLoss.rewriteHeader(copy)
    try expectReopened(copy, holding: expected, replayed: workload.transactions)
  }

  /// The log gains one record per write transaction that changes something, at any durability,
  /// and none for a read, a write transaction that changes nothing, or one that throws.
  @Test func oneRecordPerChangingTransaction() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let log = try #require(store.log)
    let people = store.collection("people")
    func records() throws -> Int { try LogImage(path: temporary.path + "-log").records().count }
    let checkpoints = log.checkpoints
    var expected = try records()
    func check(_ what: String, adds added: Int) throws {
      expected += added
      #expect(try records() == expected, "after \(what)")
    }
    _ = try people.insert(["_id": 1, "city": "Oslo"])
    try check("an insert", adds: 1)
    _ = try people.find(["city": "Oslo"]).toArray()
    try check("a read", adds: 0)
    try store.write { transaction in _ = try transaction.collection("people").findOne(["_id": 1]) }
    try check("a write transaction that only reads", adds: 0)
    #expect(try people.deleteOne(["_id": 99]) == 0)
    try check("a delete of nothing", adds: 0)
    #expect(try people.updateOne(["_id": 99], ["$set": ["city": "Rome"]]).matched == 0)
    try check("an update of nothing", adds: 0)
    #expect(throws: StoreError.self) { try people.insert(["_id": 1]) }
    try check("a duplicate insert", adds: 0)
    #expect(throws: StoreError.self) {
      try store.write { transaction in
        _ = try transaction.collection("people").insert(["_id": 2])
        throw StoreError(.invalidQuery, "stop")
      }
    }
    try check("a transaction that throws", adds: 0)
    for durability in Durability.allCases {
      try store.write(durability: durability) { transaction in
        _ = try transaction.collection("people").insertMany([
          ["_id": .string("\(durability) a")], ["_id": .string("\(durability) b")],
        ])
      }
      try check("an insert of two documents at \(durability)", adds: 1)
    }
    try people.createIndex(["city": 1])
    try check("an index made", adds: 1)
    #expect(log.checkpoints == checkpoints)
  }

  // MARK: Records

  /// A record holds each operation of its write transaction as the spec lays it out: a database
  /// opened by an earlier transaction is named when first used, one opened creating is named
  /// with its create flag, a refused duplicate and the delete of a missing key are left out,
  /// and a database made after a drop gets a number of its own. Applied to the store file as it
  /// was before the transaction, it gives what the transaction gave.
  @Test func aRecordAppliedAgainGivesWhatItsTransactionGave() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { transaction in
      let kept = try #require(try transaction.database("kept", create: true))
      for number in 0..<4 { try transaction.lmdb.put(kept, text("k\(number)"), text("v\(number)")) }
      let doomed = try #require(try transaction.database("doomed", create: true))
      try transaction.lmdb.put(doomed, text("d"), text("x"))
    }
    _ = try store.collection("docs").insert(["_id": 1, "n": 1])
    let before = try PowerLoss.copyStore(temporary.path, into: temporary.directory + "/before", withLog: false)

    var payload: [UInt8] = []
    try store.write { transaction in
      let lmdb = transaction.lmdb
      let record = try #require(lmdb.record)
      let kept = try #require(try transaction.database("kept", create: false))
      try lmdb.put(kept, text("k9"), text("v9"))
      #expect(try lmdb.put(kept, text("k0"), text("other"), unique: true) == false)
      #expect(try lmdb.delete(kept, text("k1")))
      #expect(try lmdb.delete(kept, text("absent")) == false)
      let made = try #require(try transaction.database("made", create: true))
      try lmdb.put(made, text("m"), text("n"))
      let doomed = try #require(try transaction.database("doomed", create: false))
      try lmdb.drop(doomed)
      store.forgetHandle("doomed", droppedIn: lmdb)
      let reborn = try #require(try transaction.database("reborn", create: true))
      try lmdb.put(reborn, text("r"), text("s"))
      // A document is written into the space LMDB reserves for it: the record holds its bytes.
      _ = try transaction.collection("docs").insert(["_id": 2, "n": 2])
      let size = record.seal(sequence: 1, salt: 0x5A17, lsn: 1)
      let length = Int(UInt32(littleEndian: record.bytes.load(fromByteOffset: 24, as: UInt32.self)))
      #expect(size == CommitRecord.paddedSize(CommitLog.recordHeaderSize + length))
      payload = Array(UnsafeRawBufferPointer(start: record.bytes + CommitLog.recordHeaderSize, count: length))
      // The change feed's entry for the insert is written at commit, after the record sealed
      // here by hand: left out, so that this record is the whole transaction.
      transaction.changeRecorder = nil
    }
    let operations = try #require(describeOperations(payload), "the payload does not decode: \(hexString(payload))")
    #expect(
      Array(operations.prefix(9)) == [
        "name 1 kept", "put 1 k9 = v9", "delete 1 k1", "name 2 made create", "put 2 m = n", "name 3 doomed", "drop 3",
        "name 4 reborn create", "put 4 r = s",
      ])
    // The insert: the document, then the collection's catalog entry (its generation raised).
    #expect(operations.count == 13)
    #expect(operations.dropFirst(9).first == "name 5 c:1")
    #expect(operations.dropFirst(10).first?.hasPrefix("put 5 ") == true)
    #expect(operations.dropFirst(11).first == "name 6 __catalog")
    #expect(operations.last?.hasPrefix("put 6 docs = ") == true)

    let target = try Store(path: before)
    #expect(try databases(of: target) != databases(of: store))
    try target.write { transaction in
      try CommitRecord.apply(payload, to: transaction.lmdb, where: "the test's record")
    }
    #expect(try databases(of: target) == databases(of: store))
  }

  /// Applying malformed operations (which a record's checksum keeps out: this is the last line of
  /// defence) throws `.corrupt`, naming the byte of the operations where they go wrong, and
  /// changes nothing; a record cut anywhere inside an operation is corrupt, and one with any
  /// byte changed never crashes.
  @Test func malformedOperationsAreCorruptAtTheirByte() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { transaction in
      let kept = try #require(try transaction.database("kept", create: true))
      try transaction.lmdb.put(kept, text("k"), text("v"))
    }
    let before = try databases(of: store)
    /// Applies `payload` in a write transaction that is then rolled back; returns its error.
    func apply(_ payload: [UInt8]) -> StoreError? {
      struct RollBack: Error {}
      do {
        try store.write { transaction in
          try CommitRecord.apply(payload, to: transaction.lmdb, where: "the test's record")
          throw RollBack()
        }
      } catch let error as StoreError {
        return error
      } catch {
        return nil
      }
      return nil
    }
    let nameKept = Operations().name(1, "kept").bytes  // 10 bytes
    let cases: [(what: String, payload: [UInt8], byte: Int)] = [
      ("an unknown operation", [9], 0),
      ("an unknown operation after a name", nameKept + [0], 10),
      ("a database number cut short", [1, 1], 1),
      ("a name longer than the record", [1, 1, 0, 0, 10, 0] + text("kep"), 6),
      ("a put to a database never named", Operations().put(7, text("k"), text("v")).bytes, 1),
      ("a key longer than the record", nameKept + [2, 1, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x6B], 17),
      ("a value length cut short", nameKept + [2, 1, 0, 1, 0, 0, 0, 0x6B, 0, 0], 18),
      ("a delete after its database's drop", Operations().name(1, "kept").drop(1).delete(1, text("k")).bytes, 14),
      ("a database that does not exist", Operations().name(1, "nope").bytes, 6),
    ]
    for (what, payload, byte) in cases {
      let error = apply(payload)
      #expect(error?.kind == .corrupt, "\(what): \(String(describing: error))")
      #expect(
        error?.message.hasSuffix("at byte \(byte) of its operations") == true, "\(what): \(String(describing: error))")
      #expect(error?.message.hasPrefix("the test's record: ") == true, "\(what): \(String(describing: error))")
    }
    #expect(apply([]) == nil)

    var operations = Operations().name(1, "kept").put(1, text("k2"), text("v2")).delete(1, text("k"))
    operations = operations.name(2, "fresh", create: true).put(2, text("a"), text("b")).drop(2)
    operations = operations.put(1, text("k3"), [UInt8](repeating: 7, count: 300))
    #expect(apply(operations.bytes) == nil)
    for cut in 0..<operations.bytes.count where !operations.boundaries.contains(cut) {
      let error = apply(Array(operations.bytes[..<cut]))
      #expect(error?.kind == .corrupt, "cut at \(cut): \(String(describing: error))")
    }
    var random = SplitMix64(seed: 0xF1_1B)
    for _ in 0..<300 {
      var changed = operations.bytes
      changed[Int(random.next() % UInt64(changed.count))] ^= UInt8(1 + random.next() % 255)
      _ = apply(changed)
    }
    #expect(try databases(of: store) == before)
  }
}

// MARK: A store with logged commits

/// A store left open with logged commits of every kind since its last checkpoint: a first
/// opening fills it (`people`, indexed on `city`; `scratch`, indexed on `n`) and closes it; the
/// second opening checkpoints, then commits single-document inserts into `people`, an update, a
/// replacement and a delete, drops `scratch`, makes `later` with an index, and in one
/// transaction makes, fills and drops `fleeting` before making `recreated` (LMDB may give it the
/// dropped databases' handles again).
final class LoggedWorkload {
  let directory: String
  let path: String
  let store: Store
  /// The store file as the second opening's checkpoint left it: a page that differs from it
  /// later was written after the checkpoint.
  let checkpointImage: [UInt8]
  /// The write transactions since that checkpoint that changed something: the log's records.
  private(set) var transactions = 0
  private var copies = 0

  init(inserts: Int = 100, options: StoreOptions = StoreOptions()) throws {
    directory = makeTemporaryDirectory("reef-commit-log-tests")
    path = directory + "/store.reef"
    do {
      let store = try Store(path: path, options: options)
      try store.collection("people").createIndex(["city": 1])
      _ = try store.collection("people").insertMany((0..<20).map(LoggedWorkload.person))
      try store.collection("scratch").createIndex(["n": 1])
      _ = try store.collection("scratch").insertMany(
        (0..<10).map { ["_id": .int32(Int32($0)), "n": .int32(Int32($0 % 3))] })
    }
    store = try Store(path: path, options: options)
    checkpointImage = readFile(path) ?? []
    try commitEveryKind(inserts: inserts)
  }

  deinit { removeTree(directory) }

  static func person(_ number: Int) -> Document {
    ["_id": .int32(Int32(number)), "name": .string("p\(number)"), "city": .string("c\(number % 7)")]
  }

  private func commitEveryKind(inserts: Int) throws {
    let people = store.collection("people")
    for number in 20..<(20 + inserts) {
      _ = try people.insert(LoggedWorkload.person(number))
      transactions += 1
    }
    #expect(try people.updateOne(["_id": 3], ["$set": ["city": "Oslo"]]).modified == 1)
    #expect(try people.replaceOne(["_id": 4], with: ["_id": 4, "name": "replaced", "city": "Lima"]).modified == 1)
    #expect(try people.deleteOne(["_id": 5]) == 1)
    #expect(try store.collection("scratch").drop())
    try store.collection("later").createIndex(["n": 1])
    transactions += 5
    try store.write { transaction in
      let fleeting = transaction.collection("fleeting")
      try fleeting.createIndex(["n": 1])
      _ = try fleeting.insertMany((0..<5).map { ["_id": .int32(Int32($0)), "n": .int32(Int32($0))] })
      #expect(try fleeting.drop())
      let recreated = transaction.collection("recreated")
      try recreated.createIndex(["n": -1])
      _ = try recreated.insert(["_id": "r", "n": 1])
      #expect(try transaction.collection("people").deleteMany(["city": "c1"]) > 0)
    }
    transactions += 1
    for number in 0..<10 {
      _ = try store.collection("later").insert(["_id": .int32(Int32(number)), "n": .int32(Int32(number % 4))])
      transactions += 1
    }
  }

  /// Copies the store file and its log (what the page cache holds now) into a directory of
  /// their own; returns the copy's path.
  func copy() throws -> String {
    copies += 1
    return try PowerLoss.copyStore(path, into: directory + "/copy\(copies)")
  }
}

/// The UTF-8 bytes of `string`.
private func text(_ string: String) -> [UInt8] { Array(string.utf8) }

// MARK: Operations

/// Record operations laid out by hand, as `Specs/store/log.md` has them, with the offsets where
/// each begins.
struct Operations {
  var bytes: [UInt8] = []
  var boundaries: Set<Int> = [0]

  private func adding(_ operation: [UInt8]) -> Operations {
    var copy = self
    copy.bytes += operation
    copy.boundaries.insert(copy.bytes.count)
    return copy
  }

  private static func le16(_ value: Int) -> [UInt8] { [UInt8](littleEndian: UInt64(value), size: 2) }

  func name(_ number: Int, _ name: String, create: Bool = false) -> Operations {
    adding([1] + Operations.le16(number) + [create ? 1 : 0] + Operations.le16(name.utf8.count) + text(name))
  }

  func put(_ number: Int, _ key: [UInt8], _ value: [UInt8]) -> Operations {
    adding([2] + Operations.le16(number) + le32(Int32(key.count)) + key + le32(Int32(value.count)) + value)
  }

  func delete(_ number: Int, _ key: [UInt8]) -> Operations {
    adding([3] + Operations.le16(number) + le32(Int32(key.count)) + key)
  }

  func drop(_ number: Int) -> Operations { adding([4] + Operations.le16(number)) }
}

/// A record's operations decoded as the spec lays them out, one line each (`name 2 made create`,
/// `put 1 k9 = v9`, `delete 1 k1`, `drop 3`; keys and values that are not printable in hex); nil
/// if they do not decode.
func describeOperations(_ payload: [UInt8]) -> [String]? {
  var offset = 0
  func integer(_ size: Int) -> Int? {
    guard offset + size <= payload.count else { return nil }
    defer { offset += size }
    return Int(payload.littleEndian(at: offset, size: size))
  }
  func data() -> String? {
    guard let count = integer(4), offset + count <= payload.count else { return nil }
    defer { offset += count }
    let bytes = payload[offset..<offset + count]
    return bytes.allSatisfy { (0x21...0x7E).contains($0) } ? String(decoding: bytes, as: UTF8.self) : hexString(bytes)
  }
  var lines: [String] = []
  while offset < payload.count {
    guard let op = integer(1), let number = integer(2) else { return nil }
    switch op {
    case 1:
      guard let create = integer(1), let count = integer(2), offset + count <= payload.count else { return nil }
      let name = String(decoding: payload[offset..<offset + count], as: UTF8.self)
      offset += count
      lines.append("name \(number) \(name)" + (create == 1 ? " create" : ""))
    case 2:
      guard let key = data(), let value = data() else { return nil }
      lines.append("put \(number) \(key) = \(value)")
    case 3:
      guard let key = data() else { return nil }
      lines.append("delete \(number) \(key)")
    case 4:
      lines.append("drop \(number)")
    default:
      return nil
    }
  }
  return lines
}

// MARK: Checking a store

/// A collection as a store holds it: its indexes and its documents, in `_id` order.
struct CollectionContents: Equatable {
  var indexes: [Document]
  var documents: [Document]
}

/// Every collection of `store`, from one snapshot.
func contents(of store: Store) throws -> [String: CollectionContents] {
  try store.read { transaction in
    var contents: [String: CollectionContents] = [:]
    for name in try transaction.collectionNames() {
      let collection = transaction.collection(name)
      contents[name] = CollectionContents(
        indexes: try collection.listIndexes(), documents: try collection.find().toArray())
    }
    return contents
  }
}

/// How `store` differs from `expected` (collections, indexes, documents), and where its indexes
/// disagree with its documents (``compareIndexEntries(_:_:_:)``).
func problems(in store: Store, expected: [String: CollectionContents]) throws -> [String] {
  try store.read { transaction in
    var problems: [String] = []
    let names = try transaction.collectionNames()
    if names != expected.keys.sorted() {
      problems.append("the store has the collections \(names), expected \(expected.keys.sorted())")
    }
    for name in names {
      let collection = transaction.collection(name)
      let documents = try collection.find().toArray()
      if let wanted = expected[name] {
        let indexes = try collection.listIndexes()
        if indexes != wanted.indexes {
          problems.append(
            "\(name) has the indexes \(indexes.map { $0.extendedJSON() }), expected "
              + "\(wanted.indexes.map { $0.extendedJSON() })")
        }
        if documents != wanted.documents {
          let found = Dictionary(documents.map { ($0["_id"].map(describe) ?? "none", $0) }) { first, _ in first }
          let wantedByID = Dictionary(wanted.documents.map { ($0["_id"].map(describe) ?? "none", $0) }) { a, _ in a }
          let missing = wantedByID.keys.filter { found[$0] == nil }.sorted()
          let extra = found.keys.filter { wantedByID[$0] == nil }.sorted()
          let different = wantedByID.keys.filter { found[$0] != nil && found[$0] != wantedByID[$0] }.sorted()
          problems.append(
            "\(name) has \(documents.count) documents, expected \(wanted.documents.count): missing "
              + "\(missing.prefix(10)), extra \(extra.prefix(10)), different \(different.prefix(10))")
        }
      }
      problems += try compareIndexEntries(transaction, name, documents)
    }
    return problems
  }
}

/// Opens the store at `path` (which recovers it, if it must) and expects it to hold `expected`,
/// its indexes agreeing with its documents (``problems(in:expected:)``), with `replayed` records of
/// its log applied. Returns the store, open.
@discardableResult
func expectReopened(
  _ path: String, holding expected: [String: CollectionContents], replayed: Int,
  sourceLocation: SourceLocation = #_sourceLocation
) throws -> Store {
  let store = try Store(path: path)
  #expect(try problems(in: store, expected: expected) == [], sourceLocation: sourceLocation)
  #expect(store.log?.replayed == replayed, sourceLocation: sourceLocation)
  return store
}

/// Every named LMDB database of `store` with its entries, from one snapshot.
func databases(of store: Store) throws -> [String: [[UInt8]: [UInt8]]] {
  try store.read { transaction in
    let lmdb = transaction.lmdb
    var main: MDB_dbi = 0
    try check(mdb_dbi_open(lmdb.pointer, nil, 0, &main), "opening the main database")
    var names: [String] = []
    try lmdb.scan(main) { key, _ throws(StoreError) in
      // The stamp (`TransactionStamp`, a transaction number) is no table's record.
      if key.elementsEqual(TransactionStamp.key) { return true }
      names.append(String(decoding: key, as: UTF8.self))
      return true
    }
    var databases: [String: [[UInt8]: [UInt8]]] = [:]
    for name in names {
      let database = try #require(try lmdb.open(name, create: false))
      var entries: [[UInt8]: [UInt8]] = [:]
      try lmdb.scan(database) { key, value throws(StoreError) in
        entries[Array(key)] = Array(value)
        return true
      }
      databases[name] = entries
    }
    return databases
  }
}
