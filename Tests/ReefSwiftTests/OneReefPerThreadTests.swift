import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// An actor that opens the same file twice, to compare what it gets.
actor TwoOpens {
  func sameInstance(_ path: String) async throws -> Bool {
    let first = try await Reef(configuration: configuration(path), actor: self)
    let second = try await Reef(configuration: configuration(path), actor: self)
    try first.write { first.add(makePerson(1, "Ann")) }
    return first === second && second.objects(Person.self).count == 1
  }
}

/// One `Reef` per thread (queue, actor) and file while it lives, as Realm's cache gives.
@Suite struct OneReefPerThreadTests {
  @Test func openingTheSameFileTwiceOnAThreadGivesTheSameReef() throws {
    let (reef, path) = try openReef()
    let again = try Reef(configuration: configuration(path))
    #expect(again === reef)
    #expect(try Reef(fileURL: URL(fileURLWithPath: path)) === reef)
    let other = try openReef("other").0
    #expect(other !== reef, "another file has its own Reef")
  }

  @Test func codeThatOpensTheFileAgainInsideAWriteIsInThatWriteAndSeesItsChanges() throws {
    let (reef, path) = try openReef()
    try reef.write {
      reef.add(makePerson(1, "Ann"))
      let inner = try Reef(configuration: configuration(path))
      #expect(inner.isInWriteTransaction)
      #expect(inner.objects(Person.self).map(\.name) == ["Ann"])
      inner.add(makePerson(2, "Bob"))
    }
    #expect(reef.objects(Person.self).count == 2)
    // A write begun through one and committed through the other is one transaction.
    try Reef(configuration: configuration(path)).beginWrite()
    reef.add(makePerson(3, "Cy"))
    try Reef(configuration: configuration(path)).commitWrite()
    #expect(!reef.isInWriteTransaction)
    #expect(reef.objects(Person.self).count == 3)
  }

  @Test func anotherThreadHasItsOwnReef() throws {
    let (reef, path) = try openReef()
    let mine = ObjectIdentifier(reef)
    nonisolated(unsafe) var theirs: ObjectIdentifier?
    let error = onAnotherThread {
      let first = try Reef(configuration: configuration(path))
      let second = try Reef(configuration: configuration(path))
      #expect(first === second)
      theirs = ObjectIdentifier(first)
    }
    #expect(error == nil)
    #expect(theirs != nil && theirs != mine)
  }

  @Test func aReefReleasedIsOpenedAnew() throws {
    let (_, path) = try openReef()
    weak var first: Reef?
    do {
      let opened = try Reef(configuration: configuration(path))
      first = opened
      try opened.write { opened.add(makePerson(1, "Ann")) }
    }
    #expect(first == nil, "the table of open Reefs does not keep one alive")
    let reopened = try Reef(configuration: configuration(path))
    #expect(reopened.objects(Person.self).count == 1)
  }

  @Test func aWriteBegunOnAReefNobodyHoldsLastsUntilItIsCommitted() throws {
    let (_, path) = try openReef()
    weak var writing: Reef?
    do {
      // Realm's test style: each statement opens the thread's Reef and lets go of it.
      try Reef(configuration: configuration(path)).beginWrite()
      do {
        let opened = try Reef(configuration: configuration(path))
        writing = opened
      }
      try Reef(configuration: configuration(path)).add(makePerson(1, "Ann"))
      #expect(try Reef(configuration: configuration(path)).isInWriteTransaction)
      try Reef(configuration: configuration(path)).commitWrite()
    }
    #expect(writing == nil, "once the write ends, the Reef is let go of again")
    #expect(try Reef(configuration: configuration(path)).objects(Person.self).map(\.name) == ["Ann"])
  }

  @Test func aThreadThatEndsInsideAWriteRollsItBackAndFreesTheLock() throws {
    let (reef, path) = try openReef()
    let error = onAnotherThread {
      try Reef(configuration: configuration(path)).beginWrite()
      try Reef(configuration: configuration(path)).add(makePerson(1, "Ann"))
    }
    #expect(error == nil)
    // The thread's end rolled its write back: this write does not wait forever for its lock.
    try reef.write { reef.add(makePerson(2, "Bob")) }
    #expect(reef.objects(Person.self).map(\.name) == ["Bob"])
  }

  @Test func anInMemoryReefIsTheSameForItsIdentifierOnAThread() throws {
    let identifier = "same-\(UUID().uuidString)"
    let first = try Reef(configuration: Reef.Configuration(inMemoryIdentifier: identifier))
    try first.write {
      first.add(makePerson(1, "Ann"))
      let second = try Reef(configuration: Reef.Configuration(inMemoryIdentifier: identifier))
      #expect(second === first)
      second.add(makePerson(2, "Bob"))
      #expect(first.objects(Person.self).count == 2)
    }
    let other = try Reef(configuration: Reef.Configuration(inMemoryIdentifier: identifier + "-other"))
    #expect(other !== first)
    #expect(other.objects(Person.self).isEmpty)
  }

  @Test func aQueueHasOneReefPerFileAndAnotherQueueItsOwn() throws {
    let (_, path) = try openReef()
    let queue = DispatchQueue(label: "reef.cache.one")
    let otherQueue = DispatchQueue(label: "reef.cache.two")
    let (same, first) = try queue.sync { () throws -> (Bool, Smuggled<Reef>) in
      let first = try Reef(configuration: configuration(path), queue: queue)
      let second = try Reef(configuration: configuration(path), queue: queue)
      return (first === second, Smuggled(value: first))
    }
    #expect(same)
    let different = try otherQueue.sync { () throws -> Bool in
      try Reef(configuration: configuration(path), queue: otherQueue) !== first.value
    }
    #expect(different)
    // The thread's own Reef is not the queue's (`sync` ran the blocks on this thread).
    #expect(try Reef(configuration: configuration(path)) !== first.value)
  }

  @Test func anActorHasOneReefPerFile() async throws {
    let (_, path) = try openReef()
    #expect(try await TwoOpens().sameInstance(path))
  }

  @Test func aFrozenReefIsNotTheOneOpenedAgainAndThawGivesTheThreadsReef() throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let frozen = reef.freeze()
    #expect(try Reef(configuration: configuration(path)) === reef)
    #expect(frozen.thaw() === reef)
  }

  @Test func freezingTheSameStateOnTwoThreadsGivesOneFrozenReef() throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    _ = reef.objects(Person.self).count
    let frozen = reef.freeze()
    let carried = Smuggled(value: frozen)
    nonisolated(unsafe) var same = false
    let error = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      _ = other.objects(Person.self).count
      same = other.freeze() === carried.value
    }
    #expect(error == nil)
    #expect(same, "Realm caches frozen Realms by file and version, not by thread")
    try reef.write { reef.add(makePerson(2, "Bob")) }
    let later = reef.freeze()
    #expect(later !== frozen)
    #expect(later.objects(Person.self).count == 2 && frozen.objects(Person.self).count == 1)
  }

  @Test func openingAgainWithAnotherSchemaVersionIsRefusedOnThisThreadAndOnAnother() throws {
    let (reef, path) = try openReef()
    var newer = configuration(path)
    newer.schemaVersion = 1
    #expect { try Reef(configuration: newer) } throws: { error in
      let error = error as? ReefError
      return error?.kind == .mismatchedConfig
        && error?.message == "Reef at path '\(path)' already opened with different schema version (0, not 1)."
    }
    let error = onAnotherThread { [newer] in _ = try Reef(configuration: newer) }
    #expect((error as? ReefError)?.kind == .mismatchedConfig, "\(String(describing: error))")
    var deleting = configuration(path)
    deleting.deleteReefIfMigrationNeeded = true
    let deletingError = onAnotherThread { [deleting] in _ = try Reef(configuration: deleting) }
    #expect((deletingError as? ReefError)?.message.contains("a different schema mode") == true)
    _ = reef
  }

  @Test func openingReadOnlyWhileOpenReadWriteOnAnotherThreadIsRefused() throws {
    let (reef, path) = try openReef()
    let error = onAnotherThread {
      _ = try Reef(configuration: Reef.Configuration(fileURL: URL(fileURLWithPath: path), readOnly: true))
    }
    #expect((error as? ReefError)?.kind == .mismatchedConfig)
    #expect((error as? ReefError)?.message.contains("already opened with different read permissions") == true)
    _ = reef
  }

  @Test func openingReadOnlyWhileOpenReadWriteOnThisThreadStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, path) = try openReef()
        _ = try Reef(configuration: Reef.Configuration(fileURL: URL(fileURLWithPath: path), readOnly: true))
        _ = reef
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("already opened with different read permissions"), "\(stderr)")
  }

  @Test func theObjectTypesOfASecondOpenAreCheckedAndTaken() throws {
    let (reef, path) = try openReef()
    var withTypes = configuration(path)
    withTypes.objectTypes = [Person.self, Dog.self, DogClub.self, Address.self]
    let again = try Reef(configuration: withTypes)
    #expect(again === reef)
    #expect(reef.schema["DogClub"] != nil, "the types given were taken")
  }
}
