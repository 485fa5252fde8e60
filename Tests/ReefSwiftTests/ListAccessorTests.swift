import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// A tenant with buildings named `cities`, each with a flat numbered after its position (1, 2…)
/// and, in `flats`, flats numbered 10 × position + 1, 10 × position + 2…, `perBuilding` of them.
func makeListTenant(_ id: Int, _ cities: [String], flatsPerBuilding perBuilding: Int = 0) -> Tenant {
  let buildings = cities.enumerated().map { offset, city in
    let building = makeBuilding(city, flat: offset + 1, tone: "tone \(city)")
    for number in 0..<perBuilding {
      let flat = Flat()
      flat.number = 10 * (offset + 1) + number + 1
      building.flats.append(flat)
    }
    return building
  }
  return makeTenant(id, buildings: buildings)
}

/// The numbers of the flats in the `flats` list of each stored building.
func storedFlatNumbers(_ document: Document?) -> [[Int64]] {
  guard case .array(let buildings)? = document?["buildings"] else { return [] }
  return buildings.map { value -> [Int64] in
    guard case .document(let building) = value, case .array(let flats)? = building["flats"] else { return [] }
    return flats.map { flat -> Int64 in
      if case .document(let flat) = flat, case .int64(let number)? = flat["number"] { return number }
      return -1
    }
  }
}

/// An accessor of a list's embedded object follows its object when the list changes (Realm's
/// behaviour): only the accessors of an element that leaves the list, and of its own embedded
/// objects, are invalidated.
@Suite struct ListAccessorTests {
  @Test func removingAnEarlierElementKeepsLaterAccessorsOnTheirObjects() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C", "D"])
    try reef.write { reef.add(tenant) }
    let (a, b, c, d) = (tenant.buildings[0], tenant.buildings[1], tenant.buildings[2], tenant.buildings[3])
    try reef.write { tenant.buildings.remove(at: 1) }
    #expect(b.isInvalidated)
    try #require(!a.isInvalidated && !c.isInvalidated && !d.isInvalidated)
    #expect([a.city, c.city, d.city] == ["A", "C", "D"])
    #expect(c.flat?.number == 3 && d.flat?.doorbell?.tone == "tone D")
    try reef.write { c.city = "C2" }
    #expect(storedCities(try storedTenant(reef, 1)) == ["A", "C2", "D"], "a write through c goes to C's place")
    #expect(c.isEqual(to: tenant.buildings[1]))
    #expect(!c.isEqual(to: tenant.buildings[2]))
  }

  @Test func removingALaterElementLeavesEarlierAccessorsInPlace() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C"])
    try reef.write { reef.add(tenant) }
    let (a, b, c) = (tenant.buildings[0], tenant.buildings[1], tenant.buildings[2])
    try reef.write { tenant.buildings.remove(at: 2) }
    #expect(c.isInvalidated)
    #expect(!a.isInvalidated && a.city == "A")
    #expect(!b.isInvalidated && b.city == "B")
    try reef.write { tenant.buildings.removeLast() }
    #expect(b.isInvalidated)
    #expect(!a.isInvalidated && a.city == "A")
  }

  @Test func anElementAppendedWhereARemovedOneWasIsAnotherObject() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B"])
    try reef.write { reef.add(tenant) }
    let b = tenant.buildings[1]
    try reef.write { tenant.buildings.removeLast() }
    try reef.write { tenant.buildings.append(makeBuilding("E")) }
    #expect(b.isInvalidated, "E took B's position, not B's identity")
    #expect(tenant.buildings.map(\.city) == ["A", "E"])
  }

  @Test func insertingBeforeAnElementMovesItsAccessorAlong() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B"])
    try reef.write { reef.add(tenant) }
    let (a, b) = (tenant.buildings[0], tenant.buildings[1])
    let inserted = makeBuilding("Z")
    try reef.write { tenant.buildings.insert(inserted, at: 0) }
    try #require(!a.isInvalidated && !b.isInvalidated && !inserted.isInvalidated)
    #expect([inserted.city, a.city, b.city] == ["Z", "A", "B"])
    try reef.write {
      tenant.buildings.insert(makeBuilding("Y"), at: 2)
      a.street = "written after two inserts"
    }
    #expect(tenant.buildings.map(\.city) == ["Z", "A", "Y", "B"])
    #expect(tenant.buildings[1].street == "written after two inserts")
    #expect(b.city == "B" && inserted.city == "Z")
  }

  @Test func appendingLeavesEveryAccessorInPlace() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A"])
    try reef.write { reef.add(tenant) }
    let a = tenant.buildings[0]
    let appended = makeBuilding("B")
    try reef.write {
      tenant.buildings.append(appended)
      tenant.buildings.append(objectsIn: [makeBuilding("C"), makeBuilding("D")])
    }
    try #require(!a.isInvalidated && !appended.isInvalidated)
    #expect(a.city == "A" && appended.city == "B")
    try reef.write { tenant.buildings.remove(at: 0) }
    #expect(a.isInvalidated)
    try #require(!appended.isInvalidated)
    #expect(appended.city == "B" && tenant.buildings[0].isEqual(to: appended))
  }

  @Test func movingAnElementMovesEveryAccessorItPasses() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C", "D"])
    try reef.write { reef.add(tenant) }
    let accessors = Array(tenant.buildings)
    try reef.write { tenant.buildings.move(from: 0, to: 3) }
    #expect(tenant.buildings.map(\.city) == ["B", "C", "D", "A"])
    try #require(accessors.allSatisfy { !$0.isInvalidated })
    #expect(accessors.map(\.city) == ["A", "B", "C", "D"])
    try reef.write { tenant.buildings.move(from: 3, to: 1) }
    #expect(tenant.buildings.map(\.city) == ["B", "A", "C", "D"])
    #expect(accessors.map(\.city) == ["A", "B", "C", "D"])
    try reef.write { accessors[0].flat?.number = 100 }
    #expect(tenant.buildings[1].flat?.number == 100, "A is at 1 and its flat was written there")
  }

  @Test func swappingKeepsBothAccessorsOnTheirObjects() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C"])
    try reef.write { reef.add(tenant) }
    let (a, c) = (tenant.buildings[0], tenant.buildings[2])
    let aFlat = try #require(a.flat)
    try reef.write { tenant.buildings.swapAt(0, 2) }
    try #require(!a.isInvalidated && !c.isInvalidated && !aFlat.isInvalidated)
    #expect(a.city == "A" && c.city == "C")
    #expect(aFlat.number == 1, "an embedded object of a moved element moves with it")
    try reef.write {
      c.street = "was first"
      aFlat.number = 7
    }
    #expect(storedCities(try storedTenant(reef, 1)) == ["C", "B", "A"])
    #expect(tenant.buildings[0].street == "was first" && tenant.buildings[2].flat?.number == 7)
    #expect(tenant.buildings[0].flat?.number == 3)
  }

  @Test func replacingAnElementInvalidatesOnlyIt() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C", "D", "E"])
    try reef.write { reef.add(tenant) }
    let accessors = Array(tenant.buildings)
    let bFlat = try #require(accessors[1].flat)
    try reef.write { tenant.buildings.replace(index: 1, object: makeBuilding("X")) }
    #expect(accessors[1].isInvalidated && bFlat.isInvalidated)
    try #require(!accessors[0].isInvalidated && !accessors[2].isInvalidated)
    try reef.write { tenant.buildings[2] = makeBuilding("Y") }
    #expect(accessors[2].isInvalidated)
    try reef.write { tenant.buildings.replaceSubrange(3..<4, with: [makeBuilding("M"), makeBuilding("N")]) }
    #expect(accessors[3].isInvalidated)
    #expect(tenant.buildings.map(\.city) == ["A", "X", "Y", "M", "N", "E"])
    try #require(!accessors[0].isInvalidated && !accessors[4].isInvalidated)
    #expect(accessors[0].city == "A" && accessors[4].city == "E")
    #expect(tenant.buildings[5].isEqual(to: accessors[4]))
  }

  @Test func removingEveryElementInvalidatesEveryAccessor() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B"], flatsPerBuilding: 1)
    try reef.write { reef.add(tenant) }
    let accessors = Array(tenant.buildings)
    let nested = tenant.buildings[1].flats[0]
    try reef.write { tenant.buildings.removeAll() }
    #expect(accessors.allSatisfy { $0.isInvalidated })
    #expect(nested.isInvalidated)
    try reef.write { tenant.buildings.append(objectsIn: [makeBuilding("C"), makeBuilding("D")]) }
    #expect(accessors.allSatisfy { $0.isInvalidated }, "new elements at the old positions are other objects")
  }

  @Test func assigningAWholeListInvalidatesItsOldElements() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B"])
    try reef.write { reef.add(tenant) }
    let (a, b) = (tenant.buildings[0], tenant.buildings[1])
    try reef.write { tenant["buildings"] = [makeBuilding("C"), makeBuilding("D")] }
    #expect(a.isInvalidated && b.isInvalidated)
    #expect(tenant.buildings.map(\.city) == ["C", "D"])
  }

  @Test func aRemovedElementsEmbeddedObjectsAreInvalidatedWithIt() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C"], flatsPerBuilding: 2)
    try reef.write { reef.add(tenant) }
    let b = tenant.buildings[1]
    let bFlat = try #require(b.flat)
    let bDoorbell = try #require(bFlat.doorbell)
    let bListed = b.flats[1]
    let cListed = tenant.buildings[2].flats[0]
    try reef.write { tenant.buildings.remove(at: 1) }
    #expect(b.isInvalidated && bFlat.isInvalidated && bDoorbell.isInvalidated && bListed.isInvalidated)
    try #require(!cListed.isInvalidated)
    #expect(cListed.number == 31)
  }

  @Test func elementsOfNestedListsFollowChangesAtEveryLevel() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C"], flatsPerBuilding: 3)
    try reef.write { reef.add(tenant) }
    let c = tenant.buildings[2]
    let c2 = c.flats[1]
    let c3 = tenant.buildings[2].flats[2]
    try reef.write { tenant.buildings.remove(at: 0) }
    try #require(!c.isInvalidated && !c2.isInvalidated && !c3.isInvalidated)
    #expect(c2.number == 32 && c3.number == 33)
    try reef.write { c.flats.remove(at: 0) }
    try #require(!c2.isInvalidated && !c3.isInvalidated)
    #expect(c2.number == 32 && c3.number == 33)
    try reef.write { tenant.buildings.swapAt(0, 1) }
    #expect(storedCities(try storedTenant(reef, 1)) == ["C", "B"])
    try reef.write {
      tenant.buildings[0].flats.insert(Flat(value: ["number": 30]), at: 0)
      c3.number = 330
    }
    #expect(storedFlatNumbers(try storedTenant(reef, 1)) == [[30, 32, 330], [21, 22, 23]])
    try reef.write { c.flats.move(from: 2, to: 0) }
    #expect(storedFlatNumbers(try storedTenant(reef, 1)) == [[330, 30, 32], [21, 22, 23]])
    try #require(!c2.isInvalidated && !c3.isInvalidated)
    #expect(c2.number == 32 && c3.number == 330)
    try reef.write { tenant.buildings[0].flats.remove(at: 2) }
    #expect(c2.isInvalidated && !c3.isInvalidated)
    #expect(c3.parent.map { ($0 as? Building)?.city } == "C")
  }

  @Test func deletingAnElementKeepsTheOthersOnTheirObjects() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C"])
    try reef.write { reef.add(tenant) }
    let (a, b, c) = (tenant.buildings[0], tenant.buildings[1], tenant.buildings[2])
    try reef.write { reef.delete(a) }
    #expect(a.isInvalidated)
    try #require(!b.isInvalidated && !c.isInvalidated)
    #expect(b.city == "B" && c.city == "C")
    try reef.write { reef.delete(c) }
    #expect(c.isInvalidated && b.city == "B")
    #expect(storedCities(try storedTenant(reef, 1)) == ["B"])
  }

  @Test func aChangeThroughAnotherAccessorOfTheSameObjectIsFollowed() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makeListTenant(1, ["A", "B", "C"])) }
    let reader = try #require(reef.object(ofType: Tenant.self, forPrimaryKey: 1))
    let writer = try #require(reef.object(ofType: Tenant.self, forPrimaryKey: 1))
    let (a, c) = (reader.buildings[0], reader.buildings[2])
    try reef.write { writer.buildings.remove(at: 1) }
    try reef.write { writer.buildings.swapAt(0, 1) }
    try #require(!a.isInvalidated && !c.isInvalidated)
    #expect(a.city == "A" && c.city == "C")
    #expect(reader.buildings.map(\.city) == ["C", "A"])
    #expect(a.isEqual(to: writer.buildings[1]))
  }

  @Test func cancellingAWriteTakesAccessorsBackToTheirPositions() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C"], flatsPerBuilding: 1)
    try reef.write { reef.add(tenant) }
    let (a, b, c) = (tenant.buildings[0], tenant.buildings[1], tenant.buildings[2])
    let cListed = c.flats[0]
    let inserted = makeBuilding("Z")
    reef.beginWrite()
    tenant.buildings.remove(at: 1)
    tenant.buildings.insert(inserted, at: 0)
    tenant.buildings.swapAt(1, 2)
    let takenInside = tenant.buildings[1]
    #expect(b.isInvalidated && takenInside.city == "C")
    #expect(tenant.buildings.map(\.city) == ["Z", "C", "A"])
    reef.cancelWrite()
    #expect(tenant.buildings.map(\.city) == ["A", "B", "C"])
    try #require(!a.isInvalidated && !b.isInvalidated && !c.isInvalidated)
    #expect([a.city, b.city, c.city] == ["A", "B", "C"])
    try #require(!cListed.isInvalidated && !takenInside.isInvalidated)
    #expect(cListed.number == 31)
    #expect(takenInside.city == "C", "an accessor taken inside the transaction follows C back too")
    #expect(inserted.isInvalidated, "an object the transaction inserted is gone")
    try reef.write { tenant.buildings.insert(makeBuilding("Y"), at: 0) }
    #expect(inserted.isInvalidated, "the position it had is another object's")
    try #require(!a.isInvalidated && !b.isInvalidated && !c.isInvalidated)
    #expect([a.city, b.city, c.city] == ["A", "B", "C"])
  }

  @Test func aWriteThatThrowsTakesAccessorsBackToTheirPositions() throws {
    struct Stop: Error {}
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C"])
    try reef.write { reef.add(tenant) }
    let (a, c) = (tenant.buildings[0], tenant.buildings[2])
    let appended = makeBuilding("D")
    #expect(throws: Stop.self) {
      try reef.write {
        tenant.buildings.remove(at: 0)
        tenant.buildings.append(appended)
        throw Stop()
      }
    }
    try #require(!a.isInvalidated && !c.isInvalidated)
    #expect(a.city == "A" && c.city == "C")
    #expect(appended.isInvalidated)
    try reef.write { tenant.buildings.append(makeBuilding("E")) }
    #expect(appended.isInvalidated, "E is at the position D had: D stays gone")
    #expect(storedCities(try storedTenant(reef, 1)) == ["A", "B", "C", "E"])
  }

  @Test func aRuleBrokenInAWriteTakesAccessorsBackToTheirPositions() throws {
    let (reef, _) = try openReef()
    let first = makeListTenant(1, ["A", "B"])
    let second = makeTenant(2, home: makeBuilding("H"))
    try reef.write { reef.add([first, second]) }
    let b = first.buildings[1]
    #expect(throws: ReefError.self) {
      try reef.write {
        first.buildings.remove(at: 0)
        first.buildings.append(second.home!)
      }
    }
    try #require(!b.isInvalidated)
    #expect(b.city == "B" && first.buildings[1].isEqual(to: b))
  }

  @Test func overwritingOneElementsEmbeddedObjectLeavesTheOtherElementsOnes() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B"])
    try reef.write { reef.add(tenant) }
    let aFlat = try #require(tenant.buildings[0].flat)
    let bFlat = try #require(tenant.buildings[1].flat)
    try reef.write { tenant.buildings[0].flat = Flat(value: ["number": 9]) }
    #expect(aFlat.isInvalidated)
    try #require(!bFlat.isInvalidated)
    #expect(bFlat.number == 2)
  }

  @Test func aListEditedWhileNoAccessorWasHeldIsFollowedFromThen() throws {
    let (reef, _) = try openReef()
    let tenant = makeListTenant(1, ["A", "B", "C"])
    try reef.write { reef.add(tenant) }
    try reef.write { tenant.buildings.remove(at: 0) }
    let c = tenant.buildings[1]
    try reef.write { tenant.buildings.insert(makeBuilding("Z"), at: 0) }
    try #require(!c.isInvalidated)
    #expect(c.city == "C" && tenant.buildings[2].isEqual(to: c))
    try reef.write { tenant.buildings.move(from: 2, to: 0) }
    #expect(tenant.buildings.map(\.city) == ["C", "Z", "B"])
    #expect(c.city == "C" && tenant.buildings[0].isEqual(to: c))
  }
}
