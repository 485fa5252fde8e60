import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// `results.changes` and `object.changes`: asynchronous sequences of frozen results and objects,
/// built on the store's change feed.
@Suite struct AsyncChangesTests {

  /// ``describePeople(_:)``, and whether the results are frozen.
  func describe(_ change: ReefCollectionChange<Results<Person>>) -> String {
    switch change {
    case .initial(let results), .update(let results, _, _, _): "\(describePeople(change)) frozen \(results.isFrozen)"
    case .error: describePeople(change)
    }
  }

  /// A writer on its own thread and `Reef`: each step waits until the previous change was
  /// received, so that each commit is one change.
  final class Writer: @unchecked Sendable {
    let received = DispatchSemaphore(value: 0)
    var error: (any Error)?
    let done = DispatchSemaphore(value: 0)

    func start(_ configuration: Reef.Configuration, steps: [(Reef) throws -> Void]) {
      let steps = Smuggled(value: steps)
      Thread {
        do {
          let reef = try Reef(configuration: configuration)
          for step in steps.value {
            self.received.wait()
            try reef.write { try step(reef) }
          }
        } catch {
          self.error = error
        }
        self.done.signal()
      }.start()
    }
  }

  @Test func resultsChangesAreExactAndFrozenForCommitsOfAnotherThread() async throws {
    let (reef, _) = try openReef()
    try reef.write {
      reef.add(makePerson(1, "Ann"))
      reef.add(makePerson(2, "Cy", city: "Rome"))
    }
    let changes = reef.objects(Person.self).sorted(byKeyPath: "name").changes
    let writer = Writer()
    writer.start(
      reef.configuration,
      steps: [
        { $0.add(makePerson(3, "Bob")) },
        // The sort key changes: a move (a deletion and an insertion).
        { $0.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Fay" },
        // A change inside an embedded object: a modification of its parent.
        { $0.object(ofType: Person.self, forPrimaryKey: 2)!.address!.city = "Milan" },
        // Nothing of these results: no change (the next one is the deletion).
        { $0.add(Dog()) },
        { $0.delete($0.object(ofType: Person.self, forPrimaryKey: 3)!) },
      ])
    var log: [String] = []
    for await change in changes {
      log.append(describe(change))
      writer.received.signal()
      // The Dog commit yields nothing: let the writer go on to the deletion.
      if log.count == 4 { writer.received.signal() }
      if log.count == 5 { break }
    }
    writer.done.wait()
    #expect(writer.error == nil)
    #expect(
      log == [
        #"initial ["Ann", "Cy"] frozen true"#,
        #"update ["Ann", "Bob", "Cy"] d[] i[1] m[] frozen true"#,
        #"update ["Bob", "Cy", "Fay"] d[0] i[2] m[] frozen true"#,
        #"update ["Bob", "Cy", "Fay"] d[] i[] m[1] frozen true"#,
        #"update ["Cy", "Fay"] d[0] i[] m[] frozen true"#,
      ])
  }

  @Test func keyPathsLimitTheModificationsReported() async throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann", city: "Oslo")) }
    let changes = reef.objects(Person.self).changes(keyPaths: ["address.city"])
    let writer = Writer()
    writer.start(
      reef.configuration,
      steps: [
        // Not a watched path: no change.
        { $0.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Bea" },
        { $0.object(ofType: Person.self, forPrimaryKey: 1)!.address!.city = "Rome" },
      ])
    var log: [String] = []
    writer.received.signal()  // the name change yields nothing
    for await change in changes {
      log.append(describe(change))
      writer.received.signal()
      if log.count == 2 { break }
    }
    writer.done.wait()
    #expect(writer.error == nil)
    #expect(log == [#"initial ["Ann"] frozen true"#, #"update ["Bea"] d[] i[] m[0] frozen true"#])
  }

  @Test func objectChangesReportPropertiesAndEndWithTheDeletion() async throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann", city: "Oslo")) }
    let ann = reef.object(ofType: Person.self, forPrimaryKey: 1)!
    let changes = ann.changes
    let writer = Writer()
    writer.start(
      reef.configuration,
      steps: [
        { $0.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Bea" },
        { $0.object(ofType: Person.self, forPrimaryKey: 1)!.address!.city = "Rome" },
        { $0.delete($0.object(ofType: Person.self, forPrimaryKey: 1)!) },
      ])
    writer.received.signal()
    var log: [String] = []
    for await change in changes {
      switch change {
      case .change(let object, let properties):
        let described = properties.map { property in
          "\(property.name) \(property.oldValue.map { "\($0)" } ?? "nil") -> \(ReefSwiftDescribe(property.newValue))"
        }
        log.append("change \(described) frozen \(object.isFrozen) city \(object.address?.city ?? "-")")
      case .deleted: log.append("deleted")
      case .error(let error): log.append("error \(error)")
      }
      writer.received.signal()
    }
    // The loop ended by itself after the deletion.
    writer.done.wait()
    #expect(writer.error == nil)
    #expect(
      log == [
        #"change ["name Ann -> Bea"] frozen true city Oslo"#,
        #"change ["address nil -> Address"] frozen true city Rome"#,
        "deleted",
      ])
  }

  /// Opens a Reef, starts `changes` and hands the store to `body`; returns a weak reference to
  /// the store, checked once everything of the Reef is released.
  @Test func cancellingTheTaskEndsTheSequenceAndReleasesTheFeedObservation() async throws {
    weak var store: Store?
    do {
      let (reef, _) = try openReef("cancel")
      try reef.write { reef.add(makePerson(1, "Ann")) }
      store = reef.store
      let changes = reef.objects(Person.self).changes
      let (ready, readySignal) = AsyncStream<Void>.makeStream()
      let task = _Concurrency.Task {
        var count = 0
        for await _ in changes {
          count += 1
          readySignal.yield()
        }
        return count
      }
      for await _ in ready { break }
      task.cancel()
      #expect(await task.value == 1)
    }
    // The observation was cancelled: nothing holds the store (its feed thread let go of it).
    #expect(store == nil)
  }

  @Test func releasingTheSequenceReleasesTheFeedObservation() throws {
    weak var store: Store?
    do {
      let (reef, _) = try openReef("release")
      try reef.write { reef.add(makePerson(1, "Ann")) }
      store = reef.store
      let changes = reef.objects(Person.self).changes
      let objectChanges = reef.object(ofType: Person.self, forPrimaryKey: 1)!.changes
      _ = (changes, objectChanges)
    }
    #expect(store == nil)
  }
}

/// A property's new value as a short string: the type name for an object.
func ReefSwiftDescribe(_ value: Any?) -> String {
  guard let value else { return "nil" }
  if let object = value as? ObjectBase { return object.objectSchema.className }
  return "\(value)"
}
