import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

@Suite struct LinkTests {
  @Test func aToOneLinkStoresTheTargetsPrimaryKey() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1)
    tenant.landlord = Landlord(value: ["name": "Roper", "rent": 5])
    try reef.write { reef.add(tenant) }
    #expect(try storedTenant(reef, 1)?["landlord"] == "Roper")
    #expect(tenant.landlord?.rent == 5)
    #expect(reef.objects(Landlord.self).count == 1, "the target was added with its origin")
  }

  @Test func aListOfLinksWithoutPrimaryKeyStoresTheHiddenIDs() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1)
    tenant.pets.append(objectsIn: [Parrot(value: ["name": "Polly"]), Parrot(value: ["name": "Kiki"])])
    try reef.write { reef.add(tenant) }
    let ids = try reef.store.read { try $0.collection("Parrot").find().toArray() }.compactMap { $0["_id"] }
    #expect(ids.count == 2 && ids.allSatisfy { $0.type == .objectId })
    guard case .array(let stored)? = try storedTenant(reef, 1)?["pets"] else {
      Issue.record("no pets array")
      return
    }
    #expect(Set(Array(stored)) == Set(ids))
    #expect(tenant.pets.map(\.name) == ["Polly", "Kiki"])
  }

  @Test func deletingATargetNilsToOneLinksInTheSameTransaction() throws {
    let (reef, _) = try openReef()
    let landlord = Landlord(value: ["name": "Roper"])
    let a = makeTenant(1)
    a.landlord = landlord
    let b = makeTenant(2)
    b.landlord = landlord
    try reef.write { reef.add([a, b]) }
    try reef.write {
      reef.delete(landlord)
      #expect(a.landlord == nil, "within the transaction")
    }
    #expect(a.landlord == nil && b.landlord == nil)
    #expect(try storedTenant(reef, 2)?["landlord"] == .null)
  }

  @Test func deletingATargetRemovesItFromLists() throws {
    let (reef, _) = try openReef()
    let polly = Parrot(value: ["name": "Polly"])
    let kiki = Parrot(value: ["name": "Kiki"])
    let a = makeTenant(1)
    a.pets.append(objectsIn: [polly, kiki])
    let b = makeTenant(2)
    b.pets.append(polly)
    try reef.write { reef.add([a, b]) }
    try reef.write { reef.delete(polly) }
    #expect(a.pets.map(\.name) == ["Kiki"])
    #expect(b.pets.isEmpty)
  }

  @Test func aDeleteThatIsRolledBackKeepsTheLinks() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1)
    tenant.landlord = Landlord(value: ["name": "Roper"])
    try reef.write { reef.add(tenant) }
    _ = try? reef.write {
      reef.delete(tenant.landlord!)
      throw DeliberateFailure()
    }
    #expect(tenant.landlord?.name == "Roper")
  }

  @Test func deletingATargetNilsLinksFromInsideEmbeddedObjects() throws {
    let (reef, _) = try openReef()
    let holder = LinkingBuildingOwner()
    holder.building = LinkingBuilding()
    holder.building?.manager = Landlord(value: ["name": "Roper"])
    try reef.write { reef.add(holder) }
    #expect(holder.building?.manager?.name == "Roper")
    let roper = try #require(reef.object(ofType: Landlord.self, forPrimaryKey: "Roper"))
    try reef.write { reef.delete(roper) }
    let stored = try reef.store.read { try $0.collection("LinkingBuildingOwner").findOne() }
    #expect(stored?["building"] == .document(["manager": .null]))
    #expect(holder.building?.manager == nil, "a dangling link reads as nil")
  }

  @Test func deletingATargetOfATypeThisReefHasNotUsedYetRemovesLinks() throws {
    let (reef, path) = try openReef()
    let perch = Perch()
    perch.bird = Budgie(value: ["name": "Joey"])
    try reef.write { reef.add(perch) }
    // Another Reef on another thread knows only Budgie (which has no backlinks) when it deletes.
    let failure = onAnotherThread { () throws in
      let other = try Reef(fileURL: URL(fileURLWithPath: path))
      try other.write { other.delete(other.object(ofType: Budgie.self, forPrimaryKey: "Joey")!) }
    }
    #expect(failure == nil)
    reef.refresh()
    let stored = try reef.store.read { try $0.collection("Perch").findOne() }
    #expect(stored?["bird"] == .null)
    #expect(perch.bird == nil, "a dangling link reads as nil")
  }

  @Test func aListLosesATargetDeletedByAReefThatDoesNotKnowTheList() throws {
    let (reef, path) = try openReef()
    let perch = Perch()
    perch.flock.append(Budgie(value: ["name": "Joey"]))
    try reef.write { reef.add(perch) }
    let failure = onAnotherThread { () throws in
      let other = try Reef(fileURL: URL(fileURLWithPath: path))
      try other.write { other.delete(other.object(ofType: Budgie.self, forPrimaryKey: "Joey")!) }
    }
    #expect(failure == nil)
    reef.refresh()
    #expect(perch.flock.count == 0)
  }

  @Test func aListThatStillHoldsADeletedTargetCanBeRead() async {
    await #expect(processExitsWith: .success) {
      runOrExitCleanly {
        let (reef, path) = try openReef()
        let perch = Perch()
        perch.flock.append(objectsIn: [Budgie(value: ["name": "Joey"]), Budgie(value: ["name": "Kiki"])])
        try reef.write { reef.add(perch) }
        let failure = onAnotherThread { () throws in
          let other = try Reef(fileURL: URL(fileURLWithPath: path))
          try other.write { other.delete(other.object(ofType: Budgie.self, forPrimaryKey: "Joey")!) }
        }
        guard failure == nil else { exit(2) }
        reef.refresh()
        _ = perch.flock.map(\.name)
      }
    }
  }

  @Test func linkingObjectsListTheOrigins() throws {
    let (reef, _) = try openReef()
    let landlord = Landlord(value: ["name": "Roper"])
    let tenants = (1...3).map { makeTenant($0, "t\($0)") }
    for tenant in tenants { tenant.landlord = landlord }
    let polly = Parrot(value: ["name": "Polly"])
    tenants[0].pets.append(polly)
    tenants[2].pets.append(polly)
    try reef.write { reef.add(tenants) }
    #expect(landlord.tenants.count == 3)
    #expect(Set(landlord.tenants.map(\.name)) == ["t1", "t2", "t3"])
    #expect(Set(polly.owners.map(\.id)) == [1, 3])
    try reef.write { tenants[1].landlord = nil }
    #expect(landlord.tenants.count == 2, "linking objects are live")
    try reef.write { reef.delete(tenants[0]) }
    #expect(polly.owners.map(\.id) == [3])
  }

  @Test func linkingObjectsOfAnUnmanagedObjectAreEmpty() {
    #expect(Landlord().tenants.isEmpty)
  }

  @Test func aCycleOfLinksIsAddedOnce() throws {
    let (reef, _) = try openReef()
    let hen = Hen(value: ["name": "Henny"])
    let egg = Egg(value: ["name": "Eggy"])
    hen.egg = egg
    egg.hen = hen
    try reef.write { reef.add(hen) }
    #expect(reef.objects(Hen.self).count == 1 && reef.objects(Egg.self).count == 1)
    #expect(hen.egg?.hen?.name == "Henny")
    #expect(egg.hen?.egg?.name == "Eggy")
    #expect(try reef.store.read { try $0.collection("Egg").findOne() }?["hen"] == "Henny")
  }

  @Test func anObjectThatLinksItself() throws {
    let (reef, _) = try openReef()
    let narcissus = makeTenant(1, "Narcissus")
    narcissus.partner = narcissus
    try reef.write { reef.add(narcissus) }
    #expect(narcissus.partner?.name == "Narcissus")
    #expect(try storedTenant(reef, 1)?["partner"] == .int64(1))
    try reef.write { reef.delete(narcissus) }
    #expect(reef.objects(Tenant.self).isEmpty)
  }

  @Test func aLinkToAManagedObjectAddsNothing() throws {
    let (reef, _) = try openReef()
    let landlord = Landlord(value: ["name": "Roper"])
    try reef.write { reef.add(landlord) }
    let tenant = makeTenant(1)
    tenant.landlord = landlord
    try reef.write { reef.add(tenant) }
    #expect(reef.objects(Landlord.self).count == 1)
    try reef.write { tenant.landlord = nil }
    try reef.write { tenant.landlord = landlord }
    #expect(tenant.landlord?.name == "Roper")
  }
}

/// An embedded object with a link.
class LinkingBuilding: EmbeddedObject {
  @Persisted var manager: Landlord?
}

class LinkingBuildingOwner: Object {
  @Persisted var building: LinkingBuilding?
}

/// A link target that does not know who links to it.
class Budgie: Object {
  @Persisted(primaryKey: true) var name = ""
}

class Perch: Object {
  @Persisted var bird: Budgie?
  @Persisted var flock: List<Budgie>
}
