import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// Notifications of a `Reef`, its `Results` and its objects, built from the store's change feed:
/// delivered after this `Reef`'s writes and when it refreshes to other writers' commits.
@Suite struct NotificationTests {
  /// Records the changes of a Results observer as strings.
  final class Log {
    var entries: [String] = []
  }

  @Test func resultsReportInsertionsDeletionsMovesAndModificationsExactly() throws {
    let (reef, _) = try openReef()
    try reef.write {
      reef.add(makePerson(1, "Ann", city: "Oslo"))
      reef.add(makePerson(2, "Cy", city: "Rome"))
      reef.add(makePerson(3, "Eve"))
    }
    let log = Log()
    let sorted = reef.objects(Person.self).sorted(byKeyPath: "name")
    let token = sorted.observe { log.entries.append(describePeople($0)) }
    #expect(log.entries == [#"initial ["Ann", "Cy", "Eve"]"#])

    try reef.write { reef.add(makePerson(4, "Bob")) }
    // A change of the sort key moves the object: a deletion and an insertion.
    try reef.write { reef.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Fay" }
    // A change inside an embedded object modifies its parent, in place.
    try reef.write { reef.object(ofType: Person.self, forPrimaryKey: 2)!.address!.city = "Milan" }
    try reef.write { reef.delete(reef.object(ofType: Person.self, forPrimaryKey: 3)!) }
    // Nothing of these results changes: no notification.
    try reef.write { reef.add(Dog()) }
    #expect(
      log.entries.dropFirst() == [
        #"update ["Ann", "Bob", "Cy", "Eve"] d[] i[1] m[]"#,
        #"update ["Bob", "Cy", "Eve", "Fay"] d[0] i[3] m[]"#,
        #"update ["Bob", "Cy", "Eve", "Fay"] d[] i[] m[1]"#,
        #"update ["Bob", "Cy", "Fay"] d[2] i[] m[]"#,
      ])
    token.invalidate()
    try reef.write { reef.add(makePerson(5, "Gus")) }
    #expect(log.entries.count == 5, "no notification after invalidate")
  }

  /// A key path into a list of embedded objects (`addresses.city`) takes the changes the feed
  /// records at an element's position (`addresses.1.city`), and only those.
  @Test func keyPathsThroughAListOfEmbeddedObjectsTakeChangesAtAnyPosition() throws {
    let (reef, _) = try openReef()
    let business = Business()
    business.name = "Acme"
    for city in ["Oslo", "Rome"] {
      let address = Address()
      address.city = city
      business.addresses.append(address)
    }
    try reef.write { reef.add(business) }
    var log: [String] = []
    let token = reef.objects(Business.self).observe(keyPaths: ["addresses.city"]) { change in
      if case .update(_, let deletions, let insertions, let modifications) = change {
        log.append("d\(deletions) i\(insertions) m\(modifications)")
      }
    }
    try reef.write { business.addresses[1].city = "Milan" }
    try reef.write { business.addresses[1].street = "Via Roma" }
    try reef.write { business.name = "Acme Inc." }
    #expect(log == ["d[] i[] m[0]"])
    _ = token
  }

  @Test func keyPathsLimitModificationsAndWithoutNotifyingSkipsAWrite() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann", city: "Oslo")) }
    let byName = Log()
    let byCity = Log()
    let people = reef.objects(Person.self)
    let nameToken = people.observe(keyPaths: ["name"]) { byName.entries.append(describePeople($0)) }
    let cityToken = people.observe(keyPaths: ["address.city"]) { byCity.entries.append(describePeople($0)) }
    try reef.write { reef.object(ofType: Person.self, forPrimaryKey: 1)!.address!.city = "Bergen" }
    try reef.write { reef.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Anna" }
    #expect(byName.entries == [#"initial ["Ann"]"#, #"update ["Anna"] d[] i[] m[0]"#])
    #expect(byCity.entries == [#"initial ["Ann"]"#, #"update ["Ann"] d[] i[] m[0]"#])

    // Silenced for one write; the next reports only its own change.
    try reef.write(withoutNotifying: [nameToken]) { reef.add(makePerson(2, "Bob")) }
    #expect(byName.entries.count == 2)
    #expect(byCity.entries.last == #"update ["Anna", "Bob"] d[] i[1] m[]"#)
    try reef.write { reef.add(makePerson(3, "Cy")) }
    #expect(byName.entries.last == #"update ["Anna", "Bob", "Cy"] d[] i[2] m[]"#)
    _ = (nameToken, cityToken)
  }

  @Test func anObjectReportsItsChangedPropertiesThenItsDeletion() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann", city: "Oslo")) }
    let ann = reef.object(ofType: Person.self, forPrimaryKey: 1)!
    var changes: [String] = []
    let token = ann.observe { change in
      switch change {
      case .change(let object, let properties):
        let described = properties.map {
          "\($0.name): \($0.oldValue.map { "\($0)" } ?? "-") -> \($0.newValue.map { "\($0)" } ?? "-")"
        }
        changes.append("\(object.id) \(described)")
      case .deleted: changes.append("deleted")
      case .error(let error): changes.append("error \(error)")
      }
    }
    var cityChanges = 0
    let cityToken = ann.address!.observe(keyPaths: ["city"]) { change in
      if case .change(let address, let properties) = change, properties.map(\.name) == ["city"],
        address.city == "Bergen"
      {
        cityChanges += 1
      }
    }
    try reef.write { ann.name = "Anna" }
    try reef.write { ann.address!.city = "Bergen" }
    // Another object's change is not this one's.
    try reef.write { reef.add(makePerson(2, "Bob")) }
    try reef.write { reef.delete(ann) }
    #expect(changes.count == 3)
    #expect(changes.first == #"1 ["name: Ann -> Anna"]"#)
    #expect(changes.dropFirst().first?.hasPrefix(#"1 ["address: - -> "#) == true)
    #expect(changes.last == "deleted")
    #expect(cityChanges == 1)
    _ = (token, cityToken)
  }

  @Test func otherThreadsCommitsAreDeliveredWhenTheReefRefreshes() throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    var didChange = 0
    let reefToken = reef.observe { notification, _ in if notification == .didChange { didChange += 1 } }
    let log = Log()
    let token = reef.objects(Person.self).observe { log.entries.append(describePeople($0)) }
    let written = DispatchSemaphore(value: 0)
    let thread = Thread {
      let other = try! Reef(configuration: Reef.Configuration(fileURL: URL(fileURLWithPath: path)))
      try! other.write {
        other.add(makePerson(2, "Bob"))
        other.object(ofType: Person.self, forPrimaryKey: 1)!.name = "Anna"
      }
      written.signal()
    }
    thread.start()
    written.wait()
    #expect(log.entries.count == 1, "nothing before the refresh")
    reef.refresh()
    #expect(log.entries.last == #"update ["Anna", "Bob"] d[] i[1] m[0]"#)
    #expect(didChange == 1)
    // A refresh with nothing new notifies nothing.
    reef.refresh()
    #expect(log.entries.count == 2 && didChange == 1)
    _ = (reefToken, token)
  }

  @Test func aReleasedTokenStopsItsNotifications() throws {
    let (reef, _) = try openReef()
    var calls = 0
    var token: NotificationToken? = reef.objects(Person.self).observe { _ in calls += 1 }
    try reef.write { reef.add(makePerson(1, "Ann")) }
    #expect(calls == 2)
    _ = token
    token = nil
    try reef.write { reef.add(makePerson(2, "Bob")) }
    #expect(calls == 2)
  }

  @Test func commitWriteWithoutNotifyingSkipsTheTokensBlocksForThatCommitOnly() throws {
    let (reef, _) = try openReef()
    let log = LockedLog()
    let results = reef.objects(Person.self).sorted(byKeyPath: "id")
    let first = results.observe { change in
      if case .update(let results, _, _, _) = change { log.append("first \(results.count)") }
    }
    let second = results.observe { change in
      if case .update(let results, _, _, _) = change { log.append("second \(results.count)") }
    }
    var reefCalls = 0
    let reefLevel = reef.observe { _, _ in reefCalls += 1 }
    reef.beginWrite()
    reef.add(makePerson(1, "Ann"))
    try reef.commitWrite(withoutNotifying: [first, reefLevel])
    #expect(log.entries == ["second 1"])
    #expect(reefCalls == 0)
    try reef.write(withoutNotifying: [second]) { reef.add(makePerson(2, "Bob")) }
    #expect(log.entries == ["second 1", "first 2"])
    #expect(reefCalls == 1)
    // An invalidated token is ignored; the next commit calls every block again, with its own
    // changes only.
    let third = results.observe { _ in }
    third.invalidate()
    reef.beginWrite()
    reef.add(makePerson(3, "Cy"))
    try reef.commitWrite(withoutNotifying: [third])
    #expect(log.entries == ["second 1", "first 2", "first 3", "second 3"])
    #expect(reefCalls == 2)
    #expect(results.map(\.name) == ["Ann", "Bob", "Cy"])
    first.invalidate()
    second.invalidate()
    reefLevel.invalidate()
  }

  @Test func commitWriteWithoutATransactionThrows() throws {
    let (reef, _) = try openReef()
    let token = reef.observe { _, _ in }
    #expect(throws: ReefError.self) { try reef.commitWrite(withoutNotifying: [token]) }
    token.invalidate()
  }

  @Test func skippingATokenOfAnotherReefStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef("one")
        let (other, _) = try openReef("two")
        let token = other.objects(Person.self).observe { _ in }
        reef.beginWrite()
        try reef.commitWrite(withoutNotifying: [token])
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(
      stderr.contains("Incorrect Reef: only notifications for the Reef being modified can be skipped."), "\(stderr)")
  }
}
