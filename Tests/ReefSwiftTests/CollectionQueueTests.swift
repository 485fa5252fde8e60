import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// An embedded object with a collection of each kind (their notifications on a queue are refused).
class Toolbox: EmbeddedObject {
  @Persisted var tags: List<String>
  @Persisted var labels: MutableSet<String>
  @Persisted var scores: Map<String, Int>
}

class Workshop: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var toolbox: Toolbox?
}

/// `observe(keyPaths:on:_:)` of `List`, `MutableSet`, `Map` and `LinkingObjects` (notifications
/// delivered on a queue), and their `changes` (asynchronous sequences of frozen collections).
@Suite struct CollectionQueueTests {
  /// The models and helpers of the same-thread collection notification tests.
  let base = CollectionNotificationTests()

  /// A change as a string, with whether its collection is frozen (an invalidated collection,
  /// whose object is gone, is not read).
  static func describe<C: ManagedCollectionProbe>(_ change: ReefCollectionChange<C>, _ show: (C) -> String) -> String {
    func state(_ collection: C) -> String {
      (collection.isInvalidated ? "invalidated" : show(collection)) + (collection.isFrozen ? " frozen" : "")
    }
    switch change {
    case .initial(let collection): return "initial \(state(collection))"
    case .update(let collection, let deletions, let insertions, let modifications):
      return "update \(state(collection)) d\(deletions) i\(insertions) m\(modifications)"
    case .error(let error): return "error \(error)"
    }
  }

  /// A map's change as a string, by key (`d[b] i[c] m[a]`), as the other `describe`.
  static func describe<C: ManagedCollectionProbe>(_ change: ReefMapChange<C>, _ show: (C) -> String) -> String {
    func state(_ collection: C) -> String {
      (collection.isInvalidated ? "invalidated" : show(collection)) + (collection.isFrozen ? " frozen" : "")
    }
    let keys = { (keys: [C.Key]) in "[\(keys.map { "\($0)" }.joined(separator: ","))]" }
    switch change {
    case .initial(let collection): return "initial \(state(collection))"
    case .update(let collection, let deletions, let insertions, let modifications):
      return "update \(state(collection)) d\(keys(deletions)) i\(keys(insertions)) m\(keys(modifications))"
    case .error(let error): return "error \(error)"
    }
  }

  static func shelterNames(_ shelters: LinkingObjects<Shelter>) -> String {
    shelters.map(\.name).joined(separator: ",")
  }

  static func scores(_ scores: Map<String, Int>) -> String {
    scores.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
  }

  /// Commits `change` in a `Reef` of `path` on another thread.
  func commit(_ path: String, _ change: @escaping (Reef) throws -> Void) {
    let change = Smuggled(value: change)
    let error = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write { try change.value(other) }
    }
    #expect(error == nil)
  }

  /// Observes `collection` on a queue twice (the observation checked, then a control one): the
  /// first commit (from another thread) reaches both; the first is invalidated from another
  /// thread; the second commit reaches the control only. `expected`: the control's changes.
  func observeOnAQueue<C: ManagedCollectionProbe>(
    _ collection: C, path: String, show: @escaping (C) -> String,
    observe: (C, DispatchQueue, @escaping (ReefCollectionChange<C>) -> Void) -> NotificationToken,
    first: @escaping (Shelter) -> Void, second: @escaping (Shelter) -> Void, expected: [String]
  ) {
    observeOnAQueue(
      collection, path: path, describe: { Self.describe($0, show) }, observe: observe, first: first, second: second,
      expected: expected)
  }

  /// ``observeOnAQueue(_:path:show:observe:first:second:expected:)`` for any kind of change
  /// (a map's are by key), each written by `describe`.
  func observeOnAQueue<C, Change>(
    _ collection: C, path: String, describe: @escaping (Change) -> String,
    observe: (C, DispatchQueue, @escaping (Change) -> Void) -> NotificationToken,
    first: @escaping (Shelter) -> Void, second: @escaping (Shelter) -> Void, expected: [String]
  ) {
    let queue = DispatchQueue(label: "reef.collection-queue")
    queue.setSpecific(key: queueKey, value: "collection observer")
    let checked = LockedLog()
    let control = LockedLog()
    let token = observe(collection, queue) { change in
      let place = DispatchQueue.getSpecific(key: queueKey) == "collection observer" ? "" : " (not on the queue)"
      checked.append(describe(change) + place)
    }
    // Registered second, in the same queue's Reef: told of each commit after the first.
    let controlToken = observe(collection, queue) { control.append(describe($0)) }
    #expect(checked.wait(for: 1) && control.wait(for: 1))
    commit(path) { first($0.object(ofType: Shelter.self, forPrimaryKey: 1)!) }
    #expect(checked.wait(for: 2) && control.wait(for: 2))
    let smuggled = Smuggled(value: token)
    onAnotherThread { smuggled.value.invalidate() }
    commit(path) { second($0.object(ofType: Shelter.self, forPrimaryKey: 1)!) }
    #expect(control.wait(for: 3))
    #expect(control.entries == expected)
    #expect(checked.entries == Array(expected.prefix(2)), "nothing after the token was invalidated")
    controlToken.invalidate()
  }

  @Test func aListOnAQueueGetsExactUpdatesUntilItsTokenIsInvalidatedFromAnotherThread() throws {
    let (_, shelter, path) = try base.shelterReef { $0.tags.append(objectsIn: ["a", "b", "c"]) }
    observeOnAQueue(
      shelter.tags, path: path, show: CollectionNotificationTests.letters,
      observe: { $0.observe(on: $1, $2) },
      first: {
        $0.tags.remove(at: 0)
        $0.tags.append("d")
      },
      second: { $0.tags[1] = "x" },
      expected: ["initial abc", "update bcd d[0] i[2] m[]", "update bxd d[] i[] m[1]"])
  }

  @Test func aMutableSetOnAQueueGetsExactUpdatesUntilItsTokenIsInvalidatedFromAnotherThread() throws {
    let (_, shelter, path) = try base.shelterReef { $0.labels.insert(objectsIn: ["a", "b", "c"]) }
    observeOnAQueue(
      shelter.labels, path: path, show: CollectionNotificationTests.letters,
      observe: { $0.observe(on: $1, $2) },
      first: {
        $0.labels.remove("a")
        $0.labels.insert("d")
      },
      second: { $0.labels.remove("c") },
      expected: ["initial abc", "update bcd d[0] i[2] m[]", "update bd d[1] i[] m[]"])
  }

  @Test func aMapOnAQueueGetsExactUpdatesUntilItsTokenIsInvalidatedFromAnotherThread() throws {
    let (_, shelter, path) = try base.shelterReef {
      $0.scores["a"] = 1
      $0.scores["b"] = 2
    }
    observeOnAQueue(
      shelter.scores, path: path, describe: { Self.describe($0, Self.scores) },
      observe: { $0.observe(keyPaths: nil, on: $1, $2) },
      first: {
        $0.scores["c"] = 3
        $0.scores["a"] = 10
        $0.scores["b"] = nil
      },
      second: { $0.scores["c"] = 30 },
      expected: ["initial a=1,b=2", "update a=10,c=3 d[b] i[c] m[a]", "update a=10,c=30 d[] i[] m[c]"])
  }

  @Test func linkingObjectsOnAQueueGetExactUpdatesUntilTheirTokenIsInvalidatedFromAnotherThread() throws {
    let (reef, _, path) = try base.shelterReef { $0.puppies.append(self.base.puppy(7, "Rex")) }
    let puppy = try #require(reef.object(ofType: Puppy.self, forPrimaryKey: 7))
    observeOnAQueue(
      puppy.shelters, path: path, show: Self.shelterNames,
      observe: { $0.observe(on: $1, $2) },
      first: { bea in
        let cy = Shelter()
        cy.id = 2
        cy.name = "Cy"
        cy.puppies.append(bea.puppies[0])
        bea.reef!.add(cy)
        bea.name = "Ann"
      },
      second: { $0.puppies.removeAll() },
      expected: ["initial Bea", "update Ann,Cy d[] i[1] m[0]", "update Cy d[0] i[] m[]"])
  }

  @Test func theCollectionsOfAnEmbeddedObjectOnAQueueGetAnError() throws {
    let (reef, path) = try openReef()
    let workshop = Workshop()
    workshop.id = 1
    workshop.toolbox = Toolbox()
    workshop.toolbox!.tags.append("a")
    let manor = Manor()
    manor.plots["north"] = Plot()
    try reef.write {
      reef.add(workshop)
      reef.add(manor)
    }
    let queue = DispatchQueue(label: "reef.collection-queue.embedded")
    let log = LockedLog()
    let toolbox = try #require(workshop.toolbox)
    let plot = try #require(manor.plots["north"] ?? nil)
    let tokens = [
      toolbox.tags.observe(on: queue) { log.append("tags \(Self.describe($0, CollectionNotificationTests.letters))") },
      toolbox.labels.observe(on: queue) {
        log.append("labels \(Self.describe($0, CollectionNotificationTests.letters))")
      },
      toolbox.scores.observe(on: queue) { log.append("scores \(Self.describe($0, Self.scores))") },
      plot.manor.observe(on: queue) { log.append("manor \(Self.describe($0, { "\($0.count)" }))") },
    ]
    #expect(log.wait(for: 4))
    // A commit after: still nothing but the errors.
    commit(path) { $0.objects(Workshop.self).first!.toolbox!.tags.append("b") }
    queue.sync {}
    let entries = log.entries
    #expect(entries.count == 4)
    for (entry, name) in zip(entries, ["tags", "labels", "scores", "manor"]) {
      #expect(entry.hasPrefix("\(name) error "), "\(entry)")
      #expect(entry.contains("takes the collections of top-level objects only"), "\(entry)")
    }
    #expect(entries[0].contains("tags belongs to an embedded Toolbox; observe the Workshop that holds it"))
    #expect(entries[3].contains("manor belongs to an embedded Plot; observe the Manor that holds it"))
    tokens.forEach { $0.invalidate() }
  }

  @Test func aCollectionWhoseObjectIsDeletedBeforeTheQueueStartsGetsTheSameThreadError() throws {
    let (reef, shelter, _) = try base.shelterReef { $0.tags.append("a") }
    let queue = DispatchQueue(label: "reef.collection-queue.deleted")
    let log = LockedLog()
    // The queue is held until the object is deleted.
    let held = DispatchSemaphore(value: 0)
    queue.async { held.wait() }
    let token = shelter.tags.observe(on: queue) { log.append(Self.describe($0, CollectionNotificationTests.letters)) }
    try reef.write { reef.delete(shelter) }
    held.signal()
    #expect(log.wait(for: 1))
    queue.sync {}
    #expect(log.entries.count == 1)
    #expect(
      log.entries.first?.contains("the tags of a deleted or invalidated Shelter cannot be observed") == true,
      "\(log.entries)")
    token.invalidate()
  }

  @Test func aNilQueueObservesOnThisThread() throws {
    let (reef, shelter, _) = try base.shelterReef { $0.tags.append("a") }
    var log: [String] = []
    let token = shelter.tags.observe(on: nil) { log.append(Self.describe($0, CollectionNotificationTests.letters)) }
    try reef.write { shelter.tags.append("b") }
    #expect(log == ["initial a", "update ab d[] i[1] m[]"])
    token.invalidate()
  }

  // MARK: - Asynchronous sequences

  /// The changes read from `changes` (by a task) while a writer on another thread commits
  /// `steps`, one per change received (after a step in `quiet`, which yields nothing, the next
  /// goes at once): `count` entries, the changes then "end" if the sequence ends. Waits for
  /// them with `LockedLog.wait(for:)`, so that a change that never comes fails the test.
  func read<C>(
    _ changes: ReefChanges<ReefCollectionChange<C>>, path: String, steps: [(Reef) throws -> Void],
    quiet: Set<Int> = [], count: Int, show: @escaping (ReefCollectionChange<C>) -> String
  ) async -> [String] {
    let writer = AsyncChangesTests.Writer()
    writer.start(configuration(path), steps: steps)
    let log = LockedLog()
    let show = Smuggled(value: show)
    let reader = _Concurrency.Task {
      for await change in changes {
        log.append(show.value(change))
        writer.received.signal()
        if quiet.contains(log.entries.count) { writer.received.signal() }
      }
      log.append("end")
    }
    #expect(await Self.offThePool { log.wait(for: count) })
    reader.cancel()
    await reader.value
    // Lets a writer left waiting go.
    for _ in 0..<steps.count { writer.received.signal() }
    _ = await Self.offThePool {
      writer.done.wait()
      return true
    }
    #expect(writer.error == nil)
    return Array(log.entries.prefix(count))
  }

  @Test func aListsChangesAreExactAndFrozenAndEndWhenItsObjectIsDeleted() async throws {
    let (_, shelter, path) = try base.shelterReef { $0.tags.append(objectsIn: ["a", "b", "c"]) }
    let shelterOne = { (reef: Reef) in reef.object(ofType: Shelter.self, forPrimaryKey: 1)! }
    let log = await read(
      shelter.tags.changes, path: path,
      steps: [
        {
          shelterOne($0).tags.remove(at: 0)
          shelterOne($0).tags.append("d")
        },
        { shelterOne($0).tags[1] = "x" },
        // Not the list: nothing (the next change is the deletion).
        { shelterOne($0).name = "Cy" },
        { $0.delete(shelterOne($0)) },
      ], quiet: [3], count: 5, show: { Self.describe($0, CollectionNotificationTests.letters) })
    #expect(
      log == [
        "initial abc frozen",
        "update bcd frozen d[0] i[2] m[]",
        "update bxd frozen d[] i[] m[1]",
        "update invalidated frozen d[0, 1, 2] i[] m[]",
        "end",
      ])
  }

  @Test func aMutableSetsChangesAreExactAndFrozen() async throws {
    let (_, shelter, path) = try base.shelterReef { $0.labels.insert(objectsIn: ["a", "b"]) }
    let labels = { (reef: Reef) in reef.object(ofType: Shelter.self, forPrimaryKey: 1)!.labels }
    let log = await read(
      shelter.labels.changes, path: path,
      steps: [
        {
          labels($0).remove("a")
          labels($0).insert("c")
        },
        { labels($0).insert("b") },  // there already: nothing
        { labels($0).insert("d") },
      ], quiet: [2], count: 3, show: { Self.describe($0, CollectionNotificationTests.letters) })
    #expect(log == ["initial ab frozen", "update bc frozen d[0] i[1] m[]", "update bcd frozen d[] i[2] m[]"])
  }

  @Test func aMapsChangesAreExactAndFrozen() async throws {
    let (_, shelter, path) = try base.shelterReef { $0.scores["a"] = 1 }
    let scores = { (reef: Reef) in reef.object(ofType: Shelter.self, forPrimaryKey: 1)!.scores }
    let log = await read(
      shelter.scores.changes(keyPaths: nil), path: path,
      steps: [
        { scores($0)["b"] = 2 },
        {
          scores($0)["a"] = nil
          scores($0)["b"] = 20
        },
      ], count: 3, show: { Self.describe($0, Self.scores) })
    #expect(log == ["initial a=1 frozen", "update a=1,b=2 frozen d[] i[1] m[]", "update b=20 frozen d[0] i[] m[1]"])
  }

  @Test func linkingObjectsChangesAreExactAndFrozen() async throws {
    let (reef, _, path) = try base.shelterReef { $0.puppies.append(self.base.puppy(7, "Rex")) }
    let puppy = try #require(reef.object(ofType: Puppy.self, forPrimaryKey: 7))
    let log = await read(
      puppy.shelters.changes(keyPaths: ["name"]), path: path,
      steps: [
        { reef in
          let cy = Shelter()
          cy.id = 2
          cy.name = "Cy"
          cy.puppies.append(reef.object(ofType: Puppy.self, forPrimaryKey: 7)!)
          reef.add(cy)
        },
        // Not a watched path: nothing.
        { $0.object(ofType: Shelter.self, forPrimaryKey: 1)!.tags.append("a") },
        { $0.object(ofType: Shelter.self, forPrimaryKey: 1)!.name = "Ann" },
        { $0.delete($0.object(ofType: Shelter.self, forPrimaryKey: 2)!) },
        // The puppy itself: its linking objects are invalidated, every one deleted, the end.
        { $0.delete($0.object(ofType: Puppy.self, forPrimaryKey: 7)!) },
      ], quiet: [2], count: 6, show: { Self.describe($0, Self.shelterNames) })
    #expect(
      log == [
        "initial Bea frozen", "update Bea,Cy frozen d[] i[1] m[]", "update Ann,Cy frozen d[] i[] m[0]",
        "update Ann frozen d[1] i[] m[]", "update invalidated frozen d[0] i[] m[]", "end",
      ])
  }

  @Test func frozenCollectionsOfTheChangesAreReadInAnotherTask() async throws {
    let (_, shelter, _) = try base.shelterReef { $0.tags.append(objectsIn: ["a", "b"]) }
    var iterator = shelter.tags.changes.makeAsyncIterator()
    guard case .initial(let tags)? = await iterator.next() else {
      Issue.record("no initial change")
      return
    }
    let frozen = Smuggled(value: tags)
    let read = await _Concurrency.Task.detached { (frozen.value.isFrozen, Array(frozen.value)) }.value
    #expect(read.0 && read.1 == ["a", "b"])
  }

  @Test func cancellingTheTaskEndsTheSequence() async throws {
    let (_, shelter, path) = try base.shelterReef { $0.tags.append("a") }
    let changes = shelter.tags.changes
    let log = LockedLog()
    let task = _Concurrency.Task {
      for await change in changes { log.append(Self.describe(change, CollectionNotificationTests.letters)) }
      log.append("end")
    }
    #expect(await Self.offThePool { log.wait(for: 1) })
    task.cancel()
    #expect(await Self.offThePool { log.wait(for: 2) })
    // A commit after the end: not read.
    commit(path) { $0.object(ofType: Shelter.self, forPrimaryKey: 1)!.tags.append("b") }
    await task.value
    #expect(log.entries == ["initial a frozen", "end"])
  }

  /// Runs a blocking wait on a thread of its own, so that it holds no thread of the
  /// cooperative pool (which the task it waits for needs).
  static func offThePool(_ wait: @escaping @Sendable () -> Bool) async -> Bool {
    await withCheckedContinuation { continuation in
      Thread { continuation.resume(returning: wait()) }.start()
    }
  }
}

/// What the descriptions read of a collection.
protocol ManagedCollectionProbe {
  var isInvalidated: Bool { get }
  var isFrozen: Bool { get }
}

extension List: ManagedCollectionProbe {}
extension MutableSet: ManagedCollectionProbe {}
extension Map: ManagedCollectionProbe {}
extension LinkingObjects: ManagedCollectionProbe {}
