import Foundation
import ReefSwift
import ReefTestSupport
import Testing

@Suite struct DistinctThroughLinkTests {
  @Test func distinctThroughALinkLeavesOutObjectsWithoutTheLink() throws {
    let (reef, _) = try openCellarForDescriptions()
    try reef.write {
      let south = reef.create(Cellar.self, value: ["id": 2, "name": "south"])
      reef.create(Bottle.self, value: ["id": 4, "label": "Chablis", "cellar": south])
      reef.create(Bottle.self, value: ["id": 5, "label": "Chablis"])
    }
    let bottles = reef.objects(Bottle.self).sorted(byKeyPath: "id")
    #expect(bottles.distinct(by: ["cellar.name"]).map(\.id) == [1, 4], "the first of each, the unlinked one left out")
    #expect(bottles.distinct(by: ["label"]).map(\.id) == [1, 2, 4])
  }

  @Test func distinctThroughAListStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef("cellar", types: [Bottle.self, Cellar.self])
        _ = reef.objects(Cellar.self).distinct(by: ["bottles.volume"])
      }
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(
      text.contains(
        "Cannot sort on key path 'bottles.volume': property 'Cellar.bottles' is of unsupported type 'array'."),
      "\(text)")
  }

  @Test func creatingAnEmbeddedObjectByNameStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        try reef.write { reef.add(makeTenant(1, home: makeBuilding("Lyon"))) }
        try reef.write { _ = reef.dynamicCreate("Building", value: ["city": "Paris"]) }
      }
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(text.contains("Embedded objects cannot be created directly"), "\(text)")
  }
}
