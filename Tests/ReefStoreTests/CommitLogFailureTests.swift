import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

/// Failure modes of the commit log (`Specs/store/log.md`), acted out with
/// ``PowerLoss`` on copies of a store's files.
@Suite struct CommitLogFailureTests {
  /// A write transaction that changes nothing in LMDB leaves no record, even when it opens a
  /// database creating it that exists already (a duplicate insert, caught, as imports that skip
  /// such documents do, by a process whose table does not hold the collection's handle yet).
  ///
  /// Such a record would not be a transaction of LMDB's: LMDB's transaction number does not move,
  /// the next commit takes the same number and writes its record over it. Were that next record
  /// (a `.normal` commit) lost with the power while the one after it reached the disk, the log
  /// would hold the empty record, then a record two transactions on: applying them again, the
  /// first opener found LMDB one transaction behind the second and refused to open the store.
  @Test func aTransactionThatChangesNothingLeavesNoRecord() throws {
    let directory = TemporaryDirectory()
    let path = directory.store
    do {
      let store = try Store(path: path)
      _ = try store.collection("a").insert(["_id": 1])
    }
    // Another opening: the handle of the collection's documents is not in its table yet.
    let store = try Store(path: path)
    let checkpointImage = try #require(readFile(path))
    _ = try store.write { transaction in
      #expect(throws: StoreError.self) { try transaction.collection("a").insert(["_id": 1]) }
    }
    let afterNothing = try LogImage(path: path + "-log")
    #expect(afterNothing.records().isEmpty)
    try store.write(durability: .normal) { transaction in _ = try transaction.collection("a").insert(["_id": 2]) }
    try store.write(durability: .normal) { transaction in _ = try transaction.collection("a").insert(["_id": 3]) }
    #expect(try LogImage(path: path + "-log").records().count == 2)

    // The power loss: the first `.normal` record never reached the disk (its block holds what it
    // held before), the second did.
    let copy = try PowerLoss.copyStore(path, into: directory.path + "/copy")
    let first = CommitLog.recordsStart
    let before = Array(afterNothing.bytes[first..<first + CommitLog.blockSize])
    try PowerLoss.overwrite(copy + "-log", at: first, with: before)
    try PowerLoss.damage(storeAt: copy, since: checkpointImage)
    try PowerLoss.rewriteHeader(copy)
    let reopened = try Store(path: copy)
    let ids = try reopened.collection("a").find([:]).toArray().map { $0["_id"] }
    #expect(ids == [.int32(1)])
  }
}
