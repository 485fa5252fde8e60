import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

@Suite struct ResultsTests {
  /// Five tenants: ids 1...5, ages 50, 40, 30, 20, 10, homes in cities E, D, C, B, A.
  private func fiveTenants() throws -> Reef {
    let (reef, _) = try openReef()
    try reef.write {
      for id in 1...5 {
        let tenant = makeTenant(id, "t\(id)", home: makeBuilding(["E", "D", "C", "B", "A"][id - 1], flat: id))
        tenant.age = 60 - 10 * id
        tenant.score = Double(id) / 2
        tenant.nickname = id.isMultiple(of: 2) ? "even" : nil
        reef.add(tenant)
      }
    }
    return reef
  }

  @Test func countFirstLastIndexAndIteration() throws {
    let reef = try fiveTenants()
    let results = reef.objects(Tenant.self).sorted(byKeyPath: "id")
    #expect(results.count == 5)
    #expect(results.first?.id == 1)
    #expect(results.last?.id == 5)
    #expect(results[2].id == 3)
    #expect(results.map(\.id) == [1, 2, 3, 4, 5])
    var seen: [Int] = []
    for tenant in results { seen.append(tenant.id) }
    #expect(seen == [1, 2, 3, 4, 5])
    #expect(results.firstIndex { $0.id == 4 } == 3)
    #expect(reef.objects(Tenant.self).filter("id > 100").first == nil)
    #expect(reef.objects(Tenant.self).filter("id > 100").last == nil)
  }

  @Test func descriptionListsTheObjects() throws {
    let reef = try fiveTenants()
    let text = reef.objects(Tenant.self).sorted(byKeyPath: "id").filter("id <= 2").description
    let lines = text.split(separator: "\n").map(String.init)
    // Realm's form: the type, the address of the results, then each object indented, with a
    // comma between them.
    #expect(lines.first?.wholeMatch(of: /Results<Tenant> <0x[0-9a-f]+> \(/) != nil, "\(text)")
    #expect(lines.last == ")")
    #expect(lines.contains("\t[0] Tenant {") && lines.contains("\t[1] Tenant {"))
    #expect(lines.contains("\t\tid = 1;") && lines.contains("\t\tid = 2;"))
    #expect(lines.contains("\t},"))
    #expect(!lines.contains("\t\tid = 3;"))
  }

  @Test func resultsAreLive() throws {
    let reef = try fiveTenants()
    let adults = reef.objects(Tenant.self).filter("age >= 30")
    #expect(adults.count == 3)
    try reef.write { reef.add(makeTenant(6, "new")) }
    #expect(adults.count == 3)
    try reef.write { reef.object(ofType: Tenant.self, forPrimaryKey: 6)?.age = 99 }
    #expect(adults.count == 4)
    #expect(adults.contains { $0.id == 6 })
    try reef.write { reef.delete(reef.object(ofType: Tenant.self, forPrimaryKey: 1)!) }
    #expect(adults.count == 3)
    #expect(adults.map(\.id).sorted() == [2, 3, 6])
  }

  @Test func filterWithArgumentsOfEachType() throws {
    let (reef, _) = try openReef()
    let when = Date(timeIntervalSince1970: 1_700_000_000)
    let oid = ObjectId()
    let uuid = UUID()
    try reef.write {
      let gauge = Gauge()
      gauge.id = 1
      gauge.flag = true
      gauge.small = 7
      gauge.reading = 2.5
      gauge.label = "Wärme"
      gauge.stamp = when
      gauge.blob = Data([1, 2])
      gauge.oid = oid
      gauge.uuid = uuid
      gauge.decimal = Decimal128(12)
      gauge.level = .high
      reef.add(gauge)
      let other = Gauge()
      other.id = 2
      other.label = "cold"
      other.note = "n"
      reef.add(other)
    }
    let gauges = reef.objects(Gauge.self)
    #expect(gauges.filter("id == %@", 1).count == 1, "Int")
    #expect(gauges.filter("flag == %@", true).count == 1, "Bool")
    #expect(gauges.filter("small == %@", Int32(7)).count == 1, "Int32")
    #expect(gauges.filter("reading > %@", 2.0).count == 1, "Double")
    #expect(gauges.filter("reading > %@", Float(2)).count == 1, "Float")
    #expect(gauges.filter("label == %@", "Wärme").count == 1, "String")
    #expect(gauges.filter("label ==[c] %@", "WÄRME").count == 1, "String, case-insensitive")
    #expect(gauges.filter("stamp == %@", when).count == 1, "Date")
    #expect(gauges.filter("stamp < %@", when).count == 1, "Date")
    #expect(gauges.filter("blob == %@", Data([1, 2])).count == 1, "Data")
    #expect(gauges.filter("oid == %@", oid).count == 1, "ObjectId")
    #expect(gauges.filter("uuid == %@", uuid).count == 1, "UUID")
    #expect(gauges.filter("decimal == %@", Decimal128(12)).count == 1, "Decimal128")
    #expect(gauges.filter("level == %@", GaugeLevel.high).count == 1, "enum")
    #expect(gauges.filter("note == %@", nil as String? as Any).count == 1, "nil")
    #expect(gauges.filter("note == nil").count == 1, "nil literal")
    #expect(gauges.filter("id IN %@", [1, 2, 3]).count == 2, "array")
    #expect(gauges.filter("id == $0 AND label == $1", 2, "cold").count == 1, "$n arguments")
  }

  @Test func filterWithAnObjectArgumentMatchesItsLink() throws {
    let (reef, _) = try openReef()
    let roper = Landlord(value: ["name": "Roper"])
    let a = makeTenant(1)
    a.landlord = roper
    try reef.write { reef.add([a, makeTenant(2)]) }
    #expect(reef.objects(Tenant.self).filter("landlord == %@", roper).map(\.id) == [1])
    #expect(reef.objects(Tenant.self).filter("landlord.rent == 0").map(\.id) == [1], "through a link")
  }

  @Test func filterThroughEmbeddedObjectsAndLists() throws {
    let reef = try fiveTenants()
    try reef.write {
      reef.object(ofType: Tenant.self, forPrimaryKey: 2)?.buildings.append(makeBuilding("Paris", flat: 77))
    }
    let tenants = reef.objects(Tenant.self)
    #expect(tenants.filter("home.city == 'C'").map(\.id) == [3])
    #expect(tenants.filter("home.flat.number == 4").map(\.id) == [4])
    #expect(tenants.filter("home.flat.doorbell.tone == 'ding'").count == 5)
    #expect(tenants.filter("ANY buildings.city == 'Paris'").map(\.id) == [2])
    #expect(tenants.filter("buildings.@count > 0").map(\.id) == [2])
  }

  @Test func filterWithAMongoDBDocument() throws {
    let reef = try fiveTenants()
    let results = reef.objects(Tenant.self).filter(document: ["home.city": ["$in": ["A", "B"]]])
    #expect(Set(results.map(\.id)) == [4, 5])
    #expect(reef.objects(Tenant.self).filter(document: ["id": 3]).count == 1, "the Swift name of a key mapped to _id")
    #expect(results.filter("age > 10").map(\.id) == [4], "filters combine")
  }

  @Test func sortedThroughEmbeddedObjects() throws {
    let reef = try fiveTenants()
    let byCity = reef.objects(Tenant.self).sorted(byKeyPath: "home.city")
    #expect(byCity.map(\.id) == [5, 4, 3, 2, 1])
    let byFlat = reef.objects(Tenant.self).sorted(byKeyPath: "home.flat.number", ascending: false)
    #expect(byFlat.map(\.id) == [5, 4, 3, 2, 1])
  }

  @Test func sortedThroughALink() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for (id, name) in [(1, "b"), (2, "c"), (3, "a")] {
        let tenant = makeTenant(id)
        tenant.landlord = Landlord(value: ["name": name, "rent": 10 - id])
        reef.add(tenant)
      }
    }
    #expect(reef.objects(Tenant.self).sorted(byKeyPath: "landlord.rent").map(\.id) == [3, 2, 1])
  }

  @Test func sortedByDescriptors() throws {
    let reef = try fiveTenants()
    let results = reef.objects(Tenant.self).sorted(by: [
      SortDescriptor(keyPath: "nickname", ascending: false), SortDescriptor(keyPath: "age"),
    ])
    #expect(results.map(\.id) == [4, 2, 5, 3, 1])
    let literal = reef.objects(Tenant.self).sorted(by: ["score"])
    #expect(literal.map(\.id) == [1, 2, 3, 4, 5])
  }

  @Test func distinctBy() throws {
    let reef = try fiveTenants()
    let distinct = reef.objects(Tenant.self).sorted(byKeyPath: "id").distinct(by: ["nickname"])
    #expect(distinct.map(\.id) == [1, 2])
    let two = reef.objects(Tenant.self).distinct(by: ["nickname", "home.city"])
    #expect(two.count == 5)
  }

  @Test func aggregates() throws {
    let reef = try fiveTenants()
    let tenants = reef.objects(Tenant.self)
    #expect(tenants.min(ofProperty: "age") as Int? == 10)
    #expect(tenants.max(ofProperty: "age") as Int? == 50)
    #expect(tenants.sum(ofProperty: "age") as Int == 150)
    #expect(tenants.average(ofProperty: "age") as Double? == 30.0)
    #expect(tenants.sum(ofProperty: "score") as Double == 7.5)
    #expect(tenants.max(ofProperty: "home.flat.number") as Int? == 5, "through embedded objects")
    #expect(tenants.min(ofProperty: "home.city") as String? == "A")
    let none = tenants.filter("id > 100")
    #expect(none.min(ofProperty: "age") as Int? == nil)
    #expect(none.sum(ofProperty: "age") as Int == 0)
    #expect(none.average(ofProperty: "age") as Double? == nil)
    #expect(tenants.filter("age > 25").average(ofProperty: "age") as Double? == 40.0)
  }

  @Test func listsFilterAndSortTheirLinks() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1)
    tenant.pets.append(objectsIn: [("Polly", 3), ("Kiki", 10), ("Rio", 1)].map { Parrot(value: [$0.0, $0.1]) })
    try reef.write { reef.add(tenant) }
    #expect(tenant.pets.filter("words > 2").count == 2)
    #expect(tenant.pets.sorted(byKeyPath: "words").map(\.name) == ["Rio", "Polly", "Kiki"])
  }
}
