import Foundation
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The store's change feed: what each commit inserted, deleted and modified, recorded with the
/// commit, read back by sequence number and delivered to observers in this process and others.
@Suite struct ChangeFeedTests {
  /// The feed's commits after `sequence`, read in a transaction.
  func changes(_ store: Store, after sequence: UInt64 = 0) throws -> ChangeBatch {
    try store.read { try $0.changes(after: sequence) }
  }

  @Test func aCommitListsWhatItChangedWithTheFieldsPaths() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    _ = try store.write { transaction in
      let contacts = transaction.collection("contacts")
      try contacts.insert(["_id": 1, "name": "Ann", "address": ["city": "Oslo", "street": "Main"]])
      try contacts.insert(["_id": 2, "name": "Bob", "n": 1])
      try contacts.insert(["_id": 3, "name": "Cy"])
    }
    var batch = try changes(store)
    #expect(batch.isComplete && batch.latest == 1)
    #expect(
      batch.commits == [
        CommitChanges(
          sequence: 1,
          changes: [1, 2, 3].map { DocumentChange(collection: "contacts", id: .int32($0), kind: .inserted) })
      ])

    try store.write { transaction in
      let contacts = transaction.collection("contacts")
      try contacts.replaceDocument(
        forID: 1, with: ["name": "Ann", "address": ["city": "Bergen", "street": "Main"], "tags": ["a"]])
      _ = try contacts.updateMany(["_id": 2], ["$set": ["n": 5]])
      try contacts.deleteDocument(forID: 3)
      // Inserted and deleted in one commit: no net change.
      try contacts.insert(["_id": 4])
      try contacts.deleteDocument(forID: 4)
      // Inserted, then modified: an insertion.
      try contacts.insert(["_id": 5, "n": 1])
      _ = try contacts.updateOne(["_id": 5], ["$inc": ["n": 1]])
      try transaction.collection("other").insert(["_id": "x", "list": [1, 2, 3]])
    }
    batch = try changes(store, after: 1)
    #expect(batch.isComplete && batch.latest == 2)
    #expect(
      batch.commits.first?.changes == [
        DocumentChange(collection: "contacts", id: 1, kind: .modified, fields: ["address.city", "tags"]),
        DocumentChange(collection: "contacts", id: 2, kind: .modified, fields: ["n"]),
        DocumentChange(collection: "contacts", id: 3, kind: .deleted),
        DocumentChange(collection: "contacts", id: 5, kind: .inserted),
        DocumentChange(collection: "other", id: "x", kind: .inserted),
      ])
    #expect(batch.commits.first?.touches("other") == true && batch.commits.first?.touches("none") == false)

    // Array elements by position while the array keeps its length; the array when it does not.
    try store.write { transaction in
      let other = transaction.collection("other")
      _ = try other.updateOne(["_id": "x"], ["$set": ["list.1": 20]])
    }
    try store.write { transaction in
      _ = try transaction.collection("other").updateOne(["_id": "x"], ["$push": ["list": 4]])
    }
    batch = try changes(store, after: 2)
    #expect(batch.commits.map(\.sequence) == [3, 4])
    #expect(batch.commits.map { $0.changes.first?.fields ?? [] } == [["list.1"], ["list"]])
  }

  @Test func commitsWithoutDocumentChangesAndRollbacksRecordNothing() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    _ = try store.write { try $0.collection("c").insert(["_id": 1]) }
    _ = try store.write { try $0.collection("c").createIndex(["x": 1]) }
    try store.write { try $0.setMetadata(["a": 1], forKey: "k") }
    struct Stop: Error {}
    #expect(throws: Stop.self) {
      try store.write { transaction in
        try transaction.collection("c").insert(["_id": 2])
        throw Stop()
      }
    }
    // A failed write (duplicate _id) rolls back and records nothing either.
    #expect(throws: StoreError.self) { try store.write { try $0.collection("c").insert(["_id": 1]) } }
    // A replacement with the same content is no change.
    try store.write { _ = try $0.collection("c").replaceDocument(forID: 1, with: ["_id": 1]) }
    let batch = try changes(store)
    #expect(batch.latest == 1)
    #expect(batch.commits.map(\.sequence) == [1])
  }

  @Test func bulkWritesDropsAndRenamesResetTheCollection() throws {
    let temporary = try TemporaryStore(options: StoreOptions(durability: .none))
    let store = temporary.store
    try store.write { transaction in
      let many = transaction.collection("many")
      for id in 0...Store.changeFeedDocumentLimit { try many.insert(["_id": .int64(Int64(id))]) }
      try transaction.collection("few").insert(["_id": 1])
    }
    var batch = try changes(store)
    #expect(batch.commits.first?.resetCollections == ["many"])
    #expect(batch.commits.first?.changes == [DocumentChange(collection: "few", id: 1, kind: .inserted)])
    try store.write { _ = try $0.collection("few").drop() }
    try store.write { try $0.renameCollection("many", to: "renamed", dropTarget: false, reserved: false) }
    batch = try changes(store, after: 1)
    #expect(batch.commits.map(\.resetCollections) == [["few"], ["many", "renamed"]])
  }

  @Test func anObserverFarBehindIsToldToReadEverythingAgain() throws {
    let temporary = try TemporaryStore(options: StoreOptions(durability: .none))
    let store = temporary.store
    let commits = Int(Store.changeFeedRetention) + 5
    for id in 1...commits { _ = try store.write { try $0.collection("c").insert(["_id": .int64(Int64(id))]) } }
    let behind = try changes(store, after: 2)
    #expect(!behind.isComplete)
    #expect(behind.latest == UInt64(commits))
    #expect(behind.commits.count == Int(Store.changeFeedRetention))
    let recent = try changes(store, after: UInt64(commits - 3))
    #expect(recent.isComplete)
    #expect(recent.commits.map(\.sequence) == [UInt64(commits - 2), UInt64(commits - 1), UInt64(commits)])
  }

  @Test func observersGetEveryCommitOnceInOrderFromAnyThread() throws {
    let temporary = try TemporaryStore(options: StoreOptions(durability: .none))
    let store = temporary.store
    _ = try store.write { try $0.collection("c").insert(["_id": 0]) }
    let seen = Collected()
    let observation = try store.observeChanges { batch in seen.add(batch) }
    let threads = 4
    let perThread = 25
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      for n in 0..<perThread {
        _ = try? store.write { try $0.collection("c").insert(["_id": .int64(Int64(thread * 1000 + n + 1))]) }
      }
    }
    let total = UInt64(1 + threads * perThread)
    #expect(seen.waitFor { $0.last?.latest == total })
    let batches = seen.batches
    #expect(batches.allSatisfy { $0.isComplete })
    // Sequence 1 was before the observation began.
    #expect(batches.flatMap(\.commits).map(\.sequence) == Array(2...total))
    let inserted = Set(batches.flatMap(\.commits).flatMap(\.changes).map(\.id))
    #expect(inserted.count == threads * perThread)
    observation.cancel()
    _ = try store.write { try $0.collection("c").insert(["_id": -1]) }
    usleep(50_000)
    #expect(seen.batches.count == batches.count, "no delivery after cancel")
  }

  @Test func observingFromASequenceDeliversWhatCameBefore() async throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    for id in 1...3 { _ = try store.write { try $0.collection("c").insert(["_id": .int32(Int32(id))]) } }
    var iterator = try store.changeBatches(after: 1).makeAsyncIterator()
    let first = await iterator.next()
    #expect(first?.commits.map(\.sequence) == [2, 3])
    _ = try store.write { try $0.collection("c").insert(["_id": 4]) }
    let second = await iterator.next()
    #expect(second?.commits.map(\.sequence) == [4])
    #expect(second?.commits.first?.changes == [DocumentChange(collection: "c", id: 4, kind: .inserted)])
  }

  /// Another process commits (the crash test's writer: inserts, updates and deletes in `a`, a
  /// ledger in `b`); the feed delivers each commit, and replaying its insertions and deletions
  /// gives exactly the `_id`s the store holds.
  @Test func anotherProcessesCommitsAreDelivered() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let seen = Collected()
    let observation = try store.observeChanges(after: 0) { batch in seen.add(batch) }
    defer { observation.cancel() }
    let transactions: UInt64 = 30
    let pid = try startProcess(crashWriterBinary, [temporary.path, "\(transactions)"])
    let status = try waitForProcess(pid)
    #expect(status == 0, "the writer exited with status \(status)")
    #expect(seen.waitFor { $0.last?.latest == transactions })
    let commits = seen.batches.flatMap(\.commits)
    #expect(commits.map(\.sequence) == Array(1...transactions))
    var ids: Set<BSON> = []
    for change in commits.flatMap(\.changes) where change.collection == CrashTransaction.documents {
      if change.kind == .inserted { ids.insert(change.id) }
      if change.kind == .deleted { ids.remove(change.id) }
    }
    let stored = try store.read { transaction in
      try transaction.collection(CrashTransaction.documents).find().toArray().compactMap { $0["_id"] }
    }
    #expect(ids == Set(stored))
    // Each commit inserts its ledger and (after the first) updates the one before.
    for commit in commits {
      let ledgers = commit.changes.filter { $0.collection == CrashTransaction.ledgers }
      #expect(ledgers.filter { $0.kind == .inserted }.count == 1, "commit \(commit.sequence)")
      #expect(
        ledgers.filter { $0.kind == .modified }.count == (commit.sequence == 1 ? 0 : 1), "commit \(commit.sequence)")
    }
  }
}

/// Batches delivered to an observer, collected under a lock.
final class Collected: @unchecked Sendable {
  private let lock = NSLock()
  private var collected: [ChangeBatch] = []

  func add(_ batch: ChangeBatch) { lock.withLock { collected.append(batch) } }
  var batches: [ChangeBatch] { lock.withLock { collected } }

  /// Waits up to 20 seconds for `condition` to hold of the batches.
  func waitFor(_ condition: ([ChangeBatch]) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline {
      if condition(batches) { return true }
      usleep(2_000)
    }
    return condition(batches)
  }
}

/// Starts `binary` with `arguments` in another process; returns its pid.
func startProcess(_ binary: String, _ arguments: [String]) throws -> pid_t {
  var argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
  defer { for argument in argv { free(argument) } }
  var pid = pid_t()
  let code = posix_spawn(&pid, binary, nil, nil, &argv, environ)
  guard code == 0 else { throw StoreError(.storage, "cannot start \(binary) (error \(code))") }
  return pid
}

/// Waits for `pid` to exit; returns its exit status (or 128 + the signal that ended it).
func waitForProcess(_ pid: pid_t) throws -> Int32 {
  var status: Int32 = 0
  while waitpid(pid, &status, 0) < 0 {
    guard errno == EINTR else { throw StoreError(.storage, "cannot wait for process \(pid) (errno \(errno))") }
  }
  let signal = status & 0x7f
  return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}

extension ChangeFeedTests {
  /// A damaged entry of the feed tells the observers whose range holds it to read everything
  /// again, and holds back no other observer.
  @Test func aDamagedEntryStopsNoObserver() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    _ = try store.write { try $0.collection("c").insert(["_id": 1]) }
    try store.write { transaction in
      let changesDB = try #require(try transaction.database(Transaction.changesName, create: false))
      _ = try transaction.lmdb.put(changesDB, Transaction.feedKey(1), [1, 2, 3])
    }
    #expect(throws: StoreError.self) { _ = try changes(store) }
    let behind = Collected()
    let current = Collected()
    let first = try store.observeChanges(after: 0) { behind.add($0) }
    defer { first.cancel() }
    let second = try store.observeChanges { current.add($0) }
    defer { second.cancel() }
    _ = try store.write { try $0.collection("c").insert(["_id": 2]) }
    #expect(current.waitFor { $0.last?.latest == 2 })
    #expect(current.batches.flatMap(\.commits).map(\.sequence) == [2])
    #expect(behind.waitFor { $0.last?.latest == 2 })
    #expect(behind.batches.first?.isComplete == false)
  }
}

extension ChangeFeedTests {
  /// A read of the feed that fails (no reader slot free) is tried again at the next wake, not
  /// only after the next commit.
  @Test func aFailedReadOfTheFeedIsTriedAgain() throws {
    let temporary = try TemporaryStore(options: StoreOptions(maximumReaders: 4))
    let store = temporary.store
    _ = try store.write { try $0.collection("c").insert(["_id": 1]) }
    let seen = Collected()
    let observation = try store.observeChanges { seen.add($0) }
    defer { observation.cancel() }
    usleep(50_000)
    // Every reader slot taken: the watcher's read after the commit fails.
    var readers: [Transaction] = []
    while let reader = try? store.beginRead() { readers.append(reader) }
    _ = try store.write { try $0.collection("c").insert(["_id": 2]) }
    usleep(50_000)
    #expect(seen.batches.isEmpty)
    for reader in readers { try reader.commit() }
    readers = []
    #expect(seen.waitFor { $0.last?.latest == 2 })
  }
}

extension ChangeFeedTests {
  /// A commit whose record would be larger than a document can be (here 1,000 documents
  /// modified in 20 fields with long names) resets its collections instead: the feed stays
  /// readable.
  @Test func aCommitTooLargeToListResetsItsCollections() throws {
    let temporary = try TemporaryStore(options: StoreOptions(durability: .none))
    let store = temporary.store
    let names = (0..<20).map { String(repeating: "f", count: 1_000) + "\($0)" }
    var fields = DocumentBuilder()
    for name in names { fields.append(name, 1) }
    let values = fields.document
    try store.write { transaction in
      let big = transaction.collection("big")
      for id in 0..<1_000 {
        var document = DocumentBuilder()
        document.append("_id", id)
        for element in values { document.append(element.key, element.value) }
        try big.insert(document.document)
      }
    }
    try store.write { transaction in
      _ = try transaction.collection("big").updateMany([:], ["$inc": .document(values)])
      try transaction.collection("small").insert(["_id": 1])
    }
    let batch = try changes(store, after: 1)
    #expect(batch.isComplete && batch.latest == 2)
    #expect(batch.commits.first?.resetCollections.contains("big") == true)
  }
}

extension ChangeFeedTests {
  /// Cancelling an observation whose handler holds the last reference to another observation
  /// (which its release cancels) does not deadlock.
  @Test func cancellingAnObservationThatHoldsAnotherReturns() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let outer = try { () throws -> ChangeObservation in
      let inner = try store.observeChanges { _ in }
      return try store.observeChanges { _ in withExtendedLifetime(inner) {} }
    }()
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      outer.cancel()
      done.signal()
    }
    #expect(done.wait(timeout: .now() + 5) == .success, "cancel deadlocked")
  }
}

extension ChangeFeedTests {
  /// A document deleted, inserted again and then updated in one commit: what changed since the
  /// commit began is not known, so no field is named (`a` changed as well as `n`).
  @Test func aDocumentDeletedInsertedAndUpdatedNamesNoFields() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    _ = try store.write { try $0.collection("c").insert(["_id": 1, "a": 1, "n": 1]) }
    try store.write { transaction in
      let c = transaction.collection("c")
      try c.deleteDocument(forID: 1)
      try c.insert(["_id": 1, "a": 2, "n": 1])
      _ = try c.updateOne(["_id": 1], ["$set": ["n": 2]])
    }
    let batch = try changes(store, after: 1)
    #expect(batch.commits.first?.changes == [DocumentChange(collection: "c", id: 1, kind: .modified)])
  }
}

extension ChangeFeedTests {
  /// A commit that inserts a document and deletes it again changed no document: it has no
  /// sequence number, and wakes no observer.
  @Test func aCommitWhoseChangesCancelOutRecordsNothing() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    _ = try store.write { try $0.collection("c").insert(["_id": 1]) }
    try store.write { transaction in
      try transaction.collection("c").insert(["_id": 2])
      try transaction.collection("c").deleteDocument(forID: 2)
    }
    #expect(try changes(store).latest == 1)
  }

  /// A document changed twice in one commit is listed with its net change: the fields that
  /// differ from the document the commit started from, and not at all when they went back.
  @Test func aDocumentChangedTwiceInACommitListsItsNetChange() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    _ = try store.write { transaction in
      try transaction.collection("c").insert(["_id": 1, "a": 1, "b": 1, "c": ["d": 1]])
      try transaction.collection("c").insert(["_id": 2, "a": 1, "b": 1])
    }
    try store.write { transaction in
      let c = transaction.collection("c")
      _ = try c.updateOne(["_id": 1], ["$set": ["a": 2, "c.d": 2]])
      _ = try c.updateOne(["_id": 1], ["$set": ["a": 1, "b": 3]])
      // Back to what it was: no change.
      _ = try c.updateOne(["_id": 2], ["$set": ["a": 9]])
      _ = try c.updateOne(["_id": 2], ["$set": ["a": 1]])
    }
    #expect(
      try changes(store, after: 1).commits.first?.changes == [
        DocumentChange(collection: "c", id: 1, kind: .modified, fields: ["b", "c.d"])
      ])
    // A commit whose only change went back to where it began records nothing.
    try store.write { transaction in
      _ = try transaction.collection("c").updateOne(["_id": 2], ["$set": ["b": 7]])
      _ = try transaction.collection("c").updateOne(["_id": 2], ["$set": ["b": 1]])
    }
    #expect(try changes(store).latest == 2)
  }
}

extension ChangeFeedTests {
  /// A store released while observed closes when its last observation is cancelled: once
  /// `cancel()` returns, the file can be opened again.
  @Test func aReleasedStoreClosesWhenItsObservationIsCancelled() throws {
    let directory = TemporaryDirectory()
    for _ in 0..<20 {
      var store: Store? = try Store(path: directory.store)
      let observation = try store!.observeChanges { _ in }
      _ = try store!.write { try $0.collection("c").insert([:]) }
      store = nil
      observation.cancel()
      _ = try Store(path: directory.store)
    }
  }
}

extension ChangeFeedTests {
  /// A sequence past the feed's last (remembered from before a power loss took commits back)
  /// reads as incomplete, and an observer from it is told to read everything again instead of
  /// missing the commits that take those numbers.
  @Test func aSequencePastTheFeedsLastIsIncomplete() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    for id in 1...3 { _ = try store.write { try $0.collection("c").insert(["_id": .int32(Int32(id))]) } }
    let ahead = try changes(store, after: 10)
    #expect(!ahead.isComplete && ahead.latest == 3 && ahead.commits.isEmpty)
    #expect(try changes(store, after: 3).isComplete)
    let seen = Collected()
    let observation = try store.observeChanges(after: 10) { seen.add($0) }
    defer { observation.cancel() }
    _ = try store.write { try $0.collection("c").insert(["_id": 4]) }
    #expect(seen.waitFor { $0.last?.latest == 4 })
    #expect(seen.batches.first?.isComplete == false)
  }
}
