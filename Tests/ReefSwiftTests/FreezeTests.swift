import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import ReefTestSupport
import Testing

/// Frozen `Reef`s, objects, results and lists (immutable snapshots readable from any thread),
/// `thaw()`, `ThreadSafeReference` and `maximumNumberOfActiveVersions`.
@Suite struct FreezeTests {

  /// A person as one line: name, city, dogs.
  func describe(_ person: Person) -> String {
    "\(person.name) \(person.address?.city ?? "-") \(person.dogs.map(\.name))"
  }

  @Test func aFrozenReefKeepsItsSnapshotAfterLaterWrites() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let frozen = reef.freeze()
    #expect(frozen.isFrozen)
    #expect(!reef.isFrozen)
    #expect(frozen.freeze() === frozen, "freezing a frozen Reef returns it")
    #expect(reef.freeze() === frozen, "the same snapshot gives the same frozen Reef")
    try reef.write {
      reef.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Bea"
      reef.add(makePerson(2, "Cy"))
    }
    #expect(frozen.objects(Person.self).map(\.name) == ["Ann"])
    #expect(frozen.object(ofType: Person.self, forPrimaryKey: 2) == nil)
    #expect(reef.objects(Person.self).map(\.name) == ["Bea", "Cy"])
    #expect(reef.freeze() !== frozen, "a new snapshot gives a new frozen Reef")
    #expect(frozen.refresh() == false)
    let thawed = frozen.thaw()
    #expect(!thawed.isFrozen)
    #expect(thawed.objects(Person.self).map(\.name) == ["Bea", "Cy"])
    #expect(reef.thaw() === reef)
  }

  @Test func frozenObjectsEmbeddedObjectsListsAndResultsReadTheirSnapshot() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann", city: "Oslo", dogs: ["Rex", "Fido"])
    try reef.write { reef.add(ann) }
    let frozenAnn = ann.freeze()
    let frozenDogs = ann.dogs.freeze()
    let frozenSorted = reef.objects(Dog.self).sorted(byKeyPath: "name").freeze()
    #expect(frozenAnn.isFrozen && frozenAnn.address!.isFrozen && frozenAnn.dogs.isFrozen)
    #expect(frozenAnn.dogs[0].isFrozen && frozenDogs.isFrozen && frozenSorted.isFrozen)
    #expect(!ann.isFrozen && !ann.dogs.isFrozen && !reef.objects(Dog.self).isFrozen)
    #expect(frozenAnn.freeze() === frozenAnn)
    #expect(frozenDogs.freeze() === frozenDogs)

    try reef.write {
      ann.name = "Bea"
      ann.address!.city = "Rome"
      ann.dogs[0].name = "Max"
      let zed = Dog()
      zed.name = "Zed"
      ann.dogs.append(zed)
    }
    #expect(describe(frozenAnn) == #"Ann Oslo ["Rex", "Fido"]"#)
    #expect(frozenDogs.map(\.name) == ["Rex", "Fido"])
    #expect(frozenSorted.map(\.name) == ["Fido", "Rex"])
    #expect(describe(ann) == #"Bea Rome ["Max", "Fido", "Zed"]"#)

    let thawedAnn = try #require(frozenAnn.thaw())
    #expect(!thawedAnn.isFrozen)
    #expect(describe(thawedAnn) == #"Bea Rome ["Max", "Fido", "Zed"]"#)
    #expect(frozenAnn.address!.thaw()?.city == "Rome", "an embedded object thaws at its place")
    #expect(frozenDogs.thaw()?.map(\.name) == ["Max", "Fido", "Zed"])
    #expect(frozenSorted.thaw()?.map(\.name) == ["Fido", "Max", "Zed"])
    #expect(ann.thaw() === ann, "a live object thaws to itself")
  }

  @Test func frozenObjectsAreReadFromSeveralThreadsAtOnce() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for id in 1...30 { reef.add(makePerson(id, "P\(id)", city: "C\(id % 4)", dogs: ["D\(id)a", "D\(id)b"])) }
    }
    let club = DogClub()
    club.name = "Club"
    for city in ["Oslo", "Rome", "Lima"] {
      let address = Address()
      address.city = city
      club.regionalOfficeAddresses.append(address)
    }
    try reef.write { reef.add(club) }
    let frozenClub = club.freeze()
    let results = reef.objects(Person.self).filter("id > 10").sorted(byKeyPath: "id", ascending: false).freeze()
    let first = reef.object(ofType: Person.self, forPrimaryKey: 1)!.freeze()
    // A later write: the frozen snapshot does not see it.
    try reef.write {
      reef.delete(reef.objects(Person.self))
      club.regionalOfficeAddresses.removeAll()
    }
    let expected =
      (11...30).reversed().map { "P\($0) C\($0 % 4) [\"D\($0)a\", \"D\($0)b\"]" }.joined(separator: "|")
      + "/P1 C1 [\"D1a\", \"D1b\"]/20/Oslo Rome Lima"
    let shared = Smuggled(value: (results, first, frozenClub))
    final class Seen: @unchecked Sendable {
      let lock = NSLock()
      var summaries: [String] = []
    }
    let seen = Seen()
    DispatchQueue.concurrentPerform(iterations: 4) { _ in
      let (results, first, club) = shared.value
      for _ in 0..<10 {
        let summary =
          results.map(describe).joined(separator: "|") + "/" + describe(first) + "/\(results.count)/"
          + club.regionalOfficeAddresses.map { $0.city ?? "-" }.joined(separator: " ")
        seen.lock.withLock { seen.summaries.append(summary) }
      }
    }
    #expect(seen.summaries.count == 40)
    #expect(Set(seen.summaries) == [expected])
  }

  @Test func frozenLinkingObjectsReadTheirSnapshotAndThaw() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann")
    let club = DogClub()
    club.name = "Runners"
    club.members.append(ann)
    try reef.write { reef.add(club) }
    let frozen = ann.clubs.freeze()
    #expect(frozen.isFrozen && frozen[0].isFrozen)
    #expect(!ann.clubs.isFrozen)
    #expect(frozen.freeze() === frozen, "frozen linking objects return themselves")
    let walkers = DogClub()
    walkers.name = "Walkers"
    walkers.members.append(ann)
    try reef.write {
      club.name = "Sprinters"
      reef.add(walkers)
    }
    #expect(frozen.map(\.name) == ["Runners"])
    #expect(ann.clubs.map(\.name) == ["Sprinters", "Walkers"])
    let thawed = try #require(frozen.thaw())
    #expect(!thawed.isFrozen)
    #expect(thawed.map(\.name) == ["Sprinters", "Walkers"])
    #expect(ann.clubs.thaw() === ann.clubs, "live linking objects thaw to themselves")
    try reef.write { reef.delete(ann) }
    #expect(frozen.thaw() == nil, "the object was deleted since")
    #expect(throws: ReefError.self) { try LinkingObjects(fromType: DogClub.self, property: "members").tryFreeze() }
  }

  @Test func thawingADeletedObjectGivesNil() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann", city: "Oslo", dogs: ["Rex"])
    try reef.write { reef.add(ann) }
    let frozenAnn = ann.freeze()
    let frozenDogs = ann.dogs.freeze()
    try reef.write { reef.delete(ann) }
    #expect(frozenAnn.name == "Ann", "the frozen object still reads its snapshot")
    #expect(frozenAnn.thaw() == nil)
    #expect(frozenAnn.address!.thaw() == nil)
    #expect(frozenDogs.thaw() == nil)
    #expect(reefError { _ = try ann.tryFreeze() }?.kind == .invalidated)
  }

  @Test func writesToAFrozenReefAreRefused() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let frozen = reef.freeze()
    let error = reefError { try frozen.write { frozen.add(makePerson(2, "Bob")) } }
    #expect(error?.kind == .frozen)
    #expect(error?.message.hasPrefix("Can't perform transactions on a frozen Reef") == true)
    #expect(reefError { try frozen.tryBeginWrite() }?.kind == .frozen)
    #expect(!frozen.isInWriteTransaction)
    #expect(reef.objects(Person.self).count == 1)
  }

  @Test func beginWriteOnAFrozenReefStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        try reef.write { reef.add(makePerson(1, "Ann")) }
        reef.freeze().beginWrite()
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Can't perform transactions on a frozen Reef"), "\(stderr)")
  }

  @Test func beginWritePastTheActiveVersionLimitStopsNamingIt() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let directory = makeTemporaryDirectory("reef-freeze", removedAtExit: true)
        var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/limit.reef"))
        configuration.maximumNumberOfActiveVersions = 1
        let reef = try Reef(configuration: configuration)
        try reef.write { reef.add(makePerson(1, "Ann")) }
        let frozen = reef.freeze()
        reef.beginWrite()
        print(frozen.isFrozen)
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Number of active versions (2)"), "\(stderr)")
    #expect(stderr.contains("maximumNumberOfActiveVersions (1)"), "\(stderr)")
  }

  @Test func changingAFrozenObjectStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let person = Person()
        person.id = 1
        try reef.write { reef.add(person) }
        let frozen = person.freeze()
        try reef.write { frozen.name = "Ann" }
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(
      stderr.contains("Attempting to modify a frozen object - call thaw on the Object instance first."), "\(stderr)")
  }

  @Test func observingAFrozenReefStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = reef.freeze().objects(Person.self).observe { _ in }
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Frozen Reefs do not change and do not have change notifications."), "\(stderr)")
  }

  @Test func freezingInAWriteTransactionGivesTheStateTheTransactionBeganFrom() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann")
    try reef.write { reef.add(ann) }
    try reef.write {
      ann.name = "Bea"
      let bob = makePerson(2, "Bob")
      reef.add(bob)
      let frozen = reef.freeze()
      #expect(frozen.objects(Person.self).map(\.name) == ["Ann"])
      #expect(ann.freeze().name == "Ann")
      let error = reefError { _ = try bob.tryFreeze() }
      #expect(error?.kind == .transaction)
      #expect(error?.message == "Cannot freeze an object in the same write transaction as it was created in")
    }
    #expect(reefError { _ = try Person().tryFreeze() }?.message == "Unmanaged objects cannot be frozen.")
    #expect(reefError { _ = try Person().tryThaw() }?.message == "Unmanaged objects cannot be thawed.")
    #expect(reefError { _ = try Person().dogs.tryThaw() }?.kind == .wrongReef)
  }

  @Test func freezingAnUnmanagedObjectStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = makePerson(1, "Ann").freeze()
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Unmanaged objects cannot be frozen."), "\(stderr)")
  }

  @Test func thawingAnUnmanagedObjectStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = makePerson(1, "Ann").thaw()
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Unmanaged objects cannot be thawed."), "\(stderr)")
  }

  @Test func freezingADeletedObjectStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let ann = makePerson(1, "Ann")
        try reef.write { reef.add(ann) }
        try reef.write { reef.delete(ann) }
        _ = ann.freeze()
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Object has been deleted or invalidated."), "\(stderr)")
  }

  @Test func freezingPastTheActiveVersionLimitStopsNamingIt() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let directory = makeTemporaryDirectory("reef-freeze", removedAtExit: true)
        var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/limit.reef"))
        configuration.maximumNumberOfActiveVersions = 1
        let reef = try Reef(configuration: configuration)
        try reef.write { reef.add(makePerson(1, "Ann")) }
        let first = reef.freeze()
        var unlimited = configuration
        unlimited.maximumNumberOfActiveVersions = nil
        // Another thread's Reef (this thread's is `reef`) commits a second version.
        if let failure = onAnotherThread({ [unlimited] in
          let writer = try Reef(configuration: unlimited)
          try writer.write { writer.add(makePerson(2, "Bob")) }
        }) {
          throw failure
        }
        reef.refresh()
        _ = reef.objects(Person.self).count
        _ = reef.objects(Person.self).freeze()
        print(first.isFrozen)
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Number of active versions"), "\(stderr)")
    #expect(stderr.contains("maximumNumberOfActiveVersions (1)"), "\(stderr)")
  }

  @Test func aThreadSafeReferenceResolvesOnAnotherThread() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann", city: "Oslo", dogs: ["Rex", "Fido"])
    try reef.write {
      reef.add(ann)
      reef.add(makePerson(2, "Bob"))
      reef.add(makePerson(3, "Cy"))
    }
    let configuration = reef.configuration
    let toAnn = ThreadSafeReference(to: ann)
    let toAddress = ThreadSafeReference(to: ann.address!)
    let toDogs = ThreadSafeReference(to: ann.dogs)
    let toResults = ThreadSafeReference(to: reef.objects(Person.self).filter("id > 1").sorted(byKeyPath: "name"))
    let toBob = ThreadSafeReference(to: reef.object(ofType: Person.self, forPrimaryKey: 2)!)
    try reef.write { reef.delete(reef.object(ofType: Person.self, forPrimaryKey: 2)!) }
    final class Seen: @unchecked Sendable { var lines: [String] = [] }
    let seen = Seen()
    let error = onAnotherThread {
      let other = try Reef(configuration: configuration)
      let resolved = other.resolve(toAnn)
      seen.lines.append(resolved.map { "\($0.name) \($0.reef === other)" } ?? "nil")
      seen.lines.append("resolved \(toAnn.isInvalidated)")
      seen.lines.append(other.resolve(toAddress)?.city ?? "nil")
      seen.lines.append(other.resolve(toDogs).map { "\($0.map(\.name))" } ?? "nil")
      seen.lines.append(other.resolve(toResults).map { "\($0.map(\.name))" } ?? "nil")
      seen.lines.append(other.resolve(toBob).map(\.name) ?? "nil")
      // Resolved in this thread's Reef, the object is live there.
      try other.write { resolved?.name = "Ann B" }
    }
    #expect(error == nil, "\(error!)")
    #expect(seen.lines == ["Ann true", "resolved true", "Oslo", #"["Rex", "Fido"]"#, #"["Cy"]"#, "nil"])
    reef.refresh()
    #expect(ann.name == "Ann B")
  }

  @Test func maximumNumberOfActiveVersionsBoundsPinnedSnapshots() throws {
    let directory = makeTemporaryDirectory("reef-freeze", removedAtExit: true)
    let fileURL = URL(fileURLWithPath: directory + "/versions.reef")
    var configuration = Reef.Configuration(fileURL: fileURL)
    configuration.maximumNumberOfActiveVersions = 2
    let reef = try Reef(configuration: configuration)
    try reef.write { reef.add(makePerson(1, "Ann")) }
    var first: Reef? = reef.freeze()
    try reef.write { reef.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Bea" }
    let second = reef.freeze()
    // Two versions pinned: a write would make a third.
    let writeError = reefError { try reef.write { reef.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Cy" } }
    #expect(writeError?.kind == .tooManyActiveVersions)
    #expect(writeError?.message.contains("Number of active versions (3)") == true, "\(String(describing: writeError))")
    #expect(
      writeError?.message.contains("maximumNumberOfActiveVersions (2): 2 are pinned") == true,
      "\(String(describing: writeError))")
    // Another thread's Reef without the limit commits a third version, which this Reef reads
    // after a refresh (a live Reef's snapshot is pinned unchecked): freezing it is refused.
    var unlimited = configuration
    unlimited.maximumNumberOfActiveVersions = nil
    let writeFailure = onAnotherThread { [unlimited] in
      let writer = try Reef(configuration: unlimited)
      try writer.write { writer.add(makePerson(2, "Dan")) }
    }
    #expect(writeFailure == nil)
    reef.refresh()
    #expect(reef.objects(Person.self).count == 2)
    let freezeError = reefError { _ = try reef.tryFreeze() }
    #expect(freezeError?.kind == .tooManyActiveVersions)
    #expect(
      freezeError?.message.contains("Number of active versions (3)") == true, "\(String(describing: freezeError))")
    #expect(
      freezeError?.message.contains("3 are pinned in this process") == true, "\(String(describing: freezeError))")
    // Releasing the first frozen Reef frees its version.
    #expect(first?.objects(Person.self).map(\.name) == ["Ann"])
    first = nil
    let third = reef.freeze()
    #expect(third.objects(Person.self).map(\.name) == ["Bea", "Dan"])
    #expect(second.objects(Person.self).map(\.name) == ["Bea"])
  }
}

/// The `ReefError` `body` throws (nil when it throws none or another error).
func reefError(_ body: () throws -> Void) -> ReefError? {
  do {
    try body()
    return nil
  } catch {
    return error as? ReefError
  }
}
