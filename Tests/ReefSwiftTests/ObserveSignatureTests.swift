import Foundation
import ReefSwift
import Testing

extension ObservingHolder {
  /// Observes person `id` on `watcher` with a block that names `Object` (Realm's generic form),
  /// through Swift key paths.
  func observePersonAsObject(_ id: Int, on watcher: Watcher) async -> Smuggled<NotificationToken> {
    let person = reef!.object(ofType: Person.self, forPrimaryKey: id)!
    return Smuggled(
      value: await person.observe(keyPaths: [\Person.name], on: watcher) {
        (watcher: isolated Watcher, change: ObjectChange<Person>) in
        watcher.log.append(describePerson(change))
      })
  }

  /// Observes person `id` on `watcher` with a block that names `Object`.
  func observePersonAsObjectBase(_ id: Int, on watcher: Watcher) async -> Smuggled<NotificationToken> {
    let person = reef!.object(ofType: Person.self, forPrimaryKey: id)!
    return Smuggled(
      value: await person.observe(keyPaths: ["name"], on: watcher) {
        (watcher: isolated Watcher, change: ObjectChange<Object>) in
        if case .change(let object, let properties) = change {
          watcher.log.append("\(type(of: object)) \((object as? Person)?.name ?? "?") \(properties.map(\.name))")
        }
      })
  }
}

/// The notification blocks and their types as Realm's tests write them: `ObjectChange<T>` with
/// `T` taken from the block (the class or a superclass), Swift key paths, a map's changes by
/// key, `NotificationBlock`.
@Suite struct ObserveSignatureTests {
  @Test func anObjectsBlockNamesItsClassOrASuperclass() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann")
    try reef.write { reef.add(ann) }
    var seen: [String] = []
    let tokens = [
      ann.observe { (change: ObjectChange<Person>) in
        if case .change(let person, _) = change { seen.append("Person \(person.name)") }
      },
      ann.observe { (change: ObjectChange<Object>) in
        if case .change(let object, let properties) = change {
          seen.append("Object \(object.objectSchema.className) \(properties.map(\.name))")
        }
      },
      ann.observe(keyPaths: ["name"]) { (change: ObjectChange<ObjectBase>) in
        if case .change(let object, _) = change { seen.append("ObjectBase \(object is Person)") }
      },
      // Unannotated, the block's object has the observed object's type.
      ann.observe { change in
        if case .change(let person, _) = change { seen.append("inferred \(person.name)") }
      },
    ]
    try reef.write { ann.name = "Ada" }
    #expect(seen == ["Person Ada", "Object Person [\"name\"]", "ObjectBase true", "inferred Ada"])
    try reef.write { reef.delete(ann) }
    _ = tokens
  }

  @Test func aBlockNamingAnotherClassStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let ann = makePerson(1, "Ann")
        try reef.write { reef.add(ann) }
        _ = ann.observe { (_: ObjectChange<Dog>) in }
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(
      stderr.contains("observe's block takes ObjectChange<Dog>, and the object observed is a Person"), "\(stderr)")
  }

  @Test func swiftKeyPathsLimitAnObjectsNotifications() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann", city: "Oslo")
    try reef.write { reef.add(ann) }
    var byName: [String] = []
    var byCity: [String] = []
    let tokens = [
      ann.observe(keyPaths: [\Person.name]) { change in
        if case .change(_, let properties) = change { byName.append(contentsOf: properties.map(\.name)) }
      },
      ann.observe(keyPaths: [\Person.address?.city]) { (change: ObjectChange<Person>) in
        if case .change(let person, _) = change { byCity.append(person.address?.city ?? "-") }
      },
    ]
    try reef.write { ann.address!.street = "Karl Johans gate" }
    try reef.write { ann.address!.city = "Bergen" }
    try reef.write { ann.name = "Ada" }
    #expect(byName == ["name"])
    #expect(byCity == ["Bergen"])
    _ = tokens
  }

  @Test func aKeyPathThatReadsNoPersistedPropertyStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let ann = makePerson(1, "Ann")
        try reef.write { reef.add(ann) }
        _ = ann.observe(keyPaths: [\Person.isInvalidated]) { (_: ObjectChange<Person>) in }
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("a key path of Person must name a @Persisted property"), "\(stderr)")
  }

  @Test func swiftKeyPathsLimitTheModificationsOfResultsAndLists() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann", dogs: ["Rex", "Fido"])
    try reef.write { reef.add(ann) }
    var people: [String] = []
    var erased: [String] = []
    var dogs: [String] = []
    let tokens = [
      reef.objects(Person.self).observe(keyPaths: [\Person.name]) { change in
        if case .update(_, _, _, let modifications) = change { people.append("m\(modifications)") }
      },
      AnyReefCollection(reef.objects(Person.self)).observe(keyPaths: [\Person.name]) { change in
        if case .update(_, _, _, let modifications) = change { erased.append("m\(modifications)") }
      },
      ann.dogs.observe(keyPaths: [\Dog.age]) { change in
        if case .update(_, _, _, let modifications) = change { dogs.append("m\(modifications)") }
      },
    ]
    try reef.write { ann.dogs[1].name = "Max" }
    try reef.write { ann.dogs[1].age = 3 }
    try reef.write { ann.name = "Ada" }
    #expect(people == ["m[0]"], "only the name change is a modification")
    #expect(erased == ["m[0]"], "and through AnyReefCollection")
    #expect(dogs == ["m[1]"], "only the age change is a modification")
    _ = tokens
  }

  @Test func aMapReportsTheKeysThatChangedAndTakesKeyPathsOfItsObjects() throws {
    let base = CollectionNotificationTests()
    let (reef, shelter, _) = try base.shelterReef {
      $0.rooms["hall"] = base.address("Oslo")
      $0.rooms["attic"] = base.address("Rome")
    }
    var all: [String] = []
    var byCity: [String] = []
    let tokens = [
      shelter.rooms.observe { change in
        switch change {
        case .initial(let map): all.append("initial \(map.keys)")
        case .update(_, let deletions, let insertions, let modifications):
          all.append("d\(deletions) i\(insertions) m\(modifications)")
        case .error(let error): all.append("error \(error)")
        }
      },
      shelter.rooms.observe(keyPaths: [\Address.city]) { change in
        if case .update(_, _, _, let modifications) = change { byCity.append("m\(modifications)") }
      },
    ]
    try reef.write { shelter.rooms["attic"]!!.street = "Via Roma" }
    try reef.write { shelter.rooms["hall"]!!.city = "Bergen" }
    try reef.write {
      shelter.rooms["cellar"] = base.address("Lima")
      shelter.rooms["hall"] = nil
    }
    #expect(
      all == [
        #"initial ["hall", "attic"]"#, #"d[] i[] m["attic"]"#, #"d[] i[] m["hall"]"#, #"d["hall"] i["cellar"] m[]"#,
      ])
    #expect(byCity == [#"m["hall"]"#, "m[]"])
    _ = tokens
  }

  @Test func aMapOnAQueueReportsKeys() throws {
    let base = CollectionNotificationTests()
    let (_, shelter, path) = try base.shelterReef { $0.scores["a"] = 1 }
    let queue = DispatchQueue(label: "reef.observe-signature.map")
    let log = LockedLog()
    let token = shelter.scores.observe(on: queue) { change in
      switch change {
      case .initial(let map): log.append("initial \(map.keys)")
      case .update(let map, let deletions, let insertions, let modifications):
        log.append("\(map.keys) d\(deletions) i\(insertions) m\(modifications)")
      case .error(let error): log.append("error \(error)")
      }
    }
    #expect(log.wait(for: 1))
    let failure = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write {
        let shelter = other.object(ofType: Shelter.self, forPrimaryKey: 1)!
        shelter.scores["a"] = nil
        shelter.scores["b"] = 2
      }
    }
    #expect(failure == nil)
    #expect(log.wait(for: 2))
    #expect(log.entries == [#"initial ["a"]"#, #"["b"] d["a"] i["b"] m[]"#])
    token.invalidate()
  }

  @Test func anObjectOnAQueueTakesRealmsGenericBlock() throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let ann = try #require(reef.object(ofType: Person.self, forPrimaryKey: 1))
    let queue = DispatchQueue(label: "reef.observe-signature.object")
    let log = LockedLog()
    let token = ann.observe(keyPaths: ["name"], on: queue) { (change: ObjectChange<Object>) in
      if case .change(let object, let properties) = change {
        log.append("\(object.objectSchema.className) \(properties.map(\.name))")
      }
    }
    // The observation is set up on the queue before the commit.
    queue.sync {}
    let failure = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write { other.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.append(Dog()) }
      try other.write { other.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Ada" }
    }
    #expect(failure == nil)
    #expect(log.wait(for: 1))
    #expect(log.entries == [#"Person ["name"]"#])
    token.invalidate()
  }

  @Test func anObjectOnAnActorTakesRealmsGenericBlockAndKeyPaths() async throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let holder = ObservingHolder()
    try await holder.open(path)
    let watcher = Watcher()
    let typed = await holder.observePersonAsObject(1, on: watcher)
    let asObject = await holder.observePersonAsObjectBase(1, on: watcher)
    try await holder.write { $0.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Ada" }
    #expect(await watcher.log.arrive(2))
    #expect(Set(watcher.log.entries) == ["Ada: name Ann -> Ada", #"Person Ada ["name"]"#])
    typed.value.invalidate()
    asObject.value.invalidate()
  }

  @Test func aReefsBlockIsANotificationBlock() throws {
    let (reef, _) = try openReef()
    var told: [Reef.Notification] = []
    let block: NotificationBlock = { notification, changed in
      #expect(changed === reef)
      told.append(notification)
    }
    let token = reef.observe(block)
    try reef.write { reef.add(makePerson(1, "Ann")) }
    #expect(told == [.didChange])
    token.invalidate()
  }
}
