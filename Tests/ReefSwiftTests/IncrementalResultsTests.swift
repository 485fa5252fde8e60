import Foundation
import ReefBSON
import ReefSwift
import Testing

/// `Results` notifications computed object by object (no re-run of the query), checked against
/// the query run again after every commit.
@Suite struct IncrementalResultsTests {
  /// A small deterministic generator (SplitMix64), so that a failure can be replayed.
  struct Generator {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return Int((z ^ (z >> 31)) % UInt64(bound))
    }
  }

  typealias Observed = ObservedIDs<ObjectId>

  static let names = ["Ann", "Bob", "Cy", "Dee", "Eve"]
  static let cities = ["Oslo", "Rome", "Lima", nil]

  func contact(_ generator: inout Generator) -> Contact {
    let contact = Contact()
    contact.name = IncrementalResultsTests.names[generator.next(5)]
    if let city = IncrementalResultsTests.cities[generator.next(4)] {
      let address = Address()
      address.city = city
      contact.address = address
    }
    return contact
  }

  /// Checks that the change set turns the old `_id`s into the new: the new ones outside the
  /// insertions are the old ones outside the deletions, in order; modifications are old
  /// positions of objects that changed and kept their place, and every such object is one.
  func check(
    _ observed: Observed, new: [ObjectId], deletions: [Int], insertions: [Int], modifications: [Int],
    changed: Set<ObjectId>, label: String
  ) {
    if deletions != deletions.sorted() || insertions != insertions.sorted() || modifications != modifications.sorted() {
      observed.failures.append("\(label): index lists not ascending")
    }
    observed.take(
      new, deletions: deletions, insertions: insertions, modifications: modifications, changed: changed, label: label)
  }

  @Test(arguments: [1, 2, 3])
  func randomCommitsGiveTheChangeSetsOfTheQueryRunAgain(seed: UInt64) throws {
    let (reef, _) = try openReef("incremental", types: [Contact.self, Address.self])
    var generator = Generator(state: seed)
    try reef.write { for _ in 0..<200 { reef.add(contact(&generator)) } }

    let queries: [(String, Results<Contact>)] = [
      ("all", reef.objects(Contact.self)),
      ("city", reef.objects(Contact.self).filter("address.city IN %@", ["Oslo", "Rome"])),
      ("name", reef.objects(Contact.self).sorted(byKeyPath: "name")),
      (
        "city desc",
        reef.objects(Contact.self).filter("address.city != %@", "Lima").sorted(
          byKeyPath: "address.city", ascending: false)
      ),
    ]
    var changed: Set<ObjectId> = []
    var before: [ObjectId: Document?] = [:]
    var observations: [(String, Observed, NotificationToken)] = []
    for (label, results) in queries {
      let observed = Observed()
      let token = results.observe { change in
        switch change {
        case .initial(let results): observed.ids = results.map(\._id)
        case .update(let results, let deletions, let insertions, let modifications):
          observed.updates += 1
          // The commit is in the store now: keep the objects whose document it changed.
          changed = changed.filter { id in
            (try? reef.store.collection("Contact").document(forID: .objectId(id))) != before[id]
          }
          self.check(
            observed, new: results.map(\._id), deletions: deletions, insertions: insertions,
            modifications: modifications, changed: changed, label: label)
        case .error(let error): observed.failures.append("\(label): \(error)")
        }
      }
      observations.append((label, observed, token))
    }

    for _ in 0..<40 {
      let all = Array(reef.objects(Contact.self))
      // Each object's stored document: a change that leaves it as it was is no change.
      let stored = reef.store.collection("Contact")
      before = try Dictionary(uniqueKeysWithValues: all.map { ($0._id, try stored.document(forID: .objectId($0._id))) })
      changed = []
      // Between 1 and 6 changes (moved in place), 8 to 15 (merged in one pass), now and then
      // more than a sixteenth of the results (read again).
      let count =
        generator.next(10) == 0
        ? 20 + generator.next(20) : generator.next(3) == 0 ? 8 + generator.next(8) : 1 + generator.next(6)
      try reef.write {
        for _ in 0..<count {
          switch generator.next(4) {
          case 0: reef.add(contact(&generator))
          case 1:
            let victim = all[generator.next(all.count)]
            if !victim.isInvalidated {
              changed.insert(victim._id)
              reef.delete(victim)
            }
          case 2:
            let target = all[generator.next(all.count)]
            if !target.isInvalidated {
              changed.insert(target._id)
              target.name = IncrementalResultsTests.names[generator.next(5)]
            }
          default:
            let target = all[generator.next(all.count)]
            if !target.isInvalidated {
              changed.insert(target._id)
              if let city = IncrementalResultsTests.cities[generator.next(4)] {
                if target.address == nil { target.address = Address() }
                target.address!.city = city
              } else {
                target.address = nil
              }
            }
          }
        }
      }
      for (label, observed, _) in observations {
        let fresh = queries.first { $0.0 == label }!.1
        #expect(observed.ids == fresh.map(\._id), "\(label): the observer's results are the query's")
      }
    }
    for (label, observed, _) in observations {
      #expect(observed.failures == [], "\(label)")
      #expect(observed.updates > 15, "\(label) saw \(observed.updates) updates")
    }
  }

  @Test func equalSortValuesKeepIDOrderAsTheStoreDoes() throws {
    let (reef, _) = try openReef("ties", types: [Contact.self, Address.self])
    let ids = (0..<6).map { _ in ObjectId() }.sorted { $0.description < $1.description }
    try reef.write {
      for id in ids.reversed() {
        let contact = Contact()
        contact._id = id
        contact.name = "Ann"
        reef.add(contact)
      }
    }
    let sorted = reef.objects(Contact.self).sorted(byKeyPath: "name")
    var log: [String] = []
    let token = sorted.observe { change in
      if case .update(_, let deletions, let insertions, let modifications) = change {
        log.append("d\(deletions) i\(insertions) m\(modifications)")
      }
    }
    // The fourth moves to the end through the sort, then back between the same neighbours.
    try reef.write { reef.object(ofType: Contact.self, forPrimaryKey: ids[3])!.name = "Zed" }
    try reef.write { reef.object(ofType: Contact.self, forPrimaryKey: ids[3])!.name = "Ann" }
    // Two swap their order through the sort: the one that moved past the other moves.
    try reef.write {
      reef.object(ofType: Contact.self, forPrimaryKey: ids[0])!.name = "Bob"
      reef.object(ofType: Contact.self, forPrimaryKey: ids[5])!.name = "Abe"
    }
    #expect(sorted.map(\._id) == [ids[5], ids[1], ids[2], ids[3], ids[4], ids[0]])
    #expect(
      log == [
        "d[3] i[5] m[]",
        "d[5] i[3] m[]",
        "d[0, 5] i[0, 5] m[]",
      ])
    _ = token
  }
}

/// One observation in the randomized change-set tests: the identities it last saw, and what went
/// wrong.
final class ObservedIDs<ID: Hashable> {
  var ids: [ID] = []
  var updates = 0
  var failures: [String] = []

  /// Checks that a change set turns the identities seen into `new` (the query run again), then
  /// sees `new`: the new ones outside the insertions are the old ones outside the deletions, in
  /// order; the modifications are the old positions, outside the deletions, of the objects that
  /// `changed`.
  func take(
    _ new: [ID], deletions: [Int], insertions: [Int], modifications: [Int], changed: Set<ID>, label: String
  ) {
    let deleted = Set(deletions)
    let inserted = Set(insertions)
    let kept = ids.enumerated().filter { !deleted.contains($0.offset) }.map(\.element)
    let keptNew = new.enumerated().filter { !inserted.contains($0.offset) }.map(\.element)
    if kept != keptNew { failures.append("\(label): kept \(kept) but new has \(keptNew)") }
    let expectedModified = ids.enumerated().filter { !deleted.contains($0.offset) && changed.contains($0.element) }
      .map(\.offset)
    if modifications != expectedModified {
      failures.append("\(label): modifications \(modifications), expected \(expectedModified)")
    }
    ids = new
  }
}
