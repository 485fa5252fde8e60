import Foundation
import ReefBSON
import Testing

@testable import ReefStore

/// A long-lived snapshot (a `Reef`'s) reads collections whose databases other transactions of
/// the process open meanwhile.
@Suite struct SnapshotHandleTests {
  /// The collection exists (empty) when the snapshot begins; another thread fills it. The
  /// snapshot reads it as it was, empty, instead of failing with LMDB's EINVAL ("cursor:
  /// Invalid argument"), which it did when the documents' database was made at the first insert.
  @Test func aSnapshotReadsACollectionCreatedBeforeItAndFilledAfter() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { try $0.collection("c").createIndex(["x": 1]) }
    let snapshot = try store.beginRead()
    defer { snapshot.end() }
    let filled = DispatchSemaphore(value: 0)
    let failure = LockedList()
    Thread {
      do {
        try store.write { transaction in
          for id in 0..<10 { _ = try transaction.collection("c").insert(["_id": .int32(Int32(id)), "x": 1]) }
        }
      } catch {
        failure.append("\(error)")
      }
      filled.signal()
    }.start()
    filled.wait()
    #expect(failure.items.isEmpty, "\(failure.items)")
    #expect(try snapshot.collection("c").count() == 0)
    #expect(try snapshot.collection("c").find(["x": 1]).toArray().isEmpty)
    #expect(try store.read { try $0.collection("c").count() } == 10)
  }

  /// No collection exists when the snapshot begins; another thread makes the first (and with
  /// it the catalog). For the snapshot the collection is missing, as it is from its version,
  /// instead of LMDB's EINVAL ("read: Invalid argument") from the catalog's newer handle.
  @Test func aSnapshotTakenBeforeTheFirstCollectionReadsItAsMissing() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let snapshot = try store.beginRead()
    defer { snapshot.end() }
    let made = DispatchSemaphore(value: 0)
    let failure = LockedList()
    Thread {
      do {
        try store.write { _ = try $0.collection("first").insert(["_id": 1, "x": 1]) }
      } catch {
        failure.append("\(error)")
      }
      made.signal()
    }.start()
    made.wait()
    #expect(failure.items.isEmpty, "\(failure.items)")
    #expect(try snapshot.collection("first").count() == 0)
    #expect(try snapshot.collection("first").find(["x": 1]).toArray().isEmpty)
    #expect(try store.read { try $0.collection("first").count() } == 1)
  }
}

/// Strings appended from several threads.
final class LockedList: @unchecked Sendable {
  private let lock = NSLock()
  private var list: [String] = []
  func append(_ item: String) { lock.withLock { list.append(item) } }
  var items: [String] { lock.withLock { list } }
}
