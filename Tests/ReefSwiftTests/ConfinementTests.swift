import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Entries recorded from several threads, with a wait for the n-th (bounded: a delivery that
/// never comes fails the test instead of hanging it).
final class LockedLog: @unchecked Sendable {
  private let condition = NSCondition()
  private var items: [String] = []

  func append(_ entry: String) {
    condition.lock()
    items.append(entry)
    condition.broadcast()
    condition.unlock()
  }

  var entries: [String] {
    condition.lock()
    defer { condition.unlock() }
    return items
  }

  /// Waits until there are `count` entries (at most 300 s); returns whether there are.
  @discardableResult
  func wait(for count: Int) -> Bool {
    // Long: a passing test returns as soon as the entries are there, and deliveries to an actor
    // wait for the cooperative pool, which blocking tests beside this one can hold for minutes.
    let deadline = Date(timeIntervalSinceNow: 300)
    condition.lock()
    defer { condition.unlock() }
    while items.count < count {
      if !condition.wait(until: deadline) { return items.count >= count }
    }
    return true
  }
}

/// The calling thread, as a number to compare.
func currentThreadNumber() -> UInt {
  #if canImport(Glibc)
    UInt(pthread_self())
  #else
    UInt(bitPattern: pthread_self())
  #endif
}

func configuration(_ path: String) -> Reef.Configuration {
  Reef.Configuration(fileURL: URL(fileURLWithPath: path))
}

func describePeople(_ change: ReefCollectionChange<Results<Person>>) -> String {
  switch change {
  case .initial(let results): "initial \(results.map(\.name))"
  case .update(let results, let deletions, let insertions, let modifications):
    "update \(results.map(\.name)) d\(deletions) i\(insertions) m\(modifications)"
  case .error(let error): "error \(error)"
  }
}

/// A person with an address in `city` (none when nil) and a dog for each name of `dogs`.
func makePerson(_ id: Int, _ name: String, city: String? = nil, dogs: [String] = []) -> Person {
  let person = Person()
  person.id = id
  person.name = name
  if let city {
    let address = Address()
    address.city = city
    person.address = address
  }
  for name in dogs {
    let dog = Dog()
    dog.name = name
    person.dogs.append(dog)
  }
  return person
}

/// An actor that owns a `Reef` confined to it.
actor ReefHolder {
  var reef: Reef?
  var state = "new"
  let log = LockedLog()

  func open(_ path: String) async throws {
    reef = try await Reef(configuration: configuration(path), actor: self)
  }

  func names() -> [String] { reef!.objects(Person.self).sorted(byKeyPath: "id").map(\.name) }

  func add(_ id: Int, _ name: String) async throws {
    state = "waiting"
    try await reef!.asyncWrite { reef!.add(makePerson(id, name)) }
    log.append("wrote \(name)")
  }

  func ping() { log.append("ping while \(state)") }

  /// The `Reef`, carried out of the actor on purpose (to check that using it there stops).
  func smuggled() -> Smuggled<Reef> { Smuggled(value: reef!) }
}

/// `Reef`s confined to a queue or an actor, and notifications delivered on a queue.
@Suite struct ConfinementTests {
  @Test func aQueueConfinedReefIsUsedFromItsQueueOnWhicheverThreadRunsIt() throws {
    let (_, path) = try openReef()
    let queue = DispatchQueue(label: "reef.confinement.queue")
    let box = Smuggled(value: NSMutableArray())
    let threads = LockedLog()
    queue.sync {
      let reef = try! Reef(configuration: configuration(path), queue: queue)
      try! reef.write { reef.add(makePerson(1, "Ann")) }
      box.value.add(reef)
      threads.append("\(currentThreadNumber())")
    }
    let reef = Smuggled(value: box.value[0] as! Reef)
    // `sync` from this thread runs the block here; from another thread, there.
    let here = queue.sync { () -> [String] in
      threads.append("\(currentThreadNumber())")
      return reef.value.objects(Person.self).map(\.name)
    }
    #expect(here == ["Ann"])
    onAnotherThread {
      queue.sync {
        threads.append("\(currentThreadNumber())")
        try! reef.value.write { reef.value.add(makePerson(2, "Bob")) }
      }
    }
    let names = queue.sync { reef.value.objects(Person.self).sorted(byKeyPath: "id").map(\.name) }
    #expect(names == ["Ann", "Bob"])
    #expect(Set(threads.entries.dropFirst()).count == 2, "two threads ran the queue's blocks: \(threads.entries)")
  }

  @Test func openingOnAQueueFromAnotherThreadStopsWithRealmsMessage() async {
    // Realm raises an exception there (it used to be a thrown error here).
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (_, path) = try openReef()
        let queue = DispatchQueue(label: "reef.confinement.elsewhere")
        _ = try Reef(configuration: configuration(path), queue: queue)
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Reef opened from incorrect dispatch queue."), "\(stderr)")
  }

  @Test func usingAQueueConfinedReefOffItsQueueStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (_, path) = try openReef()
        let queue = DispatchQueue(label: "reef.confinement.misuse")
        let box = NSMutableArray()
        try queue.sync { box.add(try Reef(configuration: configuration(path), queue: queue)) }
        let reef = box[0] as! Reef
        _ = reef.objects(Person.self).count
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Reef accessed from incorrect thread"), "\(stderr)")
  }

  @Test func anActorConfinedReefOpensReadsAndWritesOnItsActor() async throws {
    let (_, path) = try openReef()
    let holder = ReefHolder()
    try await holder.open(path)
    try await holder.add(1, "Ann")
    try await holder.add(2, "Bob")
    #expect(await holder.names() == ["Ann", "Bob"])
    #expect(holder.log.entries == ["wrote Ann", "wrote Bob"])
    // Another Reef's commit shows on the actor without a refresh (the change feed wakes it).
    onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write { other.add(makePerson(3, "Cy")) }
    }
    var names: [String] = []
    for _ in 0..<2000 {
      names = await holder.names()
      if names.count == 3 { break }
      try await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
    }
    #expect(names == ["Ann", "Bob", "Cy"])
  }

  @Test func usingAnActorConfinedReefOffItsActorStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let (_, path) = try! openReef()
      let holder = ReefHolder()
      try! await holder.open(path)
      let reef = await holder.smuggled().value
      _ = reef.objects(Person.self).count
      print("the Reef was used off its actor without stopping")
      exit(0)
    }
    // The runtime's message for an actor (`preconditionIsolated` does not print the caller's).
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Incorrect actor executor assumption; expected 'ReefSwiftTests.ReefHolder'"), "\(stderr)")
  }

  @Test func resultsObservedOnAQueueGetOtherThreadsCommitsWithoutARefresh() throws {
    let (reef, path) = try openReef()
    try reef.write {
      reef.add(makePerson(1, "Ann"))
      reef.add(makePerson(3, "Eve"))
    }
    let queue = DispatchQueue(label: "reef.confinement.observe")
    let log = LockedLog()
    let onQueue = LockedLog()
    queue.setSpecific(key: queueKey, value: "observer")
    let token = reef.objects(Person.self).sorted(byKeyPath: "name").observe(on: queue) { change in
      onQueue.append(DispatchQueue.getSpecific(key: queueKey) == "observer" ? "on queue" : "elsewhere")
      log.append(describePeople(change))
    }
    #expect(log.wait(for: 1))
    // A commit of this Reef, on this thread (not the queue's).
    try reef.write { reef.object(ofType: Person.self, forPrimaryKey: 3)!.name = "Abe" }
    #expect(log.wait(for: 2))
    // A commit of a second Reef, on another thread.
    onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write {
        other.add(makePerson(2, "Bob"))
        other.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Ada"
      }
    }
    #expect(log.wait(for: 3))
    #expect(
      log.entries == [
        #"initial ["Ann", "Eve"]"#,
        #"update ["Abe", "Ann"] d[1] i[0] m[]"#,
        #"update ["Abe", "Ada", "Bob"] d[] i[2] m[1]"#,
      ])
    #expect(onQueue.entries == ["on queue", "on queue", "on queue"])
    token.invalidate()
  }

  @Test func anObjectObservedOnAQueueGetsItsChangesAndItsDeletion() throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let queue = DispatchQueue(label: "reef.confinement.object")
    let log = LockedLog()
    let token = reef.object(ofType: Person.self, forPrimaryKey: 1)!.observe(keyPaths: ["name"], on: queue) {
      change in
      switch change {
      case .change(let person, let properties):
        log.append(
          "\(person.name): "
            + properties.map { "\($0.name) \($0.oldValue ?? "nil") -> \($0.newValue ?? "nil")" }.joined(separator: ", ")
        )
      case .deleted: log.append("deleted")
      case .error(let error): log.append("error \(error)")
      }
    }
    // Set up on the queue before this block runs there.
    queue.sync {}
    onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write { other.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Ada" }
    }
    // Seen before the next commits (a notification that lags takes the commits since the last
    // one together: the deletion alone).
    #expect(log.wait(for: 1))
    onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      // Not a watched path: no notification.
      try other.write { other.object(ofType: Person.self, forPrimaryKey: 1)!.dogs.append(Dog()) }
      try other.write { other.delete(other.object(ofType: Person.self, forPrimaryKey: 1)!) }
    }
    #expect(log.wait(for: 2))
    #expect(log.entries == ["Ada: name Ann -> Ada", "deleted"])
    token.invalidate()
  }

  @Test func invalidatingFromAnotherThreadStopsDelivery() throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let queue = DispatchQueue(label: "reef.confinement.invalidate")
    let stopped = LockedLog()
    let control = LockedLog()
    let results = reef.objects(Person.self).sorted(byKeyPath: "id")
    let token = results.observe(on: queue) { stopped.append(describePeople($0)) }
    // Registered second, on the same queue's Reef: told of each commit after the first.
    let controlToken = results.observe(on: queue) { control.append(describePeople($0)) }
    #expect(stopped.wait(for: 1) && control.wait(for: 1))
    let smuggled = Smuggled(value: token)
    onAnotherThread { smuggled.value.invalidate() }
    onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write { other.add(makePerson(2, "Bob")) }
    }
    #expect(control.wait(for: 2))
    #expect(control.entries == [#"initial ["Ann"]"#, #"update ["Ann", "Bob"] d[] i[1] m[]"#])
    #expect(stopped.entries == [#"initial ["Ann"]"#])
    controlToken.invalidate()
  }

  @Test func aQueueConfinedReefRefreshesAndNotifiesOnItsQueue() throws {
    let (_, path) = try openReef()
    let queue = DispatchQueue(label: "reef.confinement.own")
    let log = LockedLog()
    let tokens = Smuggled(value: NSMutableArray())
    queue.sync {
      let reef = try! Reef(configuration: configuration(path), queue: queue)
      tokens.value.add(reef.observe { _, reef in log.append("didChange \(reef.objects(Person.self).count)") })
      tokens.value.add(reef.objects(Person.self).observe { log.append(describePeople($0)) })
      tokens.value.add(reef)
    }
    #expect(log.wait(for: 1))
    onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write { other.add(makePerson(1, "Ann")) }
    }
    #expect(log.wait(for: 3))
    #expect(log.entries == [#"initial []"#, "didChange 1", #"update ["Ann"] d[] i[0] m[]"#])
    queue.sync { tokens.value.removeAllObjects() }
  }
}

let queueKey = DispatchSpecificKey<String>()
