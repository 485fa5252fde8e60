import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// A building in `city` with a flat `number` whose doorbell plays `tone`.
func makeBuilding(_ city: String, flat number: Int = 1, tone: String = "ding") -> Building {
  let doorbell = Doorbell()
  doorbell.tone = tone
  let flat = Flat()
  flat.number = number
  flat.doorbell = doorbell
  let building = Building()
  building.city = city
  building.flat = flat
  return building
}

/// A tenant with primary key `id`, living in `home`, with `buildings`.
func makeTenant(_ id: Int, _ name: String = "", home: Building? = nil, buildings: [Building] = []) -> Tenant {
  let tenant = Tenant()
  tenant.id = id
  tenant.name = name
  tenant.home = home
  tenant.buildings.append(objectsIn: buildings)
  return tenant
}

/// The stored document of the tenant with primary key `id`.
func storedTenant(_ reef: Reef, _ id: Int) throws -> Document? {
  try reef.store.read { try $0.collection("Tenant").findOne(["id": .int64(Int64(id))]) }
}

/// The cities of a stored document's `buildings` array.
func storedCities(_ document: Document?) -> [String] {
  guard case .array(let array)? = document?["buildings"] else { return [] }
  return array.map { value -> String in
    if case .document(let building) = value, case .string(let city)? = building["city"] { return city }
    return "?"
  }
}

@Suite struct EmbeddedRuleTests {
  // An embedded object cannot be added directly: `add` and `create` take `Object`s, and an
  // `EmbeddedObject` is not one, so `reef.add(Building())` does not compile.

  @Test func aSecondParentMakesWriteThrowAndRollsBackEverything() throws {
    let (reef, _) = try openReef()
    let first = makeTenant(1, "first", home: makeBuilding("Paris"))
    let second = makeTenant(2, "second", home: makeBuilding("Rome"))
    try reef.write { reef.add([first, second]) }
    let paris = try #require(first.home)
    do {
      try reef.write {
        reef.add(makeTenant(3, "added before"))
        second.name = "renamed"
        second.home = paris
        first.name = "renamed after"
      }
      Issue.record("write did not throw")
    } catch let error as ReefError {
      #expect(error.kind == .embeddedObjectHasParent)
      #expect(error.typeName == "Building")
    }
    #expect(reef.objects(Tenant.self).count == 2, "the tenant added in the failed transaction is gone")
    #expect(second.name == "second" && first.name == "first")
    #expect(second.home?.city == "Rome", "the second parent's embedded object was not replaced")
    #expect(!paris.isInvalidated && paris.city == "Paris")
    #expect(storedCities(try storedTenant(reef, 2)).isEmpty)
    #expect(try storedTenant(reef, 3) == nil)
  }

  @Test func aManagedEmbeddedObjectCannotBeAppendedToASecondList() throws {
    let (reef, _) = try openReef()
    let first = makeTenant(1, buildings: [makeBuilding("Paris")])
    let second = makeTenant(2)
    try reef.write { reef.add([first, second]) }
    #expect(throws: ReefError.self) { try reef.write { second.buildings.append(first.buildings[0]) } }
    #expect(second.buildings.isEmpty)
    #expect(throws: ReefError.self) { try reef.write { second.home = first.buildings[0] } }
    #expect(second.home == nil)
  }

  @Test func aManagedEmbeddedObjectCannotBeMovedWithinItsOwnParent() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("Paris"))
    try reef.write { reef.add(tenant) }
    #expect(throws: ReefError.self) { try reef.write { tenant.buildings.append(tenant.home!) } }
    #expect(tenant.buildings.isEmpty)
  }

  @Test func aCopyOfAManagedEmbeddedObjectCanGetANewParent() throws {
    let (reef, _) = try openReef()
    let first = makeTenant(1, home: makeBuilding("Paris"))
    let second = makeTenant(2)
    try reef.write { reef.add([first, second]) }
    try reef.write { second.home = Building(value: first.home!) }
    #expect(second.home?.city == "Paris")
    #expect(first.home?.city == "Paris")
    try reef.write { second.home?.city = "Lyon" }
    #expect(first.home?.city == "Paris", "the copy is another object")
  }

  @Test func overwritingAnEmbeddedObjectDeletesAndInvalidatesIt() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("Paris"))
    try reef.write { reef.add(tenant) }
    let old = try #require(tenant.home)
    let oldFlat = try #require(old.flat)
    let oldDoorbell = try #require(oldFlat.doorbell)
    try reef.write { tenant.home = makeBuilding("Rome", flat: 9) }
    #expect(old.isInvalidated)
    #expect(oldFlat.isInvalidated, "embedded objects of the overwritten one go too")
    #expect(oldDoorbell.isInvalidated)
    #expect(tenant.home?.city == "Rome" && tenant.home?.flat?.number == 9)
    let stored = try #require(try storedTenant(reef, 1))
    guard case .document(let home)? = stored["home"] else {
      Issue.record("no home in \(stored)")
      return
    }
    #expect(home["city"] == "Rome")
  }

  @Test func settingAnEmbeddedObjectToNilDeletesAndInvalidatesIt() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("Paris"))
    try reef.write { reef.add(tenant) }
    let old = try #require(tenant.home)
    try reef.write { tenant.home = nil }
    #expect(old.isInvalidated)
    #expect(tenant.home == nil)
    #expect(try storedTenant(reef, 1)?["home"] == .null)
  }

  @Test func removingAnEmbeddedObjectFromItsListDeletesAndInvalidatesIt() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, buildings: [makeBuilding("A"), makeBuilding("B"), makeBuilding("C")])
    try reef.write { reef.add(tenant) }
    let b = tenant.buildings[1]
    try reef.write { tenant.buildings.remove(at: 1) }
    #expect(b.isInvalidated)
    #expect(storedCities(try storedTenant(reef, 1)) == ["A", "C"])
    let a = tenant.buildings[0]
    try reef.write { tenant.buildings.removeAll() }
    #expect(a.isInvalidated)
    #expect(storedCities(try storedTenant(reef, 1)) == [])
    #expect(try storedTenant(reef, 1)?["buildings"] == .array([]))
  }

  @Test func deletingAnEmbeddedObjectRemovesItFromItsParent() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("H"), buildings: [makeBuilding("A"), makeBuilding("B")])
    try reef.write { reef.add(tenant) }
    let home = try #require(tenant.home)
    let a = tenant.buildings[0]
    try reef.write {
      reef.delete(home)
      reef.delete(a)
    }
    #expect(home.isInvalidated && a.isInvalidated)
    #expect(tenant.home == nil)
    #expect(tenant.buildings.map(\.city) == ["B"])
    #expect(storedCities(try storedTenant(reef, 1)) == ["B"])
  }

  @Test func elementsThatStayInTheListStayValid() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, buildings: [makeBuilding("A"), makeBuilding("B"), makeBuilding("C")])
    try reef.write { reef.add(tenant) }
    let c = tenant.buildings[2]
    try reef.write { tenant.buildings.remove(at: 0) }
    try #require(!c.isInvalidated)
    #expect(c.city == "C")
    #expect(tenant.buildings[1].city == "C")
  }

  @Test func deletingAParentInvalidatesItsEmbeddedObjects() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("H"), buildings: [makeBuilding("A")])
    try reef.write { reef.add(tenant) }
    let home = try #require(tenant.home)
    let flat = try #require(home.flat)
    let doorbell = try #require(flat.doorbell)
    let listed = tenant.buildings[0]
    let listedFlat = try #require(listed.flat)
    try reef.write { reef.delete(tenant) }
    #expect(tenant.isInvalidated)
    #expect(home.isInvalidated && flat.isInvalidated && doorbell.isInvalidated)
    #expect(listed.isInvalidated && listedFlat.isInvalidated)
    #expect(try reef.store.read { try $0.collection("Tenant").count() } == 0)
  }

  @Test func settingAToOneLinkToNilDeletesNothing() throws {
    let (reef, _) = try openReef()
    let landlord = Landlord()
    landlord.name = "Roper"
    let tenant = makeTenant(1)
    tenant.landlord = landlord
    try reef.write { reef.add(tenant) }
    try reef.write { tenant.landlord = nil }
    #expect(!landlord.isInvalidated)
    #expect(reef.objects(Landlord.self).count == 1)
    #expect(try storedTenant(reef, 1)?["landlord"] == .null)
    let parrot = Parrot()
    try reef.write { tenant.pets.append(parrot) }
    try reef.write { tenant.pets.removeAll() }
    #expect(!parrot.isInvalidated, "removing a link from a list deletes nothing")
    #expect(reef.objects(Parrot.self).count == 1)
  }

  @Test func nestedEmbeddedObjectsAreStoredInlineAtEveryLevel() throws {
    let (reef, _) = try openReef()
    let home = makeBuilding("Paris", flat: 3, tone: "bing")
    let extra = Flat()
    extra.number = 4
    home.flats.append(extra)
    try reef.write { reef.add(makeTenant(1, home: home)) }
    let stored = try #require(try storedTenant(reef, 1))
    #expect(
      stored["home"]
        == .document([
          "street": "", "city": "Paris", "flat": ["number": .int64(3), "doorbell": ["tone": "bing"]],
          "flats": [["number": .int64(4), "doorbell": .null]],
        ]))
    #expect(home.flat?.doorbell?.reef != nil, "the deepest object became managed")
    try reef.write { home.flat?.doorbell?.tone = "bong" }
    #expect(home.flat?.doorbell?.tone == "bong")
    try reef.write { home.flats[0].doorbell = Doorbell(value: ["tone": "ring"]) }
    let again = try #require(try storedTenant(reef, 1))
    guard case .document(let storedHome)? = again["home"] else {
      Issue.record("no home")
      return
    }
    #expect(storedHome["flat"] == .document(["number": .int64(3), "doorbell": ["tone": "bong"]]))
    #expect(storedHome["flats"] == .array([.document(["number": .int64(4), "doorbell": ["tone": "ring"]])]))
    let parent = try #require(home.flat?.doorbell?.parent as? Flat)
    #expect(parent.number == 3)
  }

  @Test func editingAListOfEmbeddedObjectsRewritesTheStoredArray() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, buildings: ["A", "B", "C"].map { makeBuilding($0) })
    try reef.write { reef.add(tenant) }
    #expect(storedCities(try storedTenant(reef, 1)) == ["A", "B", "C"])
    try reef.write { tenant.buildings.append(makeBuilding("D")) }
    #expect(storedCities(try storedTenant(reef, 1)) == ["A", "B", "C", "D"])
    try reef.write { tenant.buildings.insert(makeBuilding("Z"), at: 0) }
    #expect(storedCities(try storedTenant(reef, 1)) == ["Z", "A", "B", "C", "D"])
    try reef.write { tenant.buildings.move(from: 0, to: 4) }
    #expect(storedCities(try storedTenant(reef, 1)) == ["A", "B", "C", "D", "Z"])
    try reef.write { tenant.buildings.swapAt(0, 1) }
    #expect(storedCities(try storedTenant(reef, 1)) == ["B", "A", "C", "D", "Z"])
    let replaced = tenant.buildings[2]
    try reef.write { tenant.buildings.replace(index: 2, object: makeBuilding("Y")) }
    #expect(replaced.isInvalidated, "the replaced object is deleted")
    #expect(storedCities(try storedTenant(reef, 1)) == ["B", "A", "Y", "D", "Z"])
    try reef.write { tenant.buildings[0] = makeBuilding("X") }
    #expect(storedCities(try storedTenant(reef, 1)) == ["X", "A", "Y", "D", "Z"])
    try reef.write { tenant.buildings.replaceSubrange(1..<3, with: [makeBuilding("M")]) }
    #expect(storedCities(try storedTenant(reef, 1)) == ["X", "M", "D", "Z"])
    try reef.write { tenant.buildings[3].flat?.number = 42 }
    #expect(tenant.buildings[3].flat?.number == 42)
    try reef.write { tenant.buildings.removeLast() }
    #expect(tenant.buildings.map(\.city) == ["X", "M", "D"])
    try reef.write { tenant.buildings.removeAll() }
    #expect(tenant.buildings.isEmpty)
    #expect(try storedTenant(reef, 1)?["buildings"] == .array([]))
  }

  @Test func movedElementsKeepTheirValues() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, buildings: ["A", "B"].map { makeBuilding($0) })
    try reef.write { reef.add(tenant) }
    let a = tenant.buildings[0]
    try reef.write { tenant.buildings.swapAt(0, 1) }
    try #require(!a.isInvalidated)
    #expect(a.city == "A")
    #expect(tenant.buildings[1].city == "A")
  }

  @Test func aListOfEmbeddedObjectsIsIndexedAfterAnEditInTheSameWrite() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, buildings: ["A"].map { makeBuilding($0) })
    try reef.write { reef.add(tenant) }
    try reef.write {
      tenant.buildings.append(makeBuilding("B"))
      tenant.buildings[1].street = "Main"
      tenant.buildings.insert(makeBuilding("0"), at: 0)
      #expect(tenant.buildings.map(\.city) == ["0", "A", "B"])
      #expect(tenant.buildings[2].street == "Main")
    }
    #expect(tenant.buildings[2].street == "Main")
  }

  @Test func anUnmanagedEmbeddedObjectAddedTwiceInOneWriteIsRefused() throws {
    let (reef, _) = try openReef()
    let shared = makeBuilding("Shared")
    let first = makeTenant(1, home: shared)
    let second = makeTenant(2, home: shared)
    #expect(throws: ReefError.self) { try reef.write { reef.add([first, second]) } }
    #expect(reef.objects(Tenant.self).isEmpty)
  }

  @Test func anOverwrittenEmbeddedObjectStaysInvalidAfterALaterRollback() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("Paris"))
    try reef.write { reef.add(tenant) }
    let paris = try #require(tenant.home)
    try reef.write { tenant.home = makeBuilding("Rome") }
    #expect(paris.isInvalidated)
    reef.beginWrite()
    tenant.name = "cancelled"
    reef.cancelWrite()
    #expect(paris.isInvalidated, "the rollback takes back its own transaction, not the earlier one")
    #expect(tenant.home?.city == "Rome")
  }

  @Test func anEmbeddedObjectSetInACancelledWriteStaysInvalid() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("Paris"))
    try reef.write { reef.add(tenant) }
    let paris = try #require(tenant.home)
    let rome = makeBuilding("Rome")
    reef.beginWrite()
    tenant.home = rome
    reef.cancelWrite()
    #expect(rome.isInvalidated)
    try #require(!paris.isInvalidated)
    #expect(paris.city == "Paris")
    try reef.write { tenant.home = makeBuilding("Oslo") }
    #expect(rome.isInvalidated, "Oslo is in the place Rome had, not Rome")
    #expect(paris.isInvalidated)
  }
}
