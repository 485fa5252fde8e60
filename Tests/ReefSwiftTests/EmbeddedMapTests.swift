import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// A top-level object with a map of embedded objects (each with an embedded object that embeds
/// another, and a list of them).
class Estate: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var sites: Map<String, Building?>
}

/// A map of embedded objects whose values are not optional, which Realm refuses.
class RequiredSites: Object {
  @Persisted var sites: Map<String, Doorbell>
}

/// An embedded object that reaches its parent through a map.
class Plot: EmbeddedObject {
  @Persisted var acres = 0
  @Persisted(originProperty: "plots") var manor: LinkingObjects<Manor>
}

class Manor: Object {
  @Persisted var name = ""
  @Persisted var plots: Map<String, Plot?>
}

/// An embedded object with links, kept in a map.
class Kennel: EmbeddedObject {
  @Persisted var keeper: Dog?
  @Persisted var residents: List<Dog>
}

class Breeder: Object {
  @Persisted var name = ""
  @Persisted var kennels: Map<String, Kennel?>
  @Persisted var favourites: Map<String, Dog?>
}

/// An embedded object with a map of embedded objects, in a list.
class Wing: EmbeddedObject {
  @Persisted var name = ""
  @Persisted var rooms: Map<String, Doorbell?>
}

class Palace: Object {
  @Persisted var wings: List<Wing>
}

/// A map of embedded objects that contain their own type, which Realm refuses.
class LoopedRoom: EmbeddedObject {
  @Persisted var annexes: Map<String, LoopedRoom?>
}

class LoopedHouse: Object {
  @Persisted var room: LoopedRoom?
}

/// An estate with primary key `id` and a building per key.
func makeEstate(_ id: Int, _ sites: [(String, Building)]) -> Estate {
  let estate = Estate()
  estate.id = id
  for (key, building) in sites { estate.sites[key] = building }
  return estate
}

/// The stored document of the estate with primary key `id`.
func storedEstate(_ reef: Reef, _ id: Int) throws -> Document? {
  try reef.store.read { try $0.collection("Estate").findOne(["id": .int64(Int64(id))]) }
}

/// The keys of a stored estate's `sites`, in order.
func storedKeys(_ document: Document?) -> [String] {
  guard case .document(let sites)? = document?["sites"] else { return [] }
  return sites.map(\.key)
}

@Suite struct EmbeddedMapTests {
  @Test func aMapOfEmbeddedObjectsIsStoredInlineAsSubdocumentsAtTheirKeys() throws {
    let (reef, _) = try openReef()
    let paris = makeBuilding("Paris", flat: 3, tone: "ring")
    let estate = makeEstate(1, [("home", paris), ("work", makeBuilding("Rome"))])
    try reef.write { reef.add(estate) }
    let stored = try #require(try storedEstate(reef, 1))
    #expect(storedKeys(stored) == ["home", "work"])
    #expect(stored["sites.home.city"] == "Paris")
    #expect(stored["sites.home.flat.number"] == .int64(3))
    #expect(stored["sites.home.flat.doorbell.tone"] == "ring")
    #expect(stored["sites.work.city"] == "Rome")
    #expect(paris.reef != nil, "the added embedded object is managed at its key")
    #expect(paris.city == "Paris" && paris.flat?.doorbell?.tone == "ring")
    #expect(estate.sites["home"]??.city == "Paris")
    #expect(estate.sites["work"]??.flat?.number == 1)
    #expect(estate.sites["nowhere"] == nil)
    #expect(estate.sites.keys == ["home", "work"])
    #expect(paris.parent?.isEqual(to: estate) == true)
    #expect(paris.isEqual(to: estate.sites["home"]!))
    #expect(!paris.isEqual(to: estate.sites["work"]!))
  }

  @Test func anAccessorWritesItsObjectInPlace() throws {
    let (reef, _) = try openReef()
    let estate = makeEstate(1, [("home", makeBuilding("Paris")), ("work", makeBuilding("Rome"))])
    try reef.write { reef.add(estate) }
    let home = try #require(estate.sites["home"] ?? nil)
    try reef.write {
      home.city = "Lyon"
      home.flat?.doorbell?.tone = "buzz"
      home.flats.append(Flat())
    }
    let stored = try #require(try storedEstate(reef, 1))
    #expect(stored["sites.home.city"] == "Lyon")
    #expect(stored["sites.home.flat.doorbell.tone"] == "buzz")
    #expect(stored["sites.work.city"] == "Rome")
    #expect(estate.sites["home"]??.flats.count == 1)
    #expect(storedKeys(stored) == ["home", "work"])
  }

  @Test func settingAKeyDeletesAndInvalidatesTheObjectThatWasThere() throws {
    let (reef, _) = try openReef()
    let estate = makeEstate(1, [("home", makeBuilding("Paris")), ("work", makeBuilding("Rome"))])
    try reef.write { reef.add(estate) }
    let old = try #require(estate.sites["home"] ?? nil)
    let oldFlat = try #require(old.flat)
    let oldDoorbell = try #require(oldFlat.doorbell)
    let work = try #require(estate.sites["work"] ?? nil)
    let oslo = makeBuilding("Oslo", flat: 9)
    try reef.write { estate.sites["home"] = oslo }
    #expect(old.isInvalidated)
    #expect(oldFlat.isInvalidated, "embedded objects of the overwritten one go too")
    #expect(oldDoorbell.isInvalidated)
    #expect(!work.isInvalidated && work.city == "Rome", "the other keys' objects stay")
    #expect(!oslo.isInvalidated && oslo.city == "Oslo" && oslo.flat?.number == 9)
    #expect(estate.sites["home"]??.city == "Oslo")
    #expect(try storedEstate(reef, 1)?["sites.home.city"] == "Oslo")
    #expect(storedKeys(try storedEstate(reef, 1)) == ["home", "work"], "a key set again keeps its place")
  }

  @Test func removingAKeyDeletesAndInvalidatesItsObject() throws {
    let (reef, _) = try openReef()
    let estate = makeEstate(
      1, [("a", makeBuilding("A")), ("b", makeBuilding("B")), ("c", makeBuilding("C")), ("d", makeBuilding("D"))])
    try reef.write { reef.add(estate) }
    let a = try #require(estate.sites["a"] ?? nil)
    let b = try #require(estate.sites["b"] ?? nil)
    let c = try #require(estate.sites["c"] ?? nil)
    try reef.write {
      estate.sites.removeObject(for: "a")
      estate.sites["b"] = nil
    }
    #expect(a.isInvalidated && b.isInvalidated)
    #expect(!c.isInvalidated && c.city == "C")
    #expect(storedKeys(try storedEstate(reef, 1)) == ["c", "d"])
    try reef.write { estate.sites.removeAll() }
    #expect(c.isInvalidated)
    #expect(try storedEstate(reef, 1)?["sites"] == .document([:]))
  }

  @Test func assigningAWholeMapInvalidatesEveryObjectOfTheOldOne() throws {
    let (reef, _) = try openReef()
    let estate = makeEstate(1, [("a", makeBuilding("A"))])
    try reef.write { reef.add(estate) }
    let a = try #require(estate.sites["a"] ?? nil)
    let replacement = Map<String, Building?>()
    replacement["z"] = makeBuilding("Z")
    try reef.write { estate.sites = replacement }
    #expect(a.isInvalidated)
    #expect(estate.sites.keys == ["z"])
    #expect(estate.sites["z"]??.city == "Z")
  }

  @Test func deletingAnObjectOfAMapLeavesItsKeyWithNil() throws {
    let (reef, _) = try openReef()
    let estate = makeEstate(1, [("a", makeBuilding("A")), ("b", makeBuilding("B"))])
    try reef.write { reef.add(estate) }
    let a = try #require(estate.sites["a"] ?? nil)
    let b = try #require(estate.sites["b"] ?? nil)
    try reef.write { reef.delete(a) }
    #expect(a.isInvalidated)
    #expect(!b.isInvalidated && b.city == "B")
    #expect(estate.sites.keys == ["a", "b"], "as in Realm, the key stays")
    #expect(estate.sites["a"].map { $0 == nil } == true, "the key holds nil")
    #expect(try storedEstate(reef, 1)?["sites.a"] == .null)
  }

  @Test func updatingTheWholeObjectInvalidatesTheMapsObjects() throws {
    let (reef, _) = try openReef()
    let estate = makeEstate(1, [("a", makeBuilding("A"))])
    try reef.write { reef.add(estate) }
    let a = try #require(estate.sites["a"] ?? nil)
    try reef.write { reef.add(makeEstate(1, [("a", makeBuilding("A2"))]), update: .all) }
    #expect(a.isInvalidated)
    #expect(estate.sites["a"]??.city == "A2")
  }

  @Test func anObjectOfAMapReachesItsParentThroughLinkingObjects() throws {
    let (reef, _) = try openReef()
    let manor = Manor()
    manor.name = "Pemberley"
    let plot = Plot()
    plot.acres = 40
    manor.plots["north"] = plot
    try reef.write { reef.add(manor) }
    #expect(plot.manor.count == 1)
    #expect(plot.manor.first?.name == "Pemberley")
    #expect(manor.plots["north"]??.manor.first?.isEqual(to: manor) == true)
  }

  @Test func deletingALinkedObjectClearsItsLinksInMapsAndInTheirObjects() throws {
    let (reef, _) = try openReef()
    let rex = Dog()
    rex.name = "Rex"
    let spot = Dog()
    spot.name = "Spot"
    let breeder = Breeder()
    breeder.name = "Ann"
    let kennel = Kennel()
    kennel.keeper = rex
    kennel.residents.append(objectsIn: [rex, spot])
    breeder.kennels["north"] = kennel
    breeder.favourites["best"] = rex
    breeder.favourites["other"] = spot
    try reef.write { reef.add(breeder) }
    let spotKey = try #require(try reef.store.read { try $0.collection("Dog").findOne(["name": "Spot"]) }?["_id"])
    try reef.write { reef.delete(rex) }
    let stored = try #require(try reef.store.read { try $0.collection("Breeder").findOne() })
    #expect(stored["kennels.north.keeper"] == .null)
    #expect(stored["kennels.north.residents"] == .array([spotKey]))
    #expect(stored["favourites.best"] == .null, "the key stays, with null")
    #expect(stored["favourites.other"] == spotKey)
    #expect(breeder.kennels["north"]??.keeper == nil)
    #expect(breeder.kennels["north"]??.residents.map(\.name) == ["Spot"])
    #expect(breeder.favourites["other"]??.name == "Spot")
  }

  @Test func aMapInAListElementFollowsItsElement() throws {
    let (reef, _) = try openReef()
    let palace = Palace()
    for name in ["east", "west"] {
      let wing = Wing()
      wing.name = name
      let bell = Doorbell()
      bell.tone = name + " bell"
      wing.rooms["hall"] = bell
      palace.wings.append(wing)
    }
    try reef.write { reef.add(palace) }
    let westHall = try #require(palace.wings[1].rooms["hall"] ?? nil)
    let eastHall = try #require(palace.wings[0].rooms["hall"] ?? nil)
    try reef.write { palace.wings.remove(at: 0) }
    #expect(eastHall.isInvalidated, "its wing was removed")
    try #require(!westHall.isInvalidated)
    #expect(westHall.tone == "west bell", "it follows its wing to position 0")
    try reef.write {
      westHall.tone = "rung"
      palace.wings[0].rooms["study"] = Doorbell()
    }
    let stored = try #require(try reef.store.read { try $0.collection("Palace").findOne() })
    #expect(stored["wings.0.rooms.hall.tone"] == "rung")
    #expect(stored["wings.0.rooms.study.tone"] == "")
    #expect(stored["wings.0.name"] == "west")
    try reef.write { palace.wings[0].rooms["hall"] = nil }
    #expect(westHall.isInvalidated)
  }

  @Test func aMapCannotMakeAnEmbeddedTypeContainItself() throws {
    do {
      _ = try openReef(types: [LoopedHouse.self, LoopedRoom.self])
      Issue.record("the Reef opened")
    } catch let error as ReefError {
      #expect(error.kind == .schema)
      #expect(error.description.contains("cycle"), "\(error)")
    }
  }

  @Test func deletingTheParentInvalidatesTheMapsObjects() throws {
    let (reef, _) = try openReef()
    let estate = makeEstate(1, [("a", makeBuilding("A"))])
    try reef.write { reef.add(estate) }
    let a = try #require(estate.sites["a"] ?? nil)
    let flat = try #require(a.flat)
    try reef.write { reef.delete(estate) }
    #expect(a.isInvalidated && flat.isInvalidated)
  }

  @Test func aManagedEmbeddedObjectCannotBePutInAMap() throws {
    let (reef, _) = try openReef()
    let first = makeEstate(1, [("a", makeBuilding("A"))])
    let second = makeEstate(2, [])
    let tenant = makeTenant(3, home: makeBuilding("H"))
    try reef.write { reef.add([first, second]) }
    try reef.write { reef.add(tenant) }
    let a = try #require(first.sites["a"] ?? nil)
    do {
      try reef.write {
        second.name = "renamed"
        second.sites["x"] = a
      }
      Issue.record("write did not throw")
    } catch let error as ReefError {
      #expect(error.kind == .embeddedObjectHasParent)
      #expect(error.typeName == "Building")
    }
    #expect(second.name == "" && second.sites.isEmpty, "the whole transaction is rolled back")
    #expect(throws: ReefError.self) { try reef.write { first.sites["b"] = a } }
    #expect(first.sites.keys == ["a"], "nor moved within its own map")
    #expect(throws: ReefError.self) { try reef.write { second.sites["h"] = tenant.home } }
    #expect(throws: ReefError.self) { try reef.write { tenant.home = a } }
    #expect(throws: ReefError.self) { try reef.write { tenant.buildings.append(a) } }
    #expect(!a.isInvalidated && a.city == "A")
    #expect(tenant.home?.city == "H" && tenant.buildings.isEmpty)
  }

  @Test func anUnmanagedEmbeddedObjectAtTwoKeysIsRefused() throws {
    let (reef, _) = try openReef()
    let shared = makeBuilding("Shared")
    let estate = makeEstate(1, [("a", shared), ("b", shared)])
    #expect(throws: ReefError.self) { try reef.write { reef.add(estate) } }
    #expect(reef.objects(Estate.self).isEmpty)
    #expect(shared.reef == nil)
    let twice = makeEstate(2, [])
    try reef.write { reef.add(twice) }
    let other = makeBuilding("Other")
    #expect(throws: ReefError.self) {
      try reef.write {
        twice.sites["a"] = other
        twice.sites["b"] = other
      }
    }
    #expect(twice.sites.isEmpty)
    // The same holds for a list.
    #expect(throws: ReefError.self) { try reef.write { reef.add(makeTenant(1, buildings: [shared, shared])) } }
    #expect(reef.objects(Tenant.self).isEmpty)
  }

  @Test func createAndObjectValueCopyTheMapsObjects() throws {
    let (reef, _) = try openReef()
    let first = makeEstate(1, [("a", makeBuilding("A"))])
    try reef.write { reef.add(first) }
    let a = try #require(first.sites["a"] ?? nil)
    let sites: [String: Any] = ["copy": a, "new": ["city": "N"], "none": nil as Building? as Any]
    let created = try reef.write {
      reef.create(Estate.self, value: ["id": 2, "sites": sites])
    }
    #expect(created.sites.keys == ["copy", "new", "none"])
    #expect(created.sites["copy"]??.city == "A" && created.sites["copy"]??.flat?.doorbell?.tone == "ding")
    #expect(created.sites["new"]??.city == "N")
    #expect(created.sites["none"].map { $0 == nil } == true)
    try reef.write { created.sites["copy"]??.city = "changed" }
    #expect(a.city == "A", "the copy is another object")
    let copy = Estate(value: first)
    copy.id = 3
    try reef.write { reef.add(copy) }
    #expect(copy.sites["a"]??.city == "A")
    try reef.write { copy.sites["a"]??.city = "changed too" }
    #expect(a.city == "A" && !a.isInvalidated)
    #expect(try storedEstate(reef, 3)?["sites.a.city"] == "changed too")
  }

  @Test func anObjectSetInACancelledWriteIsInvalidAndTheOldOneValid() throws {
    let (reef, _) = try openReef()
    let estate = makeEstate(1, [("a", makeBuilding("A"))])
    try reef.write { reef.add(estate) }
    let a = try #require(estate.sites["a"] ?? nil)
    let b = makeBuilding("B")
    reef.beginWrite()
    estate.sites["a"] = b
    #expect(a.isInvalidated)
    reef.cancelWrite()
    #expect(b.isInvalidated)
    try #require(!a.isInvalidated)
    #expect(a.city == "A")
    try reef.write { estate.sites["a"] = makeBuilding("C") }
    #expect(b.isInvalidated, "C is at the key B had, not B")
    #expect(a.isInvalidated)
  }

  @Test func queriesReachTheMapsObjectsByKey() throws {
    let (reef, _) = try openReef()
    try reef.write {
      reef.add(makeEstate(1, [("home", makeBuilding("Paris", flat: 2)), ("work", makeBuilding("Rome"))]))
      reef.add(makeEstate(2, [("home", makeBuilding("Rome", flat: 5))]))
      reef.add(makeEstate(3, []))
    }
    let estates = reef.objects(Estate.self)
    #expect(estates.filter("sites.home.city == 'Rome'").map(\.id) == [2])
    #expect(estates.where { $0.sites["home"].city == "Rome" }.map(\.id) == [2])
    #expect(estates.filter("sites.work.city == 'Rome'").map(\.id) == [1])
    #expect(estates.filter("sites.home.flat.number > 1").map(\.id) == [1, 2])
    #expect(estates.where { $0.sites["home"].flat.number > 1 }.map(\.id) == [1, 2])
    #expect(estates.where { $0.sites.keys == "work" }.map(\.id) == [1])
  }

  @Test func aMapOfEmbeddedObjectsMustHoldOptionals() throws {
    do {
      _ = try openReef(types: [RequiredSites.self, Doorbell.self])
      Issue.record("the Reef opened")
    } catch let error as ReefError {
      #expect(error.kind == .schema)
      #expect(error.typeName == "RequiredSites" && error.property == "sites", "\(error)")
    }
  }

  @Test func theJSONSchemaOfAMapOfEmbeddedObjectsAllowsNull() throws {
    let (reef, _) = try openReef()
    let estate = makeEstate(1, [("a", makeBuilding("A")), ("b", makeBuilding("B"))])
    try reef.write { reef.add(estate) }
    try reef.write { reef.delete(estate.sites["a"]!!) }
    #expect(try reef.validate([Estate.self]).isEmpty, "an object and a null at a key fit the schema")
    let schema = try #require(try reef.jsonSchema["Estate"])
    #expect(schema["properties.sites.bsonType"] == "object")
    #expect(schema["properties.sites.additionalProperties.bsonType"] == ["object", "null"])
    #expect(schema["properties.sites.additionalProperties.properties.city.bsonType"] == "string")
  }
}
