import Foundation
import ReefSwift
import Testing

/// An actor that notification blocks are called on.
actor Watcher {
  let log = LockedLog()
  /// The entries of a second observation delivered here.
  let other = LockedLog()
}

/// An actor with a `Reef` of its own, that registers observations delivered to a `Watcher`.
actor ObservingHolder {
  var reef: Reef?

  func open(_ path: String) async throws {
    reef = try await Reef(configuration: configuration(path), actor: self)
  }

  /// Observes the people sorted by name, into the watcher's `log` (or `other`).
  func observePeople(on watcher: Watcher, other: Bool = false) async -> Smuggled<NotificationToken> {
    let results = reef!.objects(Person.self).sorted(byKeyPath: "name")
    return Smuggled(
      value: await results.observe(on: watcher) { watcher, change in
        watcher.preconditionIsolated()
        (other ? watcher.other : watcher.log).append(describePeople(change))
      })
  }

  func observePerson(_ id: Int, keyPaths: [String]?, on watcher: Watcher) async -> Smuggled<NotificationToken> {
    let person = reef!.object(ofType: Person.self, forPrimaryKey: id)!
    return Smuggled(
      value: await person.observe(keyPaths: keyPaths, on: watcher) { watcher, change in
        watcher.log.append(describePerson(change))
      })
  }

  func observeAddress(ofPerson id: Int, on watcher: Watcher) async -> Smuggled<NotificationToken> {
    let address = reef!.object(ofType: Person.self, forPrimaryKey: id)!.address!
    return Smuggled(
      value: await address.observe(on: watcher) { watcher, change in
        switch change {
        case .error(let error as ReefError): watcher.log.append("error \(error.kind)")
        default: watcher.log.append("not an error")
        }
      })
  }

  /// Observes shelter 1's `tags`, `labels` and `scores` and puppy 7's `shelters` on `watcher`,
  /// in that order, each entry named by its collection.
  func observeShelterCollections(on watcher: Watcher) async -> Smuggled<[NotificationToken]> {
    let shelter = reef!.object(ofType: Shelter.self, forPrimaryKey: 1)!
    let puppy = reef!.object(ofType: Puppy.self, forPrimaryKey: 7)!
    typealias Tests = CollectionQueueTests
    var tokens: [NotificationToken] = []
    tokens.append(
      await shelter.tags.observe(on: watcher) {
        $0.log.append("tags " + Tests.describe($1, CollectionNotificationTests.letters))
      })
    tokens.append(
      await shelter.labels.observe(on: watcher) {
        $0.log.append("labels " + Tests.describe($1, CollectionNotificationTests.letters))
      })
    tokens.append(
      await shelter.scores.observe(on: watcher) { $0.log.append("scores " + Tests.describe($1, Tests.scores)) })
    tokens.append(
      await puppy.shelters.observe(on: watcher) {
        $0.log.append("shelters " + Tests.describe($1, Tests.shelterNames))
      })
    return Smuggled(value: tokens)
  }

  /// Observes workshop 1's embedded toolbox's tags on `watcher`.
  func observeToolboxTags(on watcher: Watcher) async -> Smuggled<NotificationToken> {
    let toolbox = reef!.object(ofType: Workshop.self, forPrimaryKey: 1)!.toolbox!
    return Smuggled(
      value: await toolbox.tags.observe(on: watcher) {
        $0.log.append(CollectionQueueTests.describe($1, CollectionNotificationTests.letters))
      })
  }

  func write(_ body: (Reef) -> Void) throws {
    try reef!.write { body(reef!) }
  }
}

func describePerson(_ change: ObjectChange<Person>) -> String {
  switch change {
  case .change(let person, let properties):
    "\(person.name): "
      + properties.map { "\($0.name) \($0.oldValue ?? "nil") -> \($0.newValue ?? "nil")" }.joined(separator: ", ")
  case .deleted: "deleted"
  case .error(let error): "error \(error)"
  }
}

extension LockedLog {
  /// Waits without blocking a thread until there are `count` entries (at most 300 s); returns
  /// whether there are.
  func arrive(_ count: Int) async -> Bool {
    for _ in 0..<30_000 where entries.count < count {
      try? await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
    }
    return entries.count >= count
  }
}

/// Notifications delivered to an actor: `observe(keyPaths:on:_:)` with an actor.
@Suite struct ActorObservationTests {
  @Test func resultsObservedOnAnActorGetExactChangesOfEveryWriter() async throws {
    let (reef, path) = try openReef()
    try reef.write {
      reef.add(makePerson(1, "Ann"))
      reef.add(makePerson(3, "Eve"))
    }
    let holder = ObservingHolder()
    try await holder.open(path)
    let watcher = Watcher()
    let token = await holder.observePeople(on: watcher)
    // `.initial` came before `observe` returned.
    #expect(watcher.log.entries == [#"initial ["Ann", "Eve"]"#])
    // A commit of the holder's own Reef: Eve becomes Abe and moves to the front.
    try await holder.write { $0.object(ofType: Person.self, forPrimaryKey: 3)!.name = "Abe" }
    #expect(await watcher.log.arrive(2))
    // A commit of another thread's Reef.
    let failure = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write {
        other.add(makePerson(2, "Bob"))
        other.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Ada"
      }
    }
    #expect(failure == nil)
    #expect(await watcher.log.arrive(3))
    #expect(
      watcher.log.entries == [
        #"initial ["Ann", "Eve"]"#,
        #"update ["Abe", "Ann"] d[1] i[0] m[]"#,
        #"update ["Abe", "Ada", "Bob"] d[] i[2] m[1]"#,
      ])
    token.value.invalidate()
  }

  @Test func anObjectObservedOnAnActorGetsItsWatchedChangesAndItsDeletion() async throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let holder = ObservingHolder()
    try await holder.open(path)
    let watcher = Watcher()
    let token = await holder.observePerson(1, keyPaths: ["name"], on: watcher)
    let renamed = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write { other.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Ada" }
    }
    #expect(renamed == nil)
    // Seen before the next commits (a notification that lags takes the commits since the last
    // one together: the deletion alone).
    #expect(await watcher.log.arrive(1))
    let deleted = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      // Not a watched path: no notification.
      try other.write { other.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.append(Dog()) }
      try other.write { other.delete(other.object(ofType: Person.self, forPrimaryKey: 1)!) }
    }
    #expect(deleted == nil)
    #expect(await watcher.log.arrive(2))
    #expect(watcher.log.entries == ["Ada: name Ann -> Ada", "deleted"])
    token.value.invalidate()
  }

  @Test func invalidatingFromAnotherThreadStopsDeliveryToTheActor() async throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let holder = ObservingHolder()
    try await holder.open(path)
    let watcher = Watcher()
    let token = await holder.observePeople(on: watcher)
    // Registered second, in the same actor's Reef: told of each commit after the first.
    let controlToken = await holder.observePeople(on: watcher, other: true)
    #expect(onAnotherThread { token.value.invalidate() } == nil)
    try await holder.write { $0.add(makePerson(2, "Bob")) }
    #expect(await watcher.other.arrive(2))
    #expect(watcher.other.entries == [#"initial ["Ann"]"#, #"update ["Ann", "Bob"] d[] i[1] m[]"#])
    #expect(watcher.log.entries == [#"initial ["Ann"]"#])
    controlToken.value.invalidate()
  }

  @Test func anEmbeddedObjectObservedOnAnActorGetsAnError() async throws {
    let (reef, path) = try openReef()
    try reef.write {
      let person = makePerson(1, "Ann")
      person.address = Address()
      reef.add(person)
    }
    let holder = ObservingHolder()
    try await holder.open(path)
    let watcher = Watcher()
    let token = await holder.observeAddress(ofPerson: 1, on: watcher)
    #expect(watcher.log.entries == ["error confinement"])
    token.value.invalidate()
  }

  @Test func collectionsObservedOnAnActorGetExactUpdatesFromAnotherThread() async throws {
    let base = CollectionNotificationTests()
    let (_, _, path) = try base.shelterReef {
      $0.tags.append(objectsIn: ["a", "b", "c"])
      $0.labels.insert(objectsIn: ["a", "b", "c"])
      $0.scores["a"] = 1
      $0.puppies.append(base.puppy(7, "Rex"))
    }
    let holder = ObservingHolder()
    try await holder.open(path)
    let watcher = Watcher()
    let tokens = await holder.observeShelterCollections(on: watcher)
    // Each `.initial` came before its `observe` returned.
    #expect(
      watcher.log.entries == ["tags initial abc", "labels initial abc", "scores initial a=1", "shelters initial Bea"])
    let failure = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write {
        let shelter = other.object(ofType: Shelter.self, forPrimaryKey: 1)!
        shelter.tags.remove(at: 0)
        shelter.labels.insert("d")
        shelter.scores["b"] = 2
        shelter.name = "Ann"
      }
    }
    #expect(failure == nil)
    // One commit: the actor's Reef calls the four blocks in the order they were registered.
    #expect(await watcher.log.arrive(8))
    #expect(
      watcher.log.entries.dropFirst(4) == [
        "tags update bc d[0] i[] m[]", "labels update abcd d[] i[3] m[]", "scores update a=1,b=2 d[] i[b] m[]",
        "shelters update Ann d[] i[] m[0]",
      ])
    tokens.value.forEach { $0.invalidate() }
  }

  @Test func theCollectionOfAnEmbeddedObjectObservedOnAnActorGetsAnError() async throws {
    let (reef, path) = try openReef()
    let workshop = Workshop()
    workshop.id = 1
    workshop.toolbox = Toolbox()
    try reef.write { reef.add(workshop) }
    let holder = ObservingHolder()
    try await holder.open(path)
    let watcher = Watcher()
    let token = await holder.observeToolboxTags(on: watcher)
    #expect(watcher.log.entries.count == 1)
    #expect(
      watcher.log.entries.first?.contains(
        "takes the collections of top-level objects only: tags belongs to an embedded Toolbox") == true,
      "\(watcher.log.entries)")
    token.value.invalidate()
  }
}
