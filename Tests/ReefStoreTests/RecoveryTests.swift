import CLMDB
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Recovery after a restart of the machine (`Specs/store/log.md`), acted out on copies of a
/// store's files (``PowerLossCopy``); the crash test does the same after every kill.
@Suite struct RecoveryTests {
  /// A power loss that lost both of LMDB's meta pages, and the pages written since the
  /// checkpoint: the first opener writes the checkpoint's meta pages back and applies the log's
  /// records (none when the store closed, which checkpoints).
  @Test(arguments: [false, true])
  func aStoreWhoseMetaPagesWereLostRecovers(closed: Bool) throws {
    let directory = TemporaryDirectory()
    let path = directory.store
    do {
      let store = try Store(path: path)
      for index in 0..<10 { try store.collection("c").insert(document(#"{"_id": \#(index)}"#)) }
    }
    // A checkpoint at the transaction of the last insert, then 10 more commits.
    var store: Store? = try Store(path: path)
    for index in 10..<20 { try store?.collection("c").insert(document(#"{"_id": \#(index)}"#)) }
    if closed { store = nil }
    var garbage = SplitMix64(seed: 7)
    let copy = try #require(try PowerLossCopy(of: path, in: directory.path + "/copy", garbage: &garbage))
    #expect(copy.checkpoint > 0)
    let recovered = try Store(path: copy.path)
    #expect(recovered.log?.replayed == (closed ? 0 : 10))
    #expect(try recovered.collection("c").count() == 20)
    withExtendedLifetime(store) {}
  }
}

/// A store file cut short, or one byte of a header (meta) page changed: every open refuses it
/// with an error saying what and where (or rebuilds it from the commit log, with every commit),
/// never a crash and never a wrong answer (`Specs/store/layout.md`, "Checks at opening").
@Suite struct StoreFileDamageTests {
  /// A closed store of `count` documents with an ObjectId-free `_id` and some text, in
  /// `directory`; returns its path.
  static func makeStore(in directory: TemporaryDirectory, count: Int = 3000) throws -> String {
    let path = directory.store
    let store = try Store(path: path)
    try store.write { transaction in
      let people = transaction.collection("people")
      for number in 0..<count {
        try people.insert(["_id": .int32(Int32(number)), "text": .string("person \(number), with text to fill pages")])
      }
    }
    return path
  }

  /// Expects every open of the store at `path` (read-only and writable) to throw a `corrupt`
  /// error whose message holds each of `expected`.
  func expectRefused(_ path: String, _ expected: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    for readOnly in [true, false] {
      do {
        _ = try Store(path: path, options: StoreOptions(readOnly: readOnly))
        Issue.record("the damaged store was opened (read-only: \(readOnly))", sourceLocation: sourceLocation)
      } catch {
        #expect(error.kind == .corrupt, "\(error)", sourceLocation: sourceLocation)
        for text in expected {
          #expect(error.message.contains(text), "\(error) lacks \(text)", sourceLocation: sourceLocation)
        }
      }
    }
  }

  /// `truncate -s SIZE` on a copy of the store file (its log copied too, but naming the
  /// original's file: it cannot rebuild the copy): every open, in this process and through the
  /// `reef` binary (where a read past the end of the map would be SIGBUS), is an error saying
  /// the file is truncated, the size expected for the last page, and the size found.
  @Test func aTruncatedStoreFileIsRefusedByEveryOpen() throws {
    let directory = TemporaryDirectory()
    let path = try StoreFileDamageTests.makeStore(in: directory)
    let image = try StoreFileImage(path: path)
    let used = image.usedSize
    let lastPage = image.lastPage(ofHeader: image.newestHeader)
    #expect(used > 64 * image.pageSize)
    let input = directory.path + "/input.json"
    try PowerLoss.replaceContents(of: input, with: Array(#"{"_id": "new"}"#.utf8))
    for size in [8192, used / 4, used / 2, used - image.pageSize] {
      let copy = try PowerLoss.copyStore(path, into: directory.path + "/cut\(size)")
      #expect(truncate(copy, off_t(size)) == 0)
      expectRefused(
        copy, ["\(copy) is truncated", "expected \(used) bytes for last page \(lastPage)", "found \(size) bytes"])
      for arguments in [
        ["stats", "--store", copy], ["query", "--store", copy, "--collection", "people", "--count"],
        ["export", "--store", copy, "--out", directory.path + "/out\(size).jsonl"],
        ["import", "--store", copy, "--collection", "people", input],
      ] {
        let status = try runReef(arguments)
        #expect(status == 1 << 8, "reef \(arguments.joined(separator: " ")): wait status \(status) (exit 1 expected)")
      }
    }
  }

  /// A store file of 0 bytes beside the log of the store it was: not a new, empty store, and
  /// not "Bad file descriptor", but an error saying the file is empty and what held it.
  @Test func anEmptyStoreFileBesideItsLogIsRefused() throws {
    let directory = TemporaryDirectory()
    let path = try StoreFileDamageTests.makeStore(in: directory, count: 10)
    #expect(truncate(path, 0) == 0)
    expectRefused(path, ["\(path) is empty (0 bytes)", "records a checkpoint"])
    for arguments in [["stats", "--store", path], ["query", "--store", path, "--collection", "people", "--count"]] {
      let status = try runReef(arguments)
      #expect(status == 1 << 8, "reef \(arguments.joined(separator: " ")): wait status \(status) (exit 1 expected)")
    }
    // An empty file with nothing beside it is a new store, when opened for writing.
    let fresh = directory.path + "/fresh.reef"
    try PowerLoss.replaceContents(of: fresh, with: [])
    #expect(try Store(path: fresh).collection("c").count() == 0)
  }

  /// Each bit 0 of the newest header page's first 152 bytes (its page header and `MDB_meta`)
  /// flipped in turn, opened read-only without a log: an error, or every document (a byte LMDB
  /// does not read for it, such as the map size or a page count), never a crash or fewer.
  @Test func everyByteOfTheNewestHeaderPageIsAnErrorOrHarmless() throws {
    let directory = TemporaryDirectory()
    let path = try StoreFileDamageTests.makeStore(in: directory, count: 200)
    let original = try StoreFileImage(path: path)
    let base = original.newestHeader * original.pageSize
    var harmless: [Int] = []
    for offset in 0..<152 {
      let copy = try PowerLoss.copyStore(path, into: directory.path + "/flip", withLog: false)
      var image = original
      image.bytes[base + offset] ^= 0x01
      try PowerLoss.replaceContents(of: copy, with: image.bytes)
      do {
        let store = try Store(path: copy, options: StoreOptions(readOnly: true))
        let ids = try store.collection("people").find().toArray().map { $0["_id"] }
        #expect(ids == (0..<200).map { .int32(Int32($0)) }, "byte \(offset) flipped: \(ids.count) documents")
        #expect(try store.collection("people").count() == 200, "byte \(offset) flipped")
        harmless.append(offset)
      } catch {}
    }
    // The root page number, the main table's flags and the transaction are never harmless.
    for field in [128..<136, 92..<94, 144..<152] {
      #expect(harmless.allSatisfy { !field.contains($0) }, "\(field): \(harmless)")
    }
  }

  /// A main table of more than one level (300 collections: the stamp is in its first leaf, down
  /// the first child of each branch page) passes the checks, written again and reopened; its
  /// root page number made the older header's is found.
  @Test func aMainTableOfSeveralLevelsIsChecked() throws {
    let directory = TemporaryDirectory()
    let path = directory.store
    do {
      let store = try Store(path: path)
      try store.write { transaction in
        for number in 0..<300 { try transaction.collection("collection-\(number)").insert(["_id": 1]) }
      }
      try store.collection("collection-7").insert(["_id": 2])
    }
    var image = try StoreFileImage(path: path)
    let newest = image.newestHeader
    #expect(image.bytes.littleEndian(at: newest * image.pageSize + 94, size: 2) >= 2)
    #expect(try Store(path: path, options: StoreOptions(readOnly: true)).collectionNames().count == 300)
    #expect(try Store(path: path).collection("collection-7").count() == 2)
    image = try StoreFileImage(path: path)
    let page = image.newestHeader
    image.bytes.setLittleEndian(image.mainRoot(ofHeader: 1 - page), at: image.mainRootOffset(ofHeader: page), size: 8)
    let copy = try PowerLoss.copyStore(path, into: directory.path + "/copy", withLog: false)
    try PowerLoss.replaceContents(of: copy, with: image.bytes)
    expectRefused(copy, ["has a damaged header", "header page \(page)"])
  }

  /// A store last written before stamps (the stamp removed with LMDB's own API, below Reef):
  /// both header pages pass the checks (their main table starts with a table's record), the
  /// store opens with its documents, read-only and writable, and its next write stamps it.
  @Test func aStoreWrittenBeforeStampsOpens() throws {
    let directory = TemporaryDirectory()
    let path = try StoreFileDamageTests.makeStore(in: directory, count: 50)
    for _ in 0..<2 {  // both header pages without a stamp
      var environment: OpaquePointer?
      #expect(mdb_env_create(&environment) == 0)
      #expect(mdb_env_set_maxdbs(environment, 16) == 0)
      #expect(mdb_env_open(environment, path, UInt32(MDB_NOSUBDIR), 0o644) == 0)
      var transaction: OpaquePointer?
      #expect(mdb_txn_begin(environment, nil, 0, &transaction) == 0)
      var main: MDB_dbi = 0
      #expect(mdb_dbi_open(transaction, nil, 0, &main) == 0)
      let removed = TransactionStamp.key.withUnsafeBytes { key in
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        return mdb_del(transaction, main, &keyValue, nil)
      }
      #expect(removed == 0 || removed == MDB_NOTFOUND)
      // A change to a table, so that the commit writes a header page.
      var meta: MDB_dbi = 0
      #expect(mdb_dbi_open(transaction, "__meta", 0, &meta) == 0)
      let put = Array("legacy".utf8).withUnsafeBytes { key in
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var data = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        return mdb_put(transaction, meta, &keyValue, &data, 0)
      }
      #expect(put == 0)
      #expect(mdb_txn_commit(transaction) == 0)
      mdb_env_close(environment)
    }
    #expect(try Store(path: path, options: StoreOptions(readOnly: true)).collection("people").count() == 50)
    let store = try Store(path: path)
    try store.collection("people").insert(["_id": 50])
    #expect(try store.collection("people").find().count() == 51)
    let stamped = try store.read { transaction in
      var main: MDB_dbi = 0
      try check(mdb_dbi_open(transaction.lmdb.pointer, nil, 0, &main), "main")
      return try transaction.lmdb.get(main, TransactionStamp.key).map { Array($0) }
    }
    #expect(stamped?.count == 8)
  }

  /// A store file cut short past the pages of the log's checkpoint (what LMDB wrote since is
  /// lost) is rebuilt from the checkpoint and the log's records, as after a power loss: every
  /// commit is there. A read-only opener says to open it for writing once.
  @Test func aStoreFileCutShortPastItsCheckpointIsRebuiltFromTheLog() throws {
    let directory = TemporaryDirectory()
    let path = try StoreFileDamageTests.makeStore(in: directory, count: 100)
    let store = try Store(path: path)  // a checkpoint, and a pin on it
    for number in 100..<400 { try store.collection("people").insert(["_id": .int32(Int32(number))]) }
    let copy = try PowerLoss.copyStore(path, into: directory.path + "/copy")
    // The copy's log names the copy's file, in this boot: a crash of the process, then the cut.
    try PowerLoss.rewriteHeader(copy, boot: CommitLog.currentBoot())
    let checkpoint = try #require(try LogImage(path: copy + "-log").newest).checkpointMeta()
    let image = try StoreFileImage(path: copy)
    let size = (Int(checkpoint.lastPage) + 1) * image.pageSize
    #expect(size < image.usedSize)
    #expect(truncate(copy, off_t(size)) == 0)
    do {
      _ = try Store(path: copy, options: StoreOptions(readOnly: true))
      Issue.record("a read-only open rebuilt the store")
    } catch {
      #expect(error.kind == .corrupt && error.message.contains("open it once without readOnly"), "\(error)")
    }
    let rebuilt = try Store(path: copy)
    #expect(rebuilt.log?.replayed == 300)
    #expect(try rebuilt.collection("people").count() == 400)
    #expect(try rebuilt.collection("people").find().count() == 400)
    withExtendedLifetime(store) {}
  }

  /// One change to the newest header page: the main table's root page number (the next page, or
  /// the root of the snapshot before), its flags, or the transaction number (two less: the
  /// other header page then looks newest; or 256 more). Without a log that can rebuild it,
  /// every open refuses the file naming the header page; with the log's checkpoint before the
  /// damage, the store is rebuilt with every document.
  @Test(arguments: ["root+1", "stale root", "flags DUPSORT", "flags INTEGERKEY", "txnid-2", "txnid+256"])
  func aDamagedHeaderPageIsDetected(_ change: String) throws {
    let directory = TemporaryDirectory()
    let path = try StoreFileDamageTests.makeStore(in: directory, count: 500)
    do {
      // Commits after the checkpoint (left by the first store's close), logged, then a crash.
      let store = try Store(path: path)
      for number in 500..<510 { try store.collection("people").insert(["_id": .int32(Int32(number))]) }
      _ = try PowerLoss.copyStore(path, into: directory.path + "/logged")
    }
    for rebuildable in [false, true] {
      let copy = try PowerLoss.copyStore(
        directory.path + "/logged/store.reef", into: directory.path + "/copy-\(rebuildable)", withLog: rebuildable)
      if rebuildable { try PowerLoss.rewriteHeader(copy, boot: CommitLog.currentBoot()) }
      var image = try StoreFileImage(path: copy)
      let page = image.newestHeader
      let other = 1 - page
      switch change {
      case "root+1":
        image.bytes[image.mainRootOffset(ofHeader: page)] &+= 1
      case "stale root":
        image.bytes.setLittleEndian(image.mainRoot(ofHeader: other), at: image.mainRootOffset(ofHeader: page), size: 8)
      case "flags DUPSORT":
        image.bytes[image.mainFlagsOffset(ofHeader: page)] = 0x04
      case "flags INTEGERKEY":
        image.bytes[image.mainFlagsOffset(ofHeader: page)] = 0x08
      case "txnid-2":
        image.bytes[image.transactionOffset(ofHeader: page)] &-= 2
      default:
        image.bytes[image.transactionOffset(ofHeader: page) + 1] &+= 1
      }
      try PowerLoss.replaceContents(of: copy, with: image.bytes)
      if rebuildable {
        let store = try Store(path: copy)
        #expect(try store.collection("people").count() == 510)
        #expect(try store.collection("people").find().count() == 510)
        #expect(try store.collectionNames() == ["people"])
      } else {
        expectRefused(copy, ["\(copy) has a damaged header", "header page"])
        let status = try runReef(["query", "--store", copy, "--collection", "people", "--count"])
        #expect(status == 1 << 8, "reef query --count: wait status \(status) (exit 1 expected)")
      }
    }
  }
}
