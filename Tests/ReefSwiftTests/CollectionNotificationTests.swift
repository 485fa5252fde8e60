import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import ReefTestSupport
import Testing

/// A shelter with a collection of each kind, for the collection notification tests.
class Shelter: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var tags: List<String>
  @Persisted var addresses: List<Address>
  @Persisted var puppies: List<Puppy>
  @Persisted var labels: MutableSet<String>
  @Persisted var scores: Map<String, Int>
  @Persisted var rooms: Map<String, Address?>
  @Persisted var favorite: Puppy?
}

/// Linked from shelters; its primary key is not its `_id`.
class Puppy: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var age = 0
  @Persisted(originProperty: "puppies") var shelters: LinkingObjects<Shelter>
}

/// Notifications of `List`, `MutableSet`, `Map` and `LinkingObjects`, and the object
/// notifications' key paths through lists and links, their errors, and commits of another
/// process.
@Suite struct CollectionNotificationTests {
  /// The changes a block was told, as strings.
  final class Log {
    var entries: [String] = []
    var updates: ArraySlice<String> { entries.dropFirst() }
  }

  func describe<C>(_ change: ReefCollectionChange<C>, _ show: (C) -> String) -> String {
    switch change {
    case .initial(let collection): "initial \(show(collection))"
    case .update(let collection, let deletions, let insertions, let modifications):
      "update \(show(collection)) d\(deletions) i\(insertions) m\(modifications)"
    case .error(let error): "error \(error)"
    }
  }

  /// A map's change as one string: its keys (`d[b] i[c] m[a,d]`).
  func describe<C>(_ change: ReefMapChange<C>, _ show: (C) -> String) -> String {
    let keys = { (keys: [C.Key]) in "[\(keys.map { "\($0)" }.joined(separator: ","))]" }
    switch change {
    case .initial(let collection): return "initial \(show(collection))"
    case .update(let collection, let deletions, let insertions, let modifications):
      return "update \(show(collection)) d\(keys(deletions)) i\(keys(insertions)) m\(keys(modifications))"
    case .error(let error): return "error \(error)"
    }
  }

  /// A collection of strings as one string.
  static func letters<C: Sequence<String>>(_ collection: C) -> String { collection.joined() }

  func address(_ city: String, street: String? = nil) -> Address {
    let address = Address()
    address.city = city
    address.street = street
    return address
  }

  func puppy(_ id: Int, _ name: String) -> Puppy {
    let puppy = Puppy()
    puppy.id = id
    puppy.name = name
    return puppy
  }

  /// A reef with shelter 1 ("Bea").
  func shelterReef(_ build: (Shelter) -> Void = { _ in }) throws -> (Reef, Shelter, String) {
    let (reef, path) = try openReef()
    let shelter = Shelter()
    shelter.id = 1
    shelter.name = "Bea"
    build(shelter)
    try reef.write { reef.add(shelter) }
    return (reef, shelter, path)
  }

  @Test func aListOfValuesReportsAppendsRemovalsInsertsMovesSwapsAndReplacements() throws {
    let (reef, shelter, _) = try shelterReef { $0.tags.append(objectsIn: ["a", "b", "c", "d"]) }
    let log = Log()
    let tags = shelter.tags
    let token = tags.observe { log.entries.append(self.describe($0, Self.letters)) }
    try reef.write { tags.append("e") }
    try reef.write { tags.remove(at: 1) }
    try reef.write { tags.insert("x", at: 2) }
    try reef.write { tags.move(from: 0, to: 3) }
    try reef.write { tags.swapAt(0, 4) }
    try reef.write { tags[1] = "y" }
    // Two changes in one write: one update.
    try reef.write {
      tags.remove(at: 0)
      tags.append("z")
    }
    // A change elsewhere in the object: no notification.
    try reef.write { shelter.name = "Bo" }
    #expect(
      log.entries == [
        "initial abcd",
        "update abcde d[] i[4] m[]",
        "update acde d[1] i[] m[]",
        "update acxde d[] i[2] m[]",
        "update cxdae d[0] i[3] m[]",
        "update exdac d[0, 4] i[0, 4] m[]",
        "update eydac d[] i[] m[1]",
        "update ydacz d[0] i[4] m[]",
      ])
    token.invalidate()
    try reef.write { tags.append("w") }
    #expect(log.entries.count == 8, "nothing after invalidate")
  }

  @Test func aListOfEmbeddedObjectsReportsChangesInsideElementsThroughKeyPaths() throws {
    let (reef, shelter, _) = try shelterReef {
      $0.addresses.append(objectsIn: [self.address("Oslo"), self.address("Rome"), self.address("Bergen")])
    }
    let all = Log()
    let byCity = Log()
    let byStreet = Log()
    let addresses = shelter.addresses
    let show: (List<Address>) -> String = { $0.map { $0.city ?? "-" }.joined(separator: ",") }
    let tokens = [
      addresses.observe { all.entries.append(self.describe($0, show)) },
      addresses.observe(keyPaths: ["city"]) { byCity.entries.append(self.describe($0, show)) },
      addresses.observe(keyPaths: ["street"]) { byStreet.entries.append(self.describe($0, show)) },
    ]
    try reef.write { addresses[1].city = "Milan" }
    try reef.write { addresses[0].street = "Main St" }
    try reef.write { addresses.append(self.address("Lima")) }
    try reef.write { addresses.move(from: 2, to: 0) }
    // Replaced by an equal value in the watched path: only the unfiltered observer hears it.
    try reef.write { addresses[3] = self.address("Lima", street: "Long Rd") }
    #expect(
      all.updates == [
        "update Oslo,Milan,Bergen d[] i[] m[1]",
        "update Oslo,Milan,Bergen d[] i[] m[0]",
        "update Oslo,Milan,Bergen,Lima d[] i[3] m[]",
        "update Bergen,Oslo,Milan,Lima d[2] i[0] m[]",
        "update Bergen,Oslo,Milan,Lima d[] i[] m[3]",
      ])
    #expect(
      byCity.updates == [
        "update Oslo,Milan,Bergen d[] i[] m[1]",
        "update Oslo,Milan,Bergen,Lima d[] i[3] m[]",
        "update Bergen,Oslo,Milan,Lima d[2] i[0] m[]",
      ])
    #expect(
      byStreet.updates == [
        "update Oslo,Milan,Bergen d[] i[] m[0]",
        "update Oslo,Milan,Bergen,Lima d[] i[3] m[]",
        "update Bergen,Oslo,Milan,Lima d[2] i[0] m[]",
        "update Bergen,Oslo,Milan,Lima d[] i[] m[3]",
      ])
    _ = tokens
  }

  @Test func deletingTheParentReportsEveryEmbeddedElementDeletedThenNothing() throws {
    let (reef, shelter, _) = try shelterReef {
      $0.addresses.append(objectsIn: [self.address("Oslo"), self.address("Rome"), self.address("Bergen")])
      $0.tags.append("a")
    }
    var changes: [String] = []
    let addresses = shelter.addresses
    let token = addresses.observe { change in
      switch change {
      case .initial(let list): changes.append("initial \(list.count)")
      case .update(let list, let deletions, let insertions, let modifications):
        changes.append("update \(list.isInvalidated) d\(deletions) i\(insertions) m\(modifications)")
      case .error(let error): changes.append("error \(error)")
      }
    }
    try reef.write { reef.delete(shelter) }
    // Another shelter with the same key is another object: nothing more.
    try reef.write {
      let other = Shelter()
      other.id = 1
      other.addresses.append(self.address("Lima"))
      reef.add(other)
    }
    #expect(changes == ["initial 3", "update true d[0, 1, 2] i[] m[]"])
    _ = token
  }

  @Test func aListOfLinksReportsLinkedObjectsChangesAndReplacedOrDeletedLinks() throws {
    let (reef, shelter, _) = try shelterReef {
      $0.puppies.append(objectsIn: [self.puppy(1, "Ace"), self.puppy(2, "Bo"), self.puppy(3, "Cy")])
    }
    try reef.write { reef.add(puppy(9, "Zed")) }
    let all = Log()
    let byName = Log()
    let puppies = shelter.puppies
    let show: (List<Puppy>) -> String = { $0.map(\.name).joined(separator: ",") }
    let tokens = [
      puppies.observe { all.entries.append(self.describe($0, show)) },
      puppies.observe(keyPaths: ["name"]) { byName.entries.append(self.describe($0, show)) },
    ]
    let bo = reef.object(ofType: Puppy.self, forPrimaryKey: 2)!
    let cy = reef.object(ofType: Puppy.self, forPrimaryKey: 3)!
    try reef.write { bo.age = 4 }
    try reef.write { cy.name = "Cyd" }
    // A puppy not in the list: nothing.
    try reef.write { reef.object(ofType: Puppy.self, forPrimaryKey: 9)!.name = "Zee" }
    try reef.write { reef.delete(reef.object(ofType: Puppy.self, forPrimaryKey: 1)!) }
    try reef.write { puppies[0] = reef.object(ofType: Puppy.self, forPrimaryKey: 9)! }
    // The same object twice; then a change to it modifies both indices.
    try reef.write { puppies.append(cy) }
    try reef.write { cy.name = "Cyril" }
    #expect(
      all.updates == [
        "update Ace,Bo,Cy d[] i[] m[1]",
        "update Ace,Bo,Cyd d[] i[] m[2]",
        "update Bo,Cyd d[0] i[] m[]",
        "update Zee,Cyd d[] i[] m[0]",
        "update Zee,Cyd,Cyd d[] i[2] m[]",
        "update Zee,Cyril,Cyril d[] i[] m[1, 2]",
      ])
    #expect(
      byName.updates == [
        "update Ace,Bo,Cyd d[] i[] m[2]",
        "update Bo,Cyd d[0] i[] m[]",
        "update Zee,Cyd d[] i[] m[0]",
        "update Zee,Cyd,Cyd d[] i[2] m[]",
        "update Zee,Cyril,Cyril d[] i[] m[1, 2]",
      ])
    _ = tokens
  }

  @Test func aMutableSetReportsInsertionsAndRemovalsInStoredOrder() throws {
    let (reef, shelter, _) = try shelterReef { $0.labels.insert(objectsIn: ["a", "b", "c"]) }
    let log = Log()
    let labels = shelter.labels
    let token = labels.observe { log.entries.append(self.describe($0, Self.letters)) }
    try reef.write { labels.insert("d") }
    try reef.write { labels.remove("b") }
    // Already there: nothing changes, nothing is told.
    try reef.write { labels.insert("a") }
    try reef.write {
      labels.remove("a")
      labels.insert("e")
    }
    #expect(
      log.entries == [
        "initial abc", "update abcd d[] i[3] m[]", "update acd d[1] i[] m[]", "update cde d[0] i[2] m[]",
      ])
    _ = token
  }

  @Test func aMapReportsKeysAddedRemovedAndChangedInKeyOrder() throws {
    let (reef, shelter, _) = try shelterReef {
      $0.scores["a"] = 1
      $0.scores["b"] = 2
    }
    let log = Log()
    let scores = shelter.scores
    let show: (Map<String, Int>) -> String = { $0.map { "\($0.key)=\($0.value)" }.joined(separator: ",") }
    let token = scores.observe { log.entries.append(self.describe($0, show)) }
    try reef.write { scores["c"] = 3 }
    try reef.write { scores["a"] = 10 }
    try reef.write { scores["b"] = nil }
    // Set to the value it has: nothing.
    try reef.write { scores["c"] = 3 }
    try reef.write {
      scores["c"] = 30
      scores["d"] = 4
      scores["a"] = nil
    }
    #expect(
      log.entries == [
        "initial a=1,b=2",
        "update a=1,b=2,c=3 d[] i[c] m[]",
        "update a=10,b=2,c=3 d[] i[] m[a]",
        "update a=10,c=3 d[b] i[] m[]",
        "update c=30,d=4 d[a] i[d] m[c]",
      ])
    _ = token
  }

  @Test func aMapOfEmbeddedObjectsReportsChangesInsideValuesThroughKeyPaths() throws {
    let (reef, shelter, _) = try shelterReef {
      $0.rooms["a"] = self.address("Oslo")
      $0.rooms["b"] = self.address("Rome")
    }
    let all = Log()
    let byCity = Log()
    let rooms = shelter.rooms
    let show: (Map<String, Address?>) -> String = {
      $0.map { "\($0.key)=\($0.value?.city ?? "-")" }.joined(separator: ",")
    }
    let tokens = [
      rooms.observe { all.entries.append(self.describe($0, show)) },
      rooms.observe(keyPaths: ["city"]) { byCity.entries.append(self.describe($0, show)) },
    ]
    try reef.write { rooms["b"]!!.street = "Via Roma" }
    try reef.write { rooms["a"]!!.city = "Bergen" }
    try reef.write { rooms["c"] = self.address("Lima") }
    #expect(
      all.updates == [
        "update a=Oslo,b=Rome d[] i[] m[b]", "update a=Bergen,b=Rome d[] i[] m[a]",
        "update a=Bergen,b=Rome,c=Lima d[] i[c] m[]",
      ])
    #expect(byCity.updates == ["update a=Bergen,b=Rome d[] i[] m[a]", "update a=Bergen,b=Rome,c=Lima d[] i[c] m[]"])
    _ = tokens
  }

  @Test func linkingObjectsReportObjectsThatStartAndStopLinking() throws {
    let (reef, first, _) = try shelterReef()
    let second = Shelter()
    second.id = 2
    second.name = "Dan"
    try reef.write {
      reef.add(second)
      reef.add(puppy(1, "Ace"))
    }
    let ace = reef.object(ofType: Puppy.self, forPrimaryKey: 1)!
    let all = Log()
    let byTags = Log()
    let show: (LinkingObjects<Shelter>) -> String = { $0.map(\.name).joined(separator: ",") }
    let tokens = [
      ace.shelters.observe { all.entries.append(self.describe($0, show)) },
      ace.shelters.observe(keyPaths: ["tags"]) { byTags.entries.append(self.describe($0, show)) },
    ]
    try reef.write { first.puppies.append(ace) }
    try reef.write { second.puppies.append(ace) }
    try reef.write { first.name = "Bea2" }
    // A shelter that does not link here: nothing.
    try reef.write {
      let third = Shelter()
      third.id = 3
      reef.add(third)
    }
    try reef.write { first.puppies.removeAll() }
    try reef.write { reef.delete(ace) }
    #expect(
      all.updates == [
        "update Bea d[] i[0] m[]",
        "update Bea,Dan d[] i[1] m[]",
        "update Bea2,Dan d[] i[] m[0]",
        "update Dan d[0] i[] m[]",
        "update  d[0] i[] m[]",
      ])
    #expect(
      byTags.updates == [
        "update Bea d[] i[0] m[]",
        "update Bea,Dan d[] i[1] m[]",
        "update Dan d[0] i[] m[]",
        "update  d[0] i[] m[]",
      ])
    _ = tokens
  }

  @Test func commitsOfAnotherThreadSeenAtOneRefreshMakeOneUpdate() throws {
    let (reef, shelter, path) = try shelterReef { $0.tags.append(objectsIn: ["a", "b"]) }
    let log = Log()
    let token = shelter.tags.observe { log.entries.append(self.describe($0, Self.letters)) }
    let written = DispatchSemaphore(value: 0)
    let thread = Thread {
      let other = try! Reef(configuration: Reef.Configuration(fileURL: URL(fileURLWithPath: path)))
      let tags = other.object(ofType: Shelter.self, forPrimaryKey: 1)!.tags
      try! other.write { tags.append("c") }
      try! other.write { tags.remove(at: 0) }
      try! other.write { tags[1] = "C" }
      written.signal()
    }
    thread.start()
    written.wait()
    #expect(log.entries == ["initial ab"])
    reef.refresh()
    // Net of the three: "a" went, "C" came ("c" changed after it was inserted is an insertion).
    #expect(log.entries == ["initial ab", "update bC d[0] i[1] m[]"])
    _ = token
  }
}

extension CollectionNotificationTests {
  /// An object observer's changes as strings: the names of the properties that changed.
  func observeNames<T: Object>(_ object: T, keyPaths: [String]?, into log: Log) -> NotificationToken {
    object.observe(keyPaths: keyPaths) { change in
      switch change {
      case .change(_, let properties): log.entries.append(properties.map(\.name).joined(separator: ","))
      case .deleted: log.entries.append("deleted")
      case .error(let error as ReefError): log.entries.append("error \(error.kind.rawValue)")
      case .error(let error): log.entries.append("error \(error)")
      }
    }
  }

  @Test func anObjectsKeyPathsReachIntoListsOfEmbeddedObjectsAndThroughLinks() throws {
    let (reef, shelter, _) = try shelterReef {
      $0.addresses.append(objectsIn: [self.address("Oslo"), self.address("Rome")])
      $0.favorite = self.puppy(1, "Ace")
      $0.puppies.append(self.puppy(2, "Bo"))
    }
    try reef.write { reef.add(puppy(3, "Cy")) }
    let byCity = Log()
    let byFavoriteName = Log()
    let byPuppyAge = Log()
    let tokens = [
      observeNames(shelter, keyPaths: ["addresses.city"], into: byCity),
      observeNames(shelter, keyPaths: ["favorite.name"], into: byFavoriteName),
      observeNames(shelter, keyPaths: ["puppies.age"], into: byPuppyAge),
    ]
    let ace = reef.object(ofType: Puppy.self, forPrimaryKey: 1)!
    let bo = reef.object(ofType: Puppy.self, forPrimaryKey: 2)!
    try reef.write { shelter.addresses[1].city = "Milan" }
    try reef.write { shelter.addresses[1].street = "Via Roma" }
    try reef.write { ace.name = "Ace2" }
    try reef.write { ace.age = 3 }
    try reef.write { bo.age = 5 }
    try reef.write { shelter.favorite = reef.object(ofType: Puppy.self, forPrimaryKey: 3)! }
    // The old favorite is no longer watched.
    try reef.write { ace.name = "Ace3" }
    #expect(byCity.entries == ["addresses"])
    #expect(byFavoriteName.entries == ["favorite", "favorite"])
    #expect(byPuppyAge.entries == ["puppies"])
    _ = tokens
  }

  @Test func aDocumentThatNoLongerFitsIsReportedAsAnErrorAndEndsTheNotifications() throws {
    let (reef, shelter, _) = try shelterReef { $0.tags.append("a") }
    let objectLog = Log()
    let objectToken = observeNames(shelter, keyPaths: nil, into: objectLog)
    let listLog = Log()
    let listToken = shelter.tags.observe { change in
      if case .error(let error as ReefError) = change { listLog.entries.append("error \(error.kind.rawValue)") }
    }
    // Another program writes an int32 where the object layer writes an int64: it reads, and
    // is a change.
    try reef.write { reef.add(puppy(1, "Ace")) }
    let puppyLog = Log()
    let puppyToken = observeNames(reef.object(ofType: Puppy.self, forPrimaryKey: 1)!, keyPaths: nil, into: puppyLog)
    try reef.store.collection("Puppy").updateOne(["id": 1], ["$set": ["age": .int32(5)]])
    reef.refresh()
    #expect(puppyLog.entries == ["age"])
    // A link to an object that is not there is no element, and no error.
    let puppiesLog = Log()
    let puppiesToken = shelter.puppies.observe { puppiesLog.entries.append(self.describe($0) { "\($0.count)" }) }
    try reef.store.collection("Shelter").updateOne(["id": 1], ["$push": ["puppies": 42]])
    reef.refresh()
    #expect(puppiesLog.entries == ["initial 0"])
    // Another program writes the document without the object layer.
    try reef.store.collection("Shelter").updateOne(["id": 1], ["$set": ["name": 7, "tags": "none"]])
    reef.refresh()
    try reef.store.collection("Shelter").updateOne(["id": 1], ["$set": ["name": "Bea", "tags": ["b"]]])
    reef.refresh()
    #expect(objectLog.entries == ["puppies", "error documentMismatch"])
    #expect(listLog.entries == ["error documentMismatch"])
    _ = (objectToken, listToken, puppyToken, puppiesToken)
  }

  @Test func anotherProcessesCommitsAreDeliveredExactlyAfterARefresh() throws {
    let (reef, first, path) = try shelterReef { $0.tags.append(objectsIn: ["x", "y"]) }
    let second = Shelter()
    second.id = 2
    second.name = "Dan"
    try reef.write { reef.add(second) }
    let results = Log()
    let firstLog = Log()
    let secondLog = Log()
    let tags = Log()
    let tokens = [
      reef.objects(Shelter.self).sorted(byKeyPath: "name").observe {
        results.entries.append(self.describe($0) { $0.map(\.name).joined(separator: ",") })
      },
      observeNames(first, keyPaths: nil, into: firstLog),
      observeNames(second, keyPaths: nil, into: secondLog),
      first.tags.observe { tags.entries.append(self.describe($0, Self.letters)) },
    ]
    // Three commits of another process: a shelter in, shelter 1 renamed and its list grown,
    // shelter 2 out.
    let status = try TestProcess.run(
      TestProcess.executable("reef-crash-writer"),
      [
        "--apply", path,
        #"{"c": "Shelter", "insert": [{"_id": {"$oid": "65a000000000000000000003"}, "id": {"$numberLong": "3"}, "name": "Cleo", "tags": []}]}"#,
        #"{"c": "Shelter", "update": [{"q": {"id": 1}, "u": {"$set": {"name": "Alma"}, "$push": {"tags": "z"}}}]}"#,
        #"{"c": "Shelter", "delete": [{"id": 2}]}"#,
      ])
    #expect(status == 0, "the writer exited with status \(status)")
    #expect(results.entries == ["initial Bea,Dan"], "nothing before the refresh")
    reef.refresh()
    #expect(results.entries == ["initial Bea,Dan", "update Alma,Cleo d[1] i[1] m[0]"])
    #expect(firstLog.entries == ["name,tags"])
    #expect(secondLog.entries == ["deleted"])
    #expect(tags.entries == ["initial xy", "update xyz d[] i[2] m[]"])
    _ = tokens
  }
}
