import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

@Suite struct UpdatePolicyTests {
  @Test func addWithErrorRefusesAnExistingKey() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makeTenant(1, "first")) }
    do {
      try reef.write { reef.add(makeTenant(1, "second"), update: .error) }
      Issue.record("write did not throw")
    } catch let error as ReefError {
      #expect(error.kind == .primaryKeyExists)
      #expect(error.typeName == "Tenant")
      #expect(error.primaryKey == .int64(1))
    }
    #expect(reef.object(ofType: Tenant.self, forPrimaryKey: 1)?.name == "first")
  }

  @Test func addWithAllReplacesEveryPropertyAndInvalidatesOldEmbeddedObjects() throws {
    let (reef, _) = try openReef()
    let original = makeTenant(1, "first", home: makeBuilding("Paris"), buildings: [makeBuilding("A")])
    original.age = 40
    try reef.write { reef.add(original) }
    let oldHome = try #require(original.home)
    let replacement = makeTenant(1, "second", home: makeBuilding("Rome"))
    try reef.write { reef.add(replacement, update: .all) }
    #expect(reef.objects(Tenant.self).count == 1)
    #expect(original.name == "second", "the first accessor sees the replacement")
    #expect(original.age == 0, ".all writes every property, defaults too")
    #expect(original.home?.city == "Rome")
    #expect(original.buildings.isEmpty)
    #expect(oldHome.isInvalidated, ".all replaces embedded objects")
    #expect(replacement.reef != nil && replacement.name == "second")
  }

  @Test func addWithModifiedKeepsEmbeddedObjectsValid() throws {
    let (reef, _) = try openReef()
    let original = makeTenant(1, "first", home: makeBuilding("Paris"))
    try reef.write { reef.add(original) }
    let oldHome = try #require(original.home)
    let replacement = makeTenant(1, "second", home: makeBuilding("Rome"))
    try reef.write { reef.add(replacement, update: .modified) }
    #expect(original.name == "second")
    #expect(!oldHome.isInvalidated, ".modified updates embedded objects in place")
    #expect(oldHome.city == "Rome")
  }

  @Test func addWithUpdateOfANewKeyInserts() throws {
    let (reef, _) = try openReef()
    try reef.write {
      reef.add(makeTenant(1), update: .modified)
      reef.add(makeTenant(2), update: .all)
    }
    #expect(reef.objects(Tenant.self).count == 2)
  }

  @Test func theUpdatePolicyPropagatesToLinkedObjects() throws {
    let (reef, _) = try openReef()
    let landlord = Landlord()
    landlord.name = "Roper"
    landlord.rent = 100
    try reef.write { reef.add(landlord) }
    let newer = Landlord()
    newer.name = "Roper"
    newer.rent = 200
    let tenant = makeTenant(1)
    tenant.landlord = newer
    try reef.write { reef.add(tenant, update: .modified) }
    #expect(landlord.rent == 200)
    #expect(reef.objects(Landlord.self).count == 1)
    let clash = Landlord()
    clash.name = "Roper"
    let other = makeTenant(2)
    other.landlord = clash
    #expect(throws: ReefError.self, "with .error a linked object's existing key is an error too") {
      try reef.write { reef.add(other) }
    }
  }

  @Test func createFromADictionary() throws {
    let (reef, _) = try openReef()
    let tenant = try reef.write {
      reef.create(
        Tenant.self,
        value: ["id": 1, "name": "Jack", "age": 30, "home": ["city": "Santa Monica", "flat": ["number": 3]]])
    }
    #expect(tenant.name == "Jack" && tenant.age == 30)
    #expect(tenant.home?.city == "Santa Monica" && tenant.home?.flat?.number == 3)
    #expect(tenant.score == 0 && tenant.nickname == nil, "missing values take their defaults")
  }

  @Test func createWithModifiedSetsOnlyTheGivenProperties() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.create(Tenant.self, value: ["id": 1, "name": "Jack", "age": 30]) }
    try reef.write { reef.create(Tenant.self, value: ["id": 1, "age": 31], update: .modified) }
    let tenant = try #require(reef.object(ofType: Tenant.self, forPrimaryKey: 1))
    #expect(tenant.name == "Jack" && tenant.age == 31)
    #expect(throws: ReefError.self) { try reef.write { reef.create(Tenant.self, value: ["id": 1]) } }
  }

  @Test func createFromAnArrayInPropertyOrder() throws {
    let (reef, _) = try openReef()
    let landlord = try reef.write { reef.create(Landlord.self, value: ["Roper", 900]) }
    #expect(landlord.name == "Roper" && landlord.rent == 900)
    #expect(reef.object(ofType: Landlord.self, forPrimaryKey: "Roper")?.rent == 900)
  }

  @Test func createFromAManagedObjectDeepCopiesItsEmbeddedTree() throws {
    let (reef, _) = try openReef()
    let source = makeTenant(1, "source", home: makeBuilding("Paris", flat: 2, tone: "ding"))
    source.buildings.append(makeBuilding("Lyon"))
    try reef.write { reef.add(source) }
    let fromDictionary = try reef.write {
      reef.create(Tenant.self, value: ["id": 2, "home": source.home!, "buildings": Array(source.buildings)])
    }
    #expect(fromDictionary.home?.flat?.doorbell?.tone == "ding")
    #expect(fromDictionary.buildings.map(\.city) == ["Lyon"])
    #expect(!source.home!.isInvalidated, "the source's embedded object keeps its parent")
    try reef.write { fromDictionary.home?.city = "Nice" }
    #expect(source.home?.city == "Paris")
    let copied = try reef.write { () -> Tenant in
      let value = Tenant(value: source)
      value.id = 3
      reef.add(value)
      return value
    }
    #expect(copied.home?.flat?.doorbell?.tone == "ding")
    #expect(copied.buildings.map(\.city) == ["Lyon"])
    try reef.write { copied.home?.flat?.doorbell?.tone = "dong" }
    #expect(source.home?.flat?.doorbell?.tone == "ding", "the tree was copied, not shared")
    #expect(!source.home!.isInvalidated)
  }

  @Test func objectValueCopiesAnUnmanagedObject() {
    let tenant = Tenant(value: ["id": 5, "name": "Chrissy", "home": makeBuilding("Venice")])
    #expect(tenant.id == 5 && tenant.name == "Chrissy" && tenant.home?.city == "Venice")
    #expect(tenant.reef == nil)
    let fromArray = Landlord(value: ["Furley", 3])
    #expect(fromArray.name == "Furley" && fromArray.rent == 3)
    let copy = Tenant(value: tenant)
    #expect(copy.name == "Chrissy" && copy.home?.city == "Venice")
  }

  @Test func deleteAnObjectASequenceAndResults() throws {
    let (reef, _) = try openReef()
    let tenants = (1...10).map { makeTenant($0, "t\($0)") }
    try reef.write { reef.add(tenants) }
    try reef.write { reef.delete(tenants[0]) }
    #expect(reef.objects(Tenant.self).count == 9)
    try reef.write { reef.delete(tenants[1...3]) }
    #expect(reef.objects(Tenant.self).count == 6)
    try reef.write { reef.delete(reef.objects(Tenant.self).filter("id > 7")) }
    #expect(reef.objects(Tenant.self).map(\.id).sorted() == [5, 6, 7])
    #expect(tenants[9].isInvalidated && !tenants[4].isInvalidated)
  }

  // Realm raises at the call for both (they were errors thrown by write).
  @Test func deletingTheSameObjectTwiceStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let tenant = makeTenant(1)
        try reef.write { reef.add(tenant) }
        try reef.write {
          reef.delete(tenant)
          reef.delete(tenant)
        }
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Object has been deleted or invalidated."), "\(stderr)")
  }

  @Test func deletingAnUnmanagedObjectStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        try reef.write { reef.delete(makeTenant(1)) }
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Can only delete an object from the Reef it belongs to."), "\(stderr)")
  }

  @Test func deleteAllDeletesEveryType() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("A"))
    tenant.landlord = Landlord(value: ["name": "Roper"])
    tenant.pets.append(Parrot())
    try reef.write { reef.add(tenant) }
    try reef.write { reef.deleteAll() }
    #expect(reef.objects(Tenant.self).isEmpty && reef.objects(Landlord.self).isEmpty)
    #expect(reef.objects(Parrot.self).count == 0)
    #expect(tenant.isInvalidated)
  }

  @Test func objectForPrimaryKeyOfEachKeyType() throws {
    let (reef, _) = try openReef()
    let ticket = Ticket()
    ticket.seat = "12A"
    let badge = Badge()
    badge.label = "guest"
    try reef.write {
      reef.add(makeTenant(7, "int"))
      reef.add(Landlord(value: ["name": "string"]))
      reef.add(ticket)
      reef.add(badge)
    }
    #expect(reef.object(ofType: Tenant.self, forPrimaryKey: 7)?.name == "int")
    #expect(reef.object(ofType: Tenant.self, forPrimaryKey: 8) == nil)
    #expect(reef.object(ofType: Landlord.self, forPrimaryKey: "string") != nil)
    #expect(reef.object(ofType: Landlord.self, forPrimaryKey: "String") == nil)
    #expect(reef.object(ofType: Ticket.self, forPrimaryKey: ticket._id)?.seat == "12A")
    #expect(reef.object(ofType: Ticket.self, forPrimaryKey: ObjectId()) == nil)
    #expect(reef.object(ofType: Badge.self, forPrimaryKey: badge.uuid)?.label == "guest")
    #expect(reef.object(ofType: Badge.self, forPrimaryKey: UUID()) == nil)
    let stored = try reef.store.read { try $0.collection("Badge").findOne() }
    #expect(stored?["uuid"] == .binary(Binary(uuid: badge.uuid.uuid)), "a UUID key is binary subtype 4")
  }

  @Test func objectsOfAType() throws {
    let (reef, _) = try openReef()
    #expect(reef.objects(Tenant.self).isEmpty)
    try reef.write { reef.add((1...3).map { makeTenant($0) }) }
    #expect(reef.objects(Tenant.self).count == 3)
    #expect(Set(reef.objects(Tenant.self).map(\.id)) == [1, 2, 3])
  }

  @Test func dynamicAccessByName() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, "Jack", home: makeBuilding("Paris"))
    #expect(tenant["name"] as? String == "Jack")
    try reef.write { reef.add(tenant) }
    #expect(tenant["name"] as? String == "Jack")
    #expect((tenant["home"] as? Building)?.city == "Paris")
    try reef.write {
      tenant["name"] = "Janet"
      tenant["nickname"] = "J"
    }
    #expect(tenant.name == "Janet" && tenant.nickname == "J")
    try reef.write { tenant["nickname"] = nil }
    #expect(tenant.nickname == nil)
  }

  @Test func isEqualComparesIdentity() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("Paris"))
    let other = makeTenant(2)
    #expect(!tenant.isEqual(to: makeTenant(1)), "two unmanaged objects are two objects")
    #expect(tenant.isEqual(to: tenant))
    try reef.write { reef.add([tenant, other]) }
    let found = try #require(reef.object(ofType: Tenant.self, forPrimaryKey: 1))
    #expect(found !== tenant)
    #expect(found.isEqual(to: tenant))
    #expect(!found.isEqual(to: other))
    #expect(!found.isEqual(to: nil))
    #expect(found.home!.isEqual(to: tenant.home))
  }
}
