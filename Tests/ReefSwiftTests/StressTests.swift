import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// Five levels of embedded objects, each a distinct type.
class LevelFive: EmbeddedObject {
  @Persisted var leaf = ""
}

class LevelFour: EmbeddedObject {
  @Persisted var next: LevelFive?
  @Persisted var items: List<LevelFive>
}

class LevelThree: EmbeddedObject {
  @Persisted var next: LevelFour?
}

class LevelTwo: EmbeddedObject {
  @Persisted var next: LevelThree?
}

class LevelOne: EmbeddedObject {
  @Persisted var next: LevelTwo?
}

class Nest: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var root: LevelOne?
}

@Suite struct StressTests {
  @Test func tenThousandObjects() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for id in 0..<10_000 {
        let tenant = makeTenant(id, "tenant \(id)", home: makeBuilding("City \(id % 100)"))
        tenant.age = id % 90
        reef.add(tenant)
      }
    }
    let tenants = reef.objects(Tenant.self)
    #expect(tenants.count == 10_000)
    #expect(tenants.filter("home.city == 'City 7'").count == 100)
    #expect(reef.object(ofType: Tenant.self, forPrimaryKey: 9_999)?.name == "tenant 9999")
    var total = 0
    for tenant in tenants { total += tenant.age }
    #expect(total == (0..<10_000).reduce(0) { $0 + $1 % 90 })
    #expect(tenants.sorted(byKeyPath: "id", ascending: false).first?.id == 9_999)
    try reef.write { reef.delete(tenants.filter("age >= 45")) }
    #expect(tenants.count == (0..<10_000).filter { $0 % 90 < 45 }.count)
  }

  @Test func aOneMegabyteString() throws {
    let (reef, _) = try openReef()
    let big = String(repeating: "0123456789abcdef", count: 65_536)
    #expect(big.utf8.count == 1 << 20)
    try reef.write { reef.add(makeTenant(1, big, home: makeBuilding(big))) }
    reef.refresh()
    let tenant = try #require(reef.object(ofType: Tenant.self, forPrimaryKey: 1))
    #expect(tenant.name == big)
    #expect(tenant.home?.city == big)
    try reef.write { tenant.home?.street = "small" }
    #expect(tenant.name == big)
  }

  @Test func aDocumentOverSixteenMegabytesIsRefused() throws {
    let (reef, _) = try openReef()
    let big = String(repeating: "x", count: 9 << 20)
    #expect(throws: ReefError.self) { try reef.write { reef.add(makeTenant(1, big, home: makeBuilding(big))) } }
    #expect(reef.objects(Tenant.self).isEmpty)
  }

  @Test func deepEmbeddedNesting() throws {
    let (reef, _) = try openReef()
    let nest = Nest()
    nest.root = LevelOne(value: [
      "next": ["next": ["next": ["next": ["leaf": "deep"], "items": [["leaf": "a"], ["leaf": "b"]]]]]
    ])
    try reef.write { reef.add(nest) }
    #expect(nest.root?.next?.next?.next?.next?.leaf == "deep")
    #expect(nest.root?.next?.next?.next?.items.map(\.leaf) == ["a", "b"])
    try reef.write { nest.root?.next?.next?.next?.items[1].leaf = "B" }
    let stored = try reef.store.read { try $0.collection("Nest").findOne() }
    #expect(
      stored?["root"]
        == .document([
          "next": ["next": ["next": ["next": ["leaf": "deep"], "items": [["leaf": "a"], ["leaf": "B"]]]]]
        ]))
    #expect(reef.objects(Nest.self).filter("root.next.next.next.next.leaf == 'deep'").count == 1)
    let leaf = try #require(nest.root?.next?.next?.next?.next)
    try reef.write { nest.root?.next = nil }
    #expect(leaf.isInvalidated, "deleting an ancestor invalidates the deepest object")
  }

  @Test func unicodePropertyValues() throws {
    let (reef, _) = try openReef()
    let names = ["Zoë", "東京", "👩‍👩‍👧‍👦", "Ωmega", "e\u{301}", "\u{0}nul"]
    try reef.write {
      for (id, name) in names.enumerated() { reef.add(makeTenant(id, name, home: makeBuilding(name))) }
    }
    for (id, name) in names.enumerated() {
      let tenant = reef.object(ofType: Tenant.self, forPrimaryKey: id)
      #expect(tenant?.name == name && tenant?.home?.city == name, "\(name)")
    }
    #expect(reef.objects(Tenant.self).filter("name == %@", "東京").count == 1)
    #expect(reef.objects(Tenant.self).filter("home.city == %@", "👩‍👩‍👧‍👦").count == 1)
    let landlord = Landlord(value: ["name": "Ünïcödé 🔑"])
    try reef.write { reef.add(landlord) }
    #expect(reef.object(ofType: Landlord.self, forPrimaryKey: "Ünïcödé 🔑") != nil)
  }

  @Test func anEmptyList() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1)
    try reef.write { reef.add(tenant) }
    #expect(tenant.buildings.isEmpty && tenant.buildings.count == 0 && tenant.buildings.first == nil)
    #expect(Array(tenant.pets).isEmpty)
    #expect(try storedTenant(reef, 1)?["buildings"] == .array([]))
    #expect(reef.objects(Tenant.self).filter("buildings.@count == 0").count == 1)
    try reef.write { tenant.buildings.removeAll() }
    #expect(tenant.buildings.isEmpty)
  }
}
