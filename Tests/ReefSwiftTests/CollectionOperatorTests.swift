import Foundation
import ReefBSON
import ReefSwift
import ReefTestSupport
import Testing

class Bottle: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var label = ""
  @Persisted var volume = 0
  @Persisted var price = 0.0
  @Persisted var cost = Decimal128(0)
  @Persisted var bottled = Date(timeIntervalSince1970: 0)
  @Persisted var note: String?
  @Persisted var cellar: Cellar?
}

class Cellar: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var bottles: List<Bottle>
  @Persisted var racks: MutableSet<Bottle>
  @Persisted var byName: Map<String, Bottle?>
  @Persisted var stock: Map<String, Int>
}

let cellarTypes: [ObjectBase.Type] = [Bottle.self, Cellar.self]

/// Three bottles (volumes 750, 500, 750; prices 10, 20, 30) in one cellar's list, set and map.
func openCellar() throws -> (Reef, Cellar) {
  let (reef, _) = try openReef("cellar", types: cellarTypes)
  let cellar = try reef.write {
    let cellar = reef.create(Cellar.self, value: ["id": 1, "name": "north", "stock": ["red": 12, "white": 3]])
    for (id, label, volume, price) in [(1, "Rioja", 750, 10.0), (2, "Tokaji", 500, 20.0), (3, "Rioja", 750, 30.0)] {
      let bottle = reef.create(
        Bottle.self,
        value: [
          "id": id, "label": label, "volume": volume, "price": price, "cost": Decimal128(Int64(id)),
          "bottled": Date(timeIntervalSince1970: Double(id) * 1000),
        ])
      bottle.note = id == 2 ? nil : "n\(id)"
      cellar.bottles.append(bottle)
      cellar.racks.insert(bottle)
      cellar.byName["b\(id)"] = bottle
    }
    return cellar
  }
  return (reef, cellar)
}

@Suite struct CollectionOperatorTests {
  @Test func keyPathsWithCollectionOperatorsComputeOverTheObjects() throws {
    let (reef, cellar) = try openCellar()
    let bottles = reef.objects(Bottle.self).sorted(byKeyPath: "id")
    #expect(bottles.value(forKeyPath: "@count") as? NSNumber == 3)
    #expect(bottles.value(forKeyPath: "@sum.volume") as? NSNumber == 2000)
    #expect(bottles.value(forKeyPath: "@avg.price") as? NSNumber == 20)
    #expect(bottles.value(forKeyPath: "@min.volume") as? NSNumber == 500)
    #expect(bottles.value(forKeyPath: "@max.bottled") as? Date == Date(timeIntervalSince1970: 3000))
    #expect(bottles.value(forKeyPath: "@max.label") as? String == "Tokaji")
    #expect(bottles.value(forKeyPath: "@sum.cost") as? Decimal128 == Decimal128(6))
    #expect(bottles.value(forKeyPath: "@unionOfObjects.label") as? [String] == ["Rioja", "Tokaji", "Rioja"])
    #expect(bottles.value(forKeyPath: "@distinctUnionOfObjects.label") as? [String] == ["Rioja", "Tokaji"])
    #expect(bottles.value(forKeyPath: "@unionOfObjects.note") as? [String] == ["n1", "n3"], "nil values left out")
    #expect(cellar.bottles.value(forKeyPath: "@sum.price") as? NSNumber == 60)
    #expect(cellar.racks.value(forKeyPath: "@count") as? NSNumber == 3)
    #expect(AnyReefCollection(bottles).value(forKeyPath: "@max.id") as? NSNumber == 3)
    let none = bottles.filter("volume > 1000")
    #expect(none.value(forKeyPath: "@sum.volume") as? NSNumber == 0)
    #expect(none.value(forKeyPath: "@avg.volume") == nil && none.value(forKeyPath: "@min.volume") == nil)
  }

  @Test func aSetGivesItsDistinctValuesAsASet() throws {
    let (_, cellar) = try openCellar()
    #expect(cellar.racks.value(forKey: "label") as? Set<String> == ["Rioja", "Tokaji"])
    #expect(cellar.bottles.value(forKey: "label") as? [String] == ["Rioja", "Tokaji", "Rioja"])
  }

  @Test func anUnknownCollectionOperatorStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openCellar()
        _ = reef.objects(Bottle.self).value(forKeyPath: "@median.volume")
      }
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(text.contains("Unsupported KVC collection operator found in key path '@median.volume'"), "\(text)")
  }

  @Test func aggregatesReadAsFoundationTypes() throws {
    let (reef, _) = try openCellar()
    let bottles = reef.objects(Bottle.self)
    #expect(bottles.sum(ofProperty: "volume") as NSNumber == 2000)
    #expect(bottles.min(ofProperty: "price") as NSNumber? == 10)
    #expect(bottles.max(ofProperty: "volume") as NSNumber? == 750)
    #expect((bottles.min(ofProperty: "bottled") as NSDate?) == NSDate(timeIntervalSince1970: 1000))
    #expect((bottles.max(ofProperty: "bottled") as NSDate?) == NSDate(timeIntervalSince1970: 3000))
    #expect(bottles.filter("id > 5").min(ofProperty: "price") as NSNumber? == nil)
    #expect(bottles.filter("id > 5").sum(ofProperty: "price") as NSNumber == 0)
  }
}

@Suite struct MapKeyPathTests {
  @Test func aMapOfObjectsAggregatesAndSortsBySwiftKeyPaths() throws {
    let (_, cellar) = try openCellar()
    let map = cellar.byName
    #expect(map.min(of: \.volume) == 500 && map.max(of: \.price) == 30)
    #expect(map.sum(of: \.volume) == 2000)
    #expect(map.average(of: \.price) as Double? == 20)
    #expect(map.average(of: \.volume) as Int? == 666, "in the property's type, truncated as Realm's")
    #expect(map.sorted(by: \.price, ascending: false).map(\.id) == [3, 2, 1])
    #expect(map.sorted(by: \.label).map(\.label) == ["Rioja", "Rioja", "Tokaji"])
  }

  @Test func mapsAreEqualWhenTheyAreTheSameMapOrHoldTheSameEntries() throws {
    let (reef, cellar) = try openCellar()
    #expect(cellar.stock == cellar.stock && cellar.stock.isEqual(cellar.stock))
    let again = try #require(reef.object(ofType: Cellar.self, forPrimaryKey: 1))
    #expect(again.stock == cellar.stock, "the same property of the same stored object")
    #expect(cellar.stock.isEqual(cellar.byName) == false)
    let a = Map<String, Int>()
    let b = Map<String, Int>()
    a["x"] = 1
    b["x"] = 1
    #expect(a == b)
    b["x"] = 2
    #expect(a != b && !a.isEqual(b) && !a.isEqual(nil))
    #expect(a != cellar.stock, "an unmanaged map is not a managed one")
    #expect(Dictionary(uniqueKeysWithValues: cellar.stock.map { ($0.key, $0.value) }) == ["red": 12, "white": 3])
  }

  @Test func queriesReadTheKeysAndValuesOfAMap() throws {
    let (reef, _) = try openCellar()
    try reef.write { reef.create(Cellar.self, value: ["id": 2, "name": "south", "stock": ["rose": 40]]) }
    try reef.write { reef.create(Cellar.self, value: ["id": 3, "name": "empty"]) }
    let cellars = reef.objects(Cellar.self).sorted(byKeyPath: "id")
    #expect(cellars.filter("ANY stock.@allKeys == 'red'").map(\.id) == [1])
    #expect(cellars.filter("stock.@allKeys BEGINSWITH 'ro'").map(\.id) == [2])
    #expect(cellars.filter("ANY stock.@allValues > 10").map(\.id) == [1, 2])
    #expect(cellars.filter("ALL stock.@allValues > 10").map(\.id) == [2, 3], "ALL holds for an empty map")
    #expect(cellars.filter("NONE stock.@allValues < 5").map(\.id) == [2, 3])
    #expect(cellars.filter("stock.@allValues == %@", 3).map(\.id) == [1])
  }
}
