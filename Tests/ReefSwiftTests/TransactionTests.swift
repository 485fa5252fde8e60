import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import ReefTestSupport
import Testing

struct DeliberateFailure: Error {}

/// The path of a new file holding one tenant, closed (a file is opened read-only and
/// read-write on one thread only one way at a time, as in Realm).
func writtenReef() throws -> String {
  let (reef, path) = try openReef()
  try reef.write { reef.add(makeTenant(1)) }
  return path
}

@Suite struct TransactionTests {
  @Test func beginWriteAndCommitWriteKeepTheChanges() throws {
    let (reef, _) = try openReef()
    #expect(!reef.isInWriteTransaction)
    reef.beginWrite()
    #expect(reef.isInWriteTransaction)
    reef.add(makeTenant(1, "one"))
    try reef.commitWrite()
    #expect(!reef.isInWriteTransaction)
    #expect(reef.objects(Tenant.self).count == 1)
    #expect(try reef.store.read { try $0.collection("Tenant").count() } == 1)
  }

  @Test func cancelWriteKeepsNothingAndInvalidatesAddedObjects() throws {
    let (reef, _) = try openReef()
    let kept = makeTenant(1, "kept")
    try reef.write { reef.add(kept) }
    let added = makeTenant(2, "added", home: makeBuilding("Paris"))
    reef.beginWrite()
    reef.add(added)
    kept.name = "changed"
    #expect(reef.objects(Tenant.self).count == 2, "the write transaction sees its own changes")
    let home = try #require(added.home)
    reef.cancelWrite()
    #expect(!reef.isInWriteTransaction)
    #expect(added.isInvalidated, "an object added in a cancelled transaction is invalidated")
    #expect(home.isInvalidated)
    #expect(kept.name == "kept")
    #expect(reef.objects(Tenant.self).count == 1)
  }

  @Test func tryBeginWriteInAWriteTransactionThrowsRealmsMessage() throws {
    let (reef, _) = try openReef()
    reef.beginWrite()
    let error = reefError { try reef.tryBeginWrite() }
    #expect(error?.kind == .transaction)
    #expect(error?.message == "The Reef is already in a write transaction")
    #expect(reef.isInWriteTransaction, "the open transaction is left as it was")
    reef.add(makeTenant(1))
    try reef.commitWrite()
    #expect(reef.objects(Tenant.self).count == 1)
  }

  @Test func beginWriteInAWriteTransactionStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        reef.beginWrite()
        reef.beginWrite()
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("The Reef is already in a write transaction"), "\(stderr)")
  }

  @Test func writeInsideAWriteThrowsRatherThanStopping() throws {
    let (reef, _) = try openReef()
    try reef.write {
      reef.add(makeTenant(1))
      let error = reefError { try reef.write { reef.add(makeTenant(2)) } }
      #expect(error?.message == "The Reef is already in a write transaction")
    }
    #expect(reef.objects(Tenant.self).map(\.id) == [1], "the outer write commits; the inner one added nothing")
  }

  @Test func beginWriteOnAReadOnlyReefStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let path = try writtenReef()
        var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: path))
        configuration.readOnly = true
        let readOnly = try Reef(configuration: configuration)
        guard readOnly.objects(Tenant.self).count == 1 else { return }
        readOnly.beginWrite()
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Can't perform transactions on read-only Reefs."), "\(stderr)")
  }

  @Test func tryBeginWriteOnAReadOnlyReefThrows() throws {
    let path = try writtenReef()
    var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: path))
    configuration.readOnly = true
    let readOnly = try Reef(configuration: configuration)
    let error = reefError { try readOnly.tryBeginWrite() }
    #expect(error?.kind == .transaction)
    #expect(error?.message.hasPrefix("Can't perform transactions on read-only Reefs.") == true)
    #expect(error?.storeError?.kind == .readOnly)
    #expect(!readOnly.isInWriteTransaction)
  }

  @Test func commitWriteWithoutBeginWriteThrows() throws {
    let (reef, _) = try openReef()
    do {
      try reef.commitWrite()
      Issue.record("commitWrite did not throw")
    } catch let error as ReefError {
      #expect(error.kind == .transaction)
    }
  }

  @Test func writeReturnsTheBlocksValue() throws {
    let (reef, _) = try openReef()
    let name = try reef.write { () -> String in
      reef.add(makeTenant(1, "returned"))
      return "returned"
    }
    #expect(name == "returned")
    let tenant = try reef.write { reef.create(Tenant.self, value: ["id": 2, "name": "made"]) }
    #expect(tenant.name == "made" && tenant.reef != nil)
  }

  @Test func aThrowingBlockRollsBackEverything() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, "before")
    try reef.write { reef.add(tenant) }
    let added = makeTenant(2)
    #expect(throws: DeliberateFailure.self) {
      try reef.write {
        tenant.name = "during"
        reef.add(added)
        throw DeliberateFailure()
      }
    }
    #expect(!reef.isInWriteTransaction)
    #expect(tenant.name == "before")
    #expect(added.isInvalidated)
    #expect(reef.objects(Tenant.self).count == 1)
  }

  @Test func aRuleBrokenByCommitWriteRollsBack() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makeTenant(1)) }
    reef.beginWrite()
    reef.add(makeTenant(2))
    reef.add(makeTenant(1))
    #expect(throws: ReefError.self) { try reef.commitWrite() }
    #expect(!reef.isInWriteTransaction)
    #expect(reef.objects(Tenant.self).count == 1)
  }

  @Test func theReefIsUsableAfterAFailedWrite() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makeTenant(1)) }
    _ = try? reef.write { reef.add(makeTenant(1)) }
    try reef.write { reef.add(makeTenant(2)) }
    #expect(reef.objects(Tenant.self).count == 2)
  }

  @Test func refreshShowsAnotherReefsCommitFromAnotherThread() throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makeTenant(1, "mine")) }
    let before = reef.objects(Tenant.self)
    #expect(before.count == 1)
    let tenant = try #require(reef.object(ofType: Tenant.self, forPrimaryKey: 1))
    let failure = onAnotherThread { () throws in
      let other = try Reef(fileURL: URL(fileURLWithPath: path))
      try other.write {
        other.add(makeTenant(2, "theirs"))
        other.object(ofType: Tenant.self, forPrimaryKey: 1)?.name = "renamed by them"
      }
    }
    #expect(failure == nil, "the other thread's write failed: \(failure.map { "\($0)" } ?? "")")
    #expect(before.count == 1, "a Reef reads its snapshot until it refreshes")
    #expect(tenant.name == "mine")
    #expect(reef.refresh())
    #expect(before.count == 2, "results are live")
    #expect(tenant.name == "renamed by them", "objects are live")
    #expect(reef.object(ofType: Tenant.self, forPrimaryKey: 2)?.name == "theirs")
  }

  @Test func aWriteSeesTheLatestStateWithoutRefresh() throws {
    let (reef, path) = try openReef()
    _ = reef.objects(Tenant.self).count
    let failure = onAnotherThread { () throws in
      let other = try Reef(fileURL: URL(fileURLWithPath: path))
      try other.write { other.add(makeTenant(1)) }
    }
    #expect(failure == nil)
    #expect(throws: ReefError.self, "a write transaction begins at the latest state: the key is taken") {
      try reef.write { reef.add(makeTenant(1)) }
    }
  }

  @Test func refreshInsideAWriteDoesNothing() throws {
    let (reef, _) = try openReef()
    try reef.write { #expect(!reef.refresh()) }
  }

  @Test func durabilityOfTheConfigurationIsUsed() throws {
    let directory = makeTemporaryDirectoryForReef()
    var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/fast.reef"))
    configuration.durability = .normal
    let reef = try Reef(configuration: configuration)
    try reef.write { reef.add(makeTenant(1)) }
    #expect(reef.configuration.durability == .normal)
    #expect(reef.objects(Tenant.self).count == 1)
  }
}

/// A fresh temporary directory.
func makeTemporaryDirectoryForReef() -> String {
  makeTemporaryDirectory("reef-swift", removedAtExit: true)
}

@Suite struct ReadOnlyTests {
  @Test func aReadOnlyReefReadsAndRefusesWrites() throws {
    // As in Realm, a file is opened read-only once no Reef of this process has it open
    // read-write (see OneReefPerThreadTests for the refusal).
    let path = try {
      let (reef, path) = try openReef()
      try reef.write { reef.add(makeTenant(1, "kept")) }
      return path
    }()
    let readOnly = try Reef(configuration: Reef.Configuration(fileURL: URL(fileURLWithPath: path), readOnly: true))
    #expect(readOnly.object(ofType: Tenant.self, forPrimaryKey: 1)?.name == "kept")
    do {
      try readOnly.write { readOnly.add(makeTenant(2)) }
      Issue.record("a read-only Reef wrote")
    } catch let error as ReefError {
      #expect(error.kind == .transaction)
    }
    #expect(readOnly.objects(Tenant.self).count == 1)
  }
}
