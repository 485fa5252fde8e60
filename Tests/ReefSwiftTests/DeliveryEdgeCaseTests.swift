import Foundation
import ReefSwift
import Testing

/// What a block on a queue replays: the elements as last reported, with each update's
/// deletions, insertions and modifications applied to them (used on the queue only).
final class Replay: @unchecked Sendable {
  var items: [String] = []

  /// Applies an update whose collection now reads `new`, as a table view does: removes the
  /// deletions (old indices), inserts the insertions (new indices), then reads each modified
  /// element (an old index, of an element neither deleted nor moved) again from `new` where it
  /// now is: in a list of values, an element replaced in place. Returns a log entry: the new
  /// elements, or a mismatch naming what the replay gave.
  func apply(deletions: [Int], insertions: [Int], modifications: [Int] = [], new: [String]) -> String {
    // Each element with whether it was modified, so that it is found after the moves.
    var marked = items.enumerated().map { (value: $0.element, modified: modifications.contains($0.offset)) }
    for index in deletions.sorted(by: >) { marked.remove(at: index) }
    for index in insertions.sorted() { marked.insert((new[index], false), at: index) }
    for (index, element) in marked.enumerated() where element.modified && index < new.count {
      marked[index].value = new[index]
    }
    items = marked.map(\.value)
    defer { items = new }
    return items == new
      ? "\(new)" : "MISMATCH replayed \(items) read \(new) d\(deletions) i\(insertions) m\(modifications)"
  }

  /// Applies a map's update by key (removes the deleted keys, puts each inserted one at its
  /// position in `new`), as ``apply(deletions:insertions:new:)``.
  func apply(deletedKeys: [String], insertedKeys: [String], new: [String]) -> String {
    items.removeAll { deletedKeys.contains($0) }
    for (index, key) in new.enumerated() where insertedKeys.contains(key) {
      items.insert(key, at: Swift.min(index, items.count))
    }
    defer { items = new }
    return items == new ? "\(new)" : "MISMATCH replayed \(items) read \(new) d\(deletedKeys) i\(insertedKeys)"
  }
}

/// Edge cases of live data: notifications delivered on a queue or to an actor, and
/// change sequences of frozen values.
@Suite struct DeliveryEdgeCaseTests {
  /// Waits until the last entry of `log` is `final` (each wait bounded); returns the entries.
  private func entries(of log: LockedLog, until final: String) -> [String] {
    var count = 1
    while log.wait(for: count), log.entries.last != final { count = log.entries.count + 1 }
    return log.entries
  }

  @Test func commitsCoalescedWhileAQueueLagsReplayToTheNewList() throws {
    let (reef, _) = try openReef()
    let shelter = Shelter()
    shelter.id = 1
    shelter.tags.append(objectsIn: ["a", "b", "c", "d", "e", "f"])
    try reef.write { reef.add(shelter) }
    let queue = DispatchQueue(label: "reef.delivery-edge.lagging-list")
    let log = LockedLog()
    let replay = Replay()
    let token = shelter.tags.observe(on: queue) { change in
      switch change {
      case .initial(let list):
        replay.items = Array(list)
        log.append("initial")
      case .update(let list, let deletions, let insertions, let modifications):
        log.append(
          replay.apply(deletions: deletions, insertions: insertions, modifications: modifications, new: Array(list)))
      case .error(let error): log.append("error \(error)")
      }
    }
    #expect(log.wait(for: 1))
    // The queue is held while the commits come: they reach it together.
    let held = DispatchSemaphore(value: 0)
    queue.async { held.wait() }
    let edits: [(List<String>) -> Void] = [
      { $0.move(from: 0, to: 5) }, { $0.remove(at: 2) }, { $0.insert("x", at: 1) }, { $0.append("y") },
      { $0.swapAt(0, 3) }, { $0.replace(index: 2, object: "z") }, { $0.removeLast() }, { $0.insert("w", at: 0) },
      { $0.move(from: 4, to: 1) }, { $0.remove(at: 0) },
    ]
    for edit in edits { try reef.write { edit(shelter.tags) } }
    held.signal()
    let final = "\(Array(shelter.tags))"
    let seen = entries(of: log, until: final)
    #expect(seen.last == final)
    #expect(!seen.contains { $0.hasPrefix("MISMATCH") || $0.hasPrefix("error") }, "\(seen)")
    token.invalidate()
  }

  @Test func commitsCoalescedWhileAQueueLagsReplayToTheNewResults() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for (id, name) in ["Ann", "Bob", "Cy", "Di", "Ed"].enumerated() { reef.add(makePerson(id, name)) }
    }
    let queue = DispatchQueue(label: "reef.delivery-edge.lagging-results")
    let log = LockedLog()
    let replay = Replay()
    let people = reef.objects(Person.self).sorted(byKeyPath: "name")
    let token = people.observe(on: queue) { change in
      switch change {
      case .initial(let results):
        replay.items = results.map(\.name)
        log.append("initial")
      case .update(let results, let deletions, let insertions, let modifications):
        log.append(
          replay.apply(
            deletions: deletions, insertions: insertions, modifications: modifications, new: results.map(\.name)))
      case .error(let error): log.append("error \(error)")
      }
    }
    #expect(log.wait(for: 1))
    let held = DispatchSemaphore(value: 0)
    queue.async { held.wait() }
    try reef.write { reef.object(ofType: Person.self, forPrimaryKey: 0)!.name = "Zed" }
    try reef.write { reef.delete(reef.object(ofType: Person.self, forPrimaryKey: 2)!) }
    try reef.write { reef.add(makePerson(10, "Al")) }
    try reef.write { reef.object(ofType: Person.self, forPrimaryKey: 10)!.name = "Eve" }
    try reef.write { reef.delete(reef.object(ofType: Person.self, forPrimaryKey: 1)!) }
    try reef.write { reef.add(makePerson(1, "Bea")) }
    held.signal()
    let final = "\(people.map(\.name))"
    let seen = entries(of: log, until: final)
    #expect(seen.last == final)
    #expect(!seen.contains { $0.hasPrefix("MISMATCH") || $0.hasPrefix("error") }, "\(seen)")
    token.invalidate()
  }

  @Test func aBlockThatInvalidatesAndReleasesItsOwnTokenIsNotCalledAgain() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let queue = DispatchQueue(label: "reef.delivery-edge.self-invalidate")
    let stopped = LockedLog()
    let control = LockedLog()
    final class Holder: @unchecked Sendable { var token: NotificationToken? }
    let holder = Holder()
    let results = reef.objects(Person.self).sorted(byKeyPath: "name")
    // Set before the queue runs the block: the queue runs the registration after this.
    queue.sync {}
    let lock = NSLock()
    lock.lock()
    holder.token = results.observe(on: queue) { change in
      stopped.append(describePeople(change))
      if case .update = change {
        lock.lock()
        holder.token?.invalidate()
        holder.token = nil  // the token's last reference, released inside its own block
        lock.unlock()
      }
    }
    lock.unlock()
    let controlToken = results.observe(on: queue) { control.append(describePeople($0)) }
    #expect(stopped.wait(for: 1) && control.wait(for: 1))
    try reef.write { reef.add(makePerson(2, "Bob")) }
    #expect(stopped.wait(for: 2) && control.wait(for: 2))
    try reef.write { reef.add(makePerson(3, "Cy")) }
    #expect(control.wait(for: 3))
    // The control, registered after it on the same queue, got the third commit: it did not.
    #expect(stopped.entries == [#"initial ["Ann"]"#, #"update ["Ann", "Bob"] d[] i[1] m[]"#])
    #expect(holder.token == nil)
    controlToken.invalidate()
  }

  @Test func anOwnerDeletedAndAddedAgainWhileTheQueueLagsEndsTheListNotifications() throws {
    let (reef, _) = try openReef()
    let shelter = Shelter()
    shelter.id = 1
    shelter.tags.append(objectsIn: ["a", "b"])
    try reef.write { reef.add(shelter) }
    let queue = DispatchQueue(label: "reef.delivery-edge.readded-owner")
    let log = LockedLog()
    let control = LockedLog()
    let show = { (tags: List<String>) in tags.joined(separator: ",") }
    let token = shelter.tags.observe(on: queue) { log.append(CollectionQueueTests.describe($0, show)) }
    let controlToken = reef.objects(Shelter.self).observe(on: queue) { _ in control.append("shelters") }
    #expect(log.wait(for: 1) && control.wait(for: 1))
    let held = DispatchSemaphore(value: 0)
    queue.async { held.wait() }
    try reef.write { reef.delete(shelter) }
    let again = Shelter()
    again.id = 1
    again.tags.append(objectsIn: ["c"])
    try reef.write { reef.add(again) }
    held.signal()
    #expect(control.wait(for: 2))
    try reef.write { again.tags.append("d") }
    #expect(control.wait(for: 3))
    // As when the queue keeps up: the deletion ends the list's notifications (the object
    // added again is another object with the same primary key).
    #expect(log.entries == ["initial a,b", "update invalidated d[0, 1] i[] m[]"])
    token.invalidate()
    controlToken.invalidate()
  }

  @Test func bufferedChangesOfAListReplayAndStayReadableAfterItsReefIsGone() async throws {
    let (_, path) = try openReef()
    let built = Smuggled(value: NSMutableArray())
    // The live Reef and list live on another thread, released there before the changes are read.
    onAnotherThread {
      let reef = try Reef(configuration: configuration(path))
      let shelter = Shelter()
      shelter.id = 1
      shelter.tags.append(objectsIn: ["a", "b", "c"])
      try reef.write { reef.add(shelter) }
      built.value.add(Smuggled(value: shelter.tags.changes))
      try reef.write { shelter.tags.remove(at: 0) }
      try reef.write { shelter.tags.append("d") }
      try reef.write { shelter.tags.move(from: 2, to: 0) }
      try reef.write { shelter.tags.insert("e", at: 1) }
    }
    let changes = (built.value[0] as! Smuggled<ReefChanges<ReefCollectionChange<List<String>>>>).value
    let replay = Replay()
    var seen: [String] = []
    for await change in changes {
      var read: [String] = []
      switch change {
      case .initial(let list): replay.items = Array(list)
      case .update(let list, let deletions, let insertions, let modifications):
        #expect(list.isFrozen)
        read = Array(list)
        seen.append(
          replay.apply(deletions: deletions, insertions: insertions, modifications: modifications, new: read))
      case .error(let error): seen.append("error \(error)")
      }
      // Up to the last state, whatever the replay gave (a mismatch fails below, not by waiting).
      if read == ["d", "e", "b", "c"] || seen.last?.hasPrefix("error") == true { break }
    }
    // The feed may report commits together (all four in one update, as
    // `commitsReportedTogetherToAListsChangesReplayThroughItsModifications` makes it): every
    // update replays, up to the last state.
    #expect(seen.last == #"["d", "e", "b", "c"]"#)
    #expect(!seen.contains { $0.hasPrefix("MISMATCH") || $0.hasPrefix("error") }, "\(seen)")
  }

  @Test func commitsReportedTogetherToAListsChangesReplayThroughItsModifications() async throws {
    let (reef, _) = try openReef()
    let shelter = Shelter()
    shelter.id = 1
    shelter.tags.append(objectsIn: ["a", "b", "c"])
    try reef.write { reef.add(shelter) }
    // The changes of a list frozen before the commits follow the feed from its snapshot: the
    // first update reports every commit since, together, as a feed that fell behind does.
    let frozen = shelter.tags.freeze()
    try reef.write { shelter.tags.remove(at: 0) }
    try reef.write { shelter.tags.append("d") }
    try reef.write { shelter.tags.move(from: 2, to: 0) }
    try reef.write { shelter.tags.insert("e", at: 1) }
    let replay = Replay()
    var seen: [String] = []
    for await change in frozen.changes {
      switch change {
      case .initial(let list): replay.items = Array(list)
      case .update(let list, let deletions, let insertions, let modifications):
        seen.append("d\(deletions) i\(insertions) m\(modifications)")
        seen.append(
          replay.apply(deletions: deletions, insertions: insertions, modifications: modifications, new: Array(list)))
      case .error(let error): seen.append("error \(error)")
      }
      if !seen.isEmpty { break }
    }
    // [a, b, c] to [d, e, b, c]: b and c kept their place; before them, a went and d and e
    // came: a replaced in place by d (a modification, as `list[0] = "d"` reports), e inserted.
    #expect(seen == ["d[] i[1] m[0]", #"["d", "e", "b", "c"]"#])
  }

  @Test func frozenLinkingObjectsOutliveTheirObjectsDeletionAndThawToNil() throws {
    let (reef, _) = try openReef()
    let puppy = Puppy()
    puppy.id = 7
    puppy.name = "Rex"
    let shelter = Shelter()
    shelter.id = 1
    shelter.name = "North"
    shelter.puppies.append(puppy)
    try reef.write { reef.add(shelter) }
    let frozen = puppy.shelters.freeze()
    try reef.write { reef.delete(puppy) }
    let smuggled = Smuggled(value: frozen)
    let read = LockedLog()
    onAnotherThread { read.append(smuggled.value.map(\.name).joined(separator: ",")) }
    #expect(read.entries == ["North"])
    #expect(frozen.isFrozen && frozen.freeze().isFrozen)
    #expect(frozen.thaw() == nil)
    // Added again with the same primary key: another object (a new `_id`), so still nil.
    let again = Puppy()
    again.id = 7
    try reef.write { reef.add(again) }
    #expect(frozen.thaw() == nil)
    #expect(frozen.map(\.name) == ["North"])
  }

  @Test func anActorFormCalledAwayFromItsThreadConfinedReefStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      do {
        let (_, path) = try openReef()
        let box = Smuggled(value: NSMutableArray())
        let opened = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        // The Reef's thread stays alive (its identifier is not reused by another thread).
        Thread {
          let reef = try! Reef(configuration: configuration(path))
          try! reef.write { reef.add(makePerson(1, "Ann")) }
          box.value.add(reef.objects(Person.self))
          opened.signal()
          done.wait()
        }.start()
        opened.wait()
        let people = box.value[0] as! Results<Person>
        // A nonisolated async context: `#isolation` is nil and this runs on the pool.
        _ = await people.observe(on: Watcher()) { watcher, _ in watcher.log.append("called") }
        print("observe returned")
        exit(0)
      } catch {
        print("the exit test's body threw \(error)")
        exit(0)
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Reef accessed from incorrect thread"), "\(stderr)")
  }

  @Test func anObservationInvalidatedAtOnceLetsTheNextOneOnTheSameActorDeliver() async throws {
    let (_, path) = try openReef()
    let holder = ObservingHolder()
    try await holder.open(path)
    try await holder.write { $0.add(makePerson(1, "Ann")) }
    let watcher = Watcher()
    // Its Reef is let go of on the actor later, while the second observation holds it.
    let first = await holder.observePeople(on: watcher, other: true)
    first.value.invalidate()
    let second = await holder.observePeople(on: watcher)
    #expect(await watcher.log.arrive(1))
    try await holder.write { $0.add(makePerson(2, "Bob")) }
    #expect(await watcher.log.arrive(2))
    #expect(watcher.log.entries == [#"initial ["Ann"]"#, #"update ["Ann", "Bob"] d[] i[1] m[]"#])
    #expect(watcher.other.entries == [#"initial ["Ann"]"#])
    second.value.invalidate()
  }

  /// Observes a collection on a queue, holds the queue while `edits` commit one by one, and
  /// checks that every update replays (deletions, then insertions) to what it reads.
  private func replayWhileLagging<C: ManagedCollectionProbe>(
    _ collection: C, read: @escaping (C) -> [String],
    observe: (C, DispatchQueue, @escaping (ReefCollectionChange<C>) -> Void) -> NotificationToken,
    edits: () throws -> Void, final: () -> [String]
  ) throws {
    let queue = DispatchQueue(label: "reef.delivery-edge.lagging")
    let log = LockedLog()
    let replay = Replay()
    let token = observe(collection, queue) { change in
      switch change {
      case .initial(let collection):
        replay.items = read(collection)
        log.append("initial")
      case .update(let collection, let deletions, let insertions, let modifications):
        log.append(
          replay.apply(
            deletions: deletions, insertions: insertions, modifications: modifications, new: read(collection)))
      case .error(let error): log.append("error \(error)")
      }
    }
    #expect(log.wait(for: 1))
    let held = DispatchSemaphore(value: 0)
    queue.async { held.wait() }
    try edits()
    held.signal()
    let last = "\(final())"
    let seen = entries(of: log, until: last)
    #expect(seen.last == last)
    #expect(!seen.contains { $0.hasPrefix("MISMATCH") || $0.hasPrefix("error") }, "\(seen)")
    token.invalidate()
  }

  /// ``replayWhileLagging(_:read:observe:edits:final:)`` for a map, whose changes are by key.
  private func replayKeysWhileLagging(
    _ map: Map<String, Int>, edits: () throws -> Void, final: () -> [String]
  ) throws {
    let queue = DispatchQueue(label: "reef.delivery-edge.lagging-map")
    let log = LockedLog()
    let replay = Replay()
    let token = map.observe(on: queue) { change in
      switch change {
      case .initial(let map):
        replay.items = map.keys
        log.append("initial")
      case .update(let map, let deletions, let insertions, _):
        log.append(replay.apply(deletedKeys: deletions, insertedKeys: insertions, new: map.keys))
      case .error(let error): log.append("error \(error)")
      }
    }
    #expect(log.wait(for: 1))
    let held = DispatchSemaphore(value: 0)
    queue.async { held.wait() }
    try edits()
    held.signal()
    let last = "\(final())"
    let seen = entries(of: log, until: last)
    #expect(seen.last == last)
    #expect(!seen.contains { $0.hasPrefix("MISMATCH") || $0.hasPrefix("error") }, "\(seen)")
    token.invalidate()
  }

  @Test func commitsCoalescedWhileAQueueLagsReplayToTheNewMapKeysAndLinkingObjects() throws {
    let (reef, _) = try openReef()
    let puppy = Puppy()
    puppy.id = 7
    let shelters = (1...5).map { id in
      let shelter = Shelter()
      shelter.id = id
      shelter.name = "s\(id)"
      shelter.scores["k\(id)"] = id
      if id % 2 == 1 { shelter.puppies.append(puppy) }
      return shelter
    }
    try reef.write { reef.add(shelters) }
    let first = shelters[0]
    try replayKeysWhileLagging(
      first.scores,
      edits: {
        try reef.write { first.scores["a"] = 1 }
        try reef.write { first.scores["k1"] = nil }
        try reef.write { first.scores["z"] = 2 }
        try reef.write { first.scores["m"] = 3 }
        try reef.write { first.scores["a"] = nil }
      }, final: { Array(first.scores.keys) })
    try replayWhileLagging(
      puppy.shelters, read: { $0.map(\.name) }, observe: { $0.observe(on: $1, $2) },
      edits: {
        try reef.write { shelters[1].puppies.append(puppy) }
        try reef.write { reef.delete(shelters[2]) }
        try reef.write { shelters[0].puppies.removeAll() }
        try reef.write { shelters[3].puppies.append(puppy) }
        try reef.write { shelters[0].puppies.append(puppy) }
      }, final: { puppy.shelters.map(\.name) })
  }

  @Test func cancellingTheTaskThatReadsChangesEndsTheSequence() async throws {
    let (_, path) = try openReef()
    let built = Smuggled(value: NSMutableArray())
    onAnotherThread {
      let reef = try Reef(configuration: configuration(path))
      try reef.write { reef.add(makePerson(1, "Ann")) }
      built.value.add(Smuggled(value: reef.objects(Person.self).sorted(byKeyPath: "name").changes))
    }
    let changes = (built.value[0] as! Smuggled<ReefChanges<ReefCollectionChange<Results<Person>>>>).value
    let log = LockedLog()
    let reader = _Concurrency.Task {
      for await change in changes { log.append(describePeople(change)) }
      log.append("end")
    }
    #expect(await log.arrive(1))
    reader.cancel()
    #expect(await log.arrive(2))
    // A commit after the end is not read: "end" was the reader's last entry.
    onAnotherThread {
      let reef = try Reef(configuration: configuration(path))
      try reef.write { reef.add(makePerson(2, "Bob")) }
    }
    await reader.value
    #expect(log.entries == [#"initial ["Ann"]"#, "end"])
  }
}
