import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

// `Results` observers that follow changed objects one by one (ResultsTracker), attacked: sorts
// through arrays and mixed types, several keys, Int primary keys, coalesced batches, silenced
// writes, writes of other `Reef`s and of the store itself, and queries that fail.

class TrackSpot: EmbeddedObject {
  @Persisted var n: Int?
  @Persisted var s: String?
}

class TrackItem: Object {
  @Persisted(primaryKey: true) var _id = 0
  @Persisted var group = 0
  @Persisted var score: Double = 0
  @Persisted var label: String?
  @Persisted var mixed: AnyReefValue
  @Persisted var spots: List<TrackSpot>
  @Persisted var tags: List<Int>
}

@Suite struct ResultsTrackerEdgeCaseTests {
  typealias Generator = IncrementalResultsTests.Generator

  /// One observation: the primary keys it last saw, and what went wrong.
  typealias Observed = ObservedIDs<Int>

  static let types: [ObjectBase.Type] = [TrackItem.self, TrackSpot.self]
  nonisolated(unsafe) static let mixedValues: [AnyReefValue] = [
    .none, .int(1), .double(1.0), .decimal128(Decimal128("1")), .string("1"), .int(2), .double(1.5),
    .decimal128(Decimal128("1.5")), .bool(true), .string("a"), .int(-3), .double(-0.0), .int(0),
  ]
  static let labels: [String?] = [nil, "apple", "banana", "berry", "cherry", ""]

  /// An `_id` as the `Int` primary key it stores.
  static func intID(_ id: BSON) -> Int {
    switch id {
    case .int32(let value): Int(value)
    case .int64(let value): Int(value)
    case .double(let value): Int(value)
    default: -1
    }
  }

  /// Every stored document of the type, by primary key.
  static func documents(_ reef: Reef) throws -> [Int: Document] {
    let all = try reef.store.read { try $0.collection("TrackItem").find().toArray() }
    return Dictionary(uniqueKeysWithValues: all.map { (intID($0["_id"] ?? .null), $0) })
  }

  static func randomize(_ item: TrackItem, _ generator: inout Generator) {
    switch generator.next(6) {
    case 0: item.group = generator.next(4)
    case 1: item.score = Double(generator.next(8)) / 4
    case 2: item.label = labels[generator.next(labels.count)]
    case 3: item.mixed = mixedValues[generator.next(mixedValues.count)]
    case 4:
      switch generator.next(3) {
      case 0 where !item.spots.isEmpty: item.spots.remove(at: generator.next(item.spots.count))
      case 1: item.spots.removeAll()
      default:
        let spot = TrackSpot()
        spot.n = generator.next(5) == 0 ? nil : generator.next(6)
        spot.s = labels[generator.next(labels.count)]
        item.spots.append(spot)
      }
    default:
      if generator.next(3) == 0 {
        item.tags.removeAll()
      } else {
        item.tags.append(generator.next(10))
      }
    }
  }

  static func newItem(_ id: Int, _ generator: inout Generator) -> TrackItem {
    let item = TrackItem()
    item._id = id
    for _ in 0..<4 { randomize(item, &generator) }
    return item
  }

  /// Checks a change set against the query run again (`new`), as IncrementalResultsTests does.
  static func check(
    _ observed: Observed, new: [Int], deletions: [Int], insertions: [Int], modifications: [Int],
    changed: Set<Int>, label: String
  ) {
    if deletions.contains(where: { $0 >= observed.ids.count }) || insertions.contains(where: { $0 >= new.count }) {
      observed.failures.append("\(label): index out of range d\(deletions) i\(insertions)")
    }
    observed.take(
      new, deletions: deletions, insertions: insertions, modifications: modifications, changed: changed, label: label)
  }

  @Test(arguments: [11, 12, 13])
  func randomCommitsOverMixedTypesAndArraysGiveTheQueryRunAgain(seed: UInt64) throws {
    let (reef, path) = try openReef("track", types: ResultsTrackerEdgeCaseTests.types)
    var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: path))
    configuration.objectTypes = ResultsTrackerEdgeCaseTests.types
    // Another Reef of the file is another thread's (a thread has one Reef per file).
    let worker = WorkerThread()
    defer { worker.stop() }
    let other = try worker.run { [configuration] in try Reef(configuration: configuration) }
    var generator = Generator(state: seed)
    var nextID = 0
    try reef.write {
      for _ in 0..<120 {
        reef.add(ResultsTrackerEdgeCaseTests.newItem(nextID * 7 % 211 - 90, &generator))
        nextID += 1
      }
    }
    let all = reef.objects(TrackItem.self)
    let queries: [(String, Results<TrackItem>)] = [
      ("all", all),
      ("mixed", all.sorted(byKeyPath: "mixed")),
      (
        "mixed desc, score",
        all.sorted(by: [SortDescriptor(keyPath: "mixed", ascending: false), SortDescriptor(keyPath: "score")])
      ),
      ("spots.n", all.sorted(byKeyPath: "spots.n")),
      ("spots.n desc", all.sorted(byKeyPath: "spots.n", ascending: false)),
      ("spots.s, spots.n", all.sorted(by: [SortDescriptor(keyPath: "spots.s"), SortDescriptor(keyPath: "spots.n")])),
      ("tags desc in", all.filter("group IN %@", [0, 1]).sorted(byKeyPath: "tags", ascending: false)),
      ("label regex", all.filter(document: ["label": ["$regex": "^b"]]).sorted(byKeyPath: "label", ascending: false)),
      (
        "score, label",
        all.filter("score > 0.3").sorted(by: [SortDescriptor(keyPath: "score"), SortDescriptor(keyPath: "label")])
      ),
      ("label nil", all.filter("label == nil").sorted(byKeyPath: "group")),
      ("distinct", all.distinct(by: ["group"]).sorted(byKeyPath: "score")),
    ]
    var changed: Set<Int> = []
    var before: [Int: Document] = [:]
    var observations: [(String, Observed, NotificationToken)] = []
    for (label, results) in queries {
      let observed = Observed()
      let token = results.observe { change in
        switch change {
        case .initial(let results): observed.ids = results.map(\._id)
        case .update(let results, let deletions, let insertions, let modifications):
          observed.updates += 1
          let now = (try? ResultsTrackerEdgeCaseTests.documents(reef)) ?? [:]
          let modified = changed.filter { now[$0] != nil && before[$0] != nil && now[$0] != before[$0] }
          ResultsTrackerEdgeCaseTests.check(
            observed, new: results.map(\._id), deletions: deletions, insertions: insertions,
            modifications: modifications, changed: modified, label: label)
        case .error(let error): observed.failures.append("\(label): \(error)")
        }
      }
      observations.append((label, observed, token))
    }

    for round in 0..<36 {
      before = try ResultsTrackerEdgeCaseTests.documents(reef)
      changed = []
      let count =
        generator.next(8) == 0
        ? 20 + generator.next(30) : generator.next(3) == 0 ? 6 + generator.next(10) : 1 + generator.next(5)
      // Some rounds are written by another Reef in several commits, taken in by one refresh.
      let writer = round % 5 == 3 ? other : reef
      let commits = writer === other ? 1 + generator.next(3) : 1
      let silenced = round % 7 == 5 ? observations[generator.next(observations.count)] : nil
      for commit in 0..<commits {
        let body = {
          let items = Array(writer.objects(TrackItem.self))
          for _ in 0..<(count / commits + 1) {
            let target = items[generator.next(items.count)]
            guard !target.isInvalidated else { continue }
            let id = target._id
            switch generator.next(8) {
            case 0:
              writer.add(ResultsTrackerEdgeCaseTests.newItem(nextID * 7 % 211 - 90 + 211 * (nextID / 211), &generator))
              nextID += 1
              changed.insert(nextID)
            case 1:
              changed.insert(id)
              writer.delete(target)
            case 2:
              // Deleted and added again with the same primary key.
              changed.insert(id)
              writer.delete(target)
              let again = ResultsTrackerEdgeCaseTests.newItem(id, &generator)
              again.score = Double(1000 + round * 100 + commit)
              writer.add(again)
            case 3:
              // Changed, then changed back.
              changed.insert(id)
              let group = target.group
              target.group = group + 1
              target.group = group
            case 4:
              // Changed, then deleted.
              changed.insert(id)
              ResultsTrackerEdgeCaseTests.randomize(target, &generator)
              writer.delete(target)
            default:
              changed.insert(id)
              ResultsTrackerEdgeCaseTests.randomize(target, &generator)
              if generator.next(2) == 0 { ResultsTrackerEdgeCaseTests.randomize(target, &generator) }
            }
          }
        }
        if let silenced, writer === reef {
          try reef.write(withoutNotifying: [silenced.2], body)
        } else if writer === other {
          try worker.run { try other.write(body) }
        } else {
          try writer.write(body)
        }
      }
      if writer === other { reef.refresh() }
      for (label, observed, _) in observations {
        let fresh = queries.first { $0.0 == label }!.1.map(\._id)
        if let silenced, silenced.0 == label, writer === reef {
          observed.ids = fresh  // told nothing, by request
        }
        #expect(observed.ids == fresh, "round \(round) \(label): the observer's results are the query's")
        observed.ids = fresh
      }
    }
    for (label, observed, _) in observations {
      #expect(observed.failures == [], "\(label)")
      #expect(observed.updates > 3, "\(label) saw \(observed.updates) updates")
    }
  }

  /// Forty `a`s then "ba": `^(a|aa)+b$` runs past its match limit over it.
  static let catastrophic = String(repeating: "a", count: 40) + "ba"

  @Test func afterAnErrorTheNextChangeSetStartsFromWhatTheObserverLastSaw() throws {
    let (reef, _) = try openReef("error", types: [Dog.self])
    try reef.write {
      for (age, name) in ["ab", "aab", "aaab"].enumerated() {
        let dog = Dog()
        dog.name = name
        dog.age = age
        reef.add(dog)
      }
    }
    let results = reef.objects(Dog.self).filter(document: ["name": ["$regex": "^(a|aa)+b$"]]).sorted(
      byKeyPath: "age")
    let observed = Observed()
    var errors = 0
    let token = results.observe { change in
      switch change {
      case .initial(let results): observed.ids = results.map(\.age)
      case .update(let results, let deletions, let insertions, let modifications):
        ResultsTrackerEdgeCaseTests.check(
          observed, new: results.map(\.age), deletions: deletions, insertions: insertions,
          modifications: modifications, changed: [], label: "update")
        _ = modifications
      case .error: errors += 1
      }
    }
    // One commit moves "ab" to the end and makes "aab" fail the query: an error.
    try reef.write {
      reef.objects(Dog.self).filter("name == 'ab'").first!.age = 10
      reef.objects(Dog.self).filter("name == 'aab'").first!.name = ResultsTrackerEdgeCaseTests.catastrophic
    }
    #expect(errors == 1)
    // The next puts the name back: the change set goes from the results last seen.
    try reef.write {
      reef.objects(Dog.self).filter("name == %@", ResultsTrackerEdgeCaseTests.catastrophic).first!.name = "aab"
    }
    let ages = results.map(\.age)
    #expect(ages == [1, 2, 10])
    #expect(observed.ids == ages, "the observer's results are the query's")
    #expect(observed.failures.filter { !$0.contains("modifications") } == [])
    _ = token
  }

  @Test func anObjectDeletedAndAddedAgainInTwoCommitsOfOneRefreshIsModified() throws {
    let (reef, path) = try openReef("readd", types: ResultsTrackerEdgeCaseTests.types)
    try reef.write {
      for id in 0..<3 {
        let item = TrackItem()
        item._id = id
        item.score = Double(id)
        reef.add(item)
      }
    }
    var log: [String] = []
    let token = reef.objects(TrackItem.self).sorted(byKeyPath: "score").observe { change in
      if case .update(_, let deletions, let insertions, let modifications) = change {
        log.append("d\(deletions) i\(insertions) m\(modifications)")
      }
    }
    var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: path))
    configuration.objectTypes = ResultsTrackerEdgeCaseTests.types
    // Another thread's Reef writes the two commits.
    let error = onAnotherThread { [configuration] in
      let other = try Reef(configuration: configuration)
      try other.write { other.delete(other.object(ofType: TrackItem.self, forPrimaryKey: 1)!) }
      try other.write {
        let item = TrackItem()
        item._id = 1
        item.score = 1
        item.label = "new"
        other.add(item)
      }
    }
    #expect(error == nil)
    reef.refresh()
    // As when both happen in one commit: the object at 1 is another one now.
    #expect(log == ["d[] i[] m[1]"])
    try reef.write {
      reef.delete(reef.object(ofType: TrackItem.self, forPrimaryKey: 1)!)
      let item = TrackItem()
      item._id = 1
      item.score = 1
      item.label = "newer"
      reef.add(item)
    }
    #expect(log == ["d[] i[] m[1]", "d[] i[] m[1]"])
    _ = token
  }

  @Test func aStoreWriteNamingAnIDOfAnotherNumberTypeIsFollowed() throws {
    let (reef, _) = try openReef("types", types: ResultsTrackerEdgeCaseTests.types)
    try reef.write {
      for id in 0..<5 {
        let item = TrackItem()
        item._id = id
        item.score = Double(id)
        reef.add(item)
      }
    }
    let results = reef.objects(TrackItem.self).sorted(byKeyPath: "score")
    let observed = Observed()
    let token = results.observe { change in
      switch change {
      case .initial(let results): observed.ids = results.map(\._id)
      case .update(let results, let deletions, let insertions, let modifications):
        ResultsTrackerEdgeCaseTests.check(
          observed, new: results.map(\._id), deletions: deletions, insertions: insertions,
          modifications: modifications, changed: [], label: "update")
      case .error(let error): observed.failures.append("\(error)")
      }
    }
    // The store's own calls, with `_id`s equal to the stored ones but of other types.
    try reef.store.write { transaction in
      let items = transaction.collection("TrackItem")
      try items.deleteDocument(forID: .double(1))
      var replaced = DocumentBuilder()
      for element in try items.document(forID: .int32(3))! {
        replaced.append(element.key, element.key == "score" ? .double(-1) : element.value)
      }
      try items.replaceDocument(forID: .decimal128(Decimal128("3")), with: replaced.document)
    }
    reef.refresh()
    try reef.store.write { transaction in
      _ = try transaction.collection("TrackItem").updateMany(["_id": 3], ["$set": ["score": 9.0]])
    }
    reef.refresh()
    #expect(results.map(\._id) == [0, 2, 4, 3])
    #expect(observed.ids == results.map(\._id), "the observer's results are the query's")
    #expect(observed.failures.filter { !$0.contains("modifications") } == [])
    _ = token
  }
}
