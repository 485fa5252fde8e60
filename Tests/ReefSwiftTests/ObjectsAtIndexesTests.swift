import Foundation
import ReefSwift
import Testing

/// `objects(at:)` gives the objects at the positions asked, in order, for every kind of
/// collection, erased or not, and stops with Realm's message for a position out of bounds.
@Suite struct ObjectsAtIndexesTests {
  /// Item labels of each collection kind holding "a", "b", "c" (a list made in a write
  /// transaction, as Realm's tests make theirs).
  private func collections() throws -> [String: AnyReefCollection<LoopItem>] {
    let (reef, _) = try openReef()
    var shelf: LoopShelf?
    try reef.write {
      let made = reef.create(LoopShelf.self)
      for label in ["a", "b", "c"] {
        let item = reef.create(LoopItem.self, value: ["label": label, "shelf": made])
        made.items.append(item)
        made.itemSet.insert(item)
      }
      shelf = made
    }
    let made = try #require(shelf)
    return [
      "results": AnyReefCollection(reef.objects(LoopItem.self).sorted(byKeyPath: "label")),
      "list": AnyReefCollection(made.items),
      "list results": AnyReefCollection(made.items.filter(NSPredicate(value: true))),
      "linking objects": AnyReefCollection(made.linked.sorted(byKeyPath: "label")),
    ]
  }

  @Test func objectsAtIndexesAreTheObjectsAtThosePositions() throws {
    for (kind, collection) in try collections() {
      #expect(collection.objects(at: [0, 2]).map(\.label) == ["a", "c"], "\(kind)")
      #expect(collection.objects(at: IndexSet()).isEmpty, "\(kind)")
    }
  }

  @Test func anIndexOutOfBoundsStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        try reef.write { _ = reef.create(LoopItem.self, value: ["label": "a"]) }
        _ = AnyReefCollection(reef.objects(LoopItem.self)).objects(at: [0, 10])
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Indexes for collection are out of bounds."), "\(stderr)")
  }
}
