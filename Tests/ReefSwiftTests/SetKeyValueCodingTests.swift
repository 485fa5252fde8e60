import Foundation
import ReefSwift
import Testing

/// Key-value coding on a `MutableSet` gives a set of the values, as Realm's (an `NSSet`), also
/// through `AnyReefCollection`.
@Suite struct SetKeyValueCodingTests {
  @Test func aSetOfObjectsGivesItsValuesAsASet() throws {
    let (reef, _) = try openReef()
    let shelf = LoopShelf()
    for label in ["a", "b", "b"] {
      let item = LoopItem()
      item.label = label
      shelf.itemSet.insert(item)
    }
    try reef.write { reef.add(shelf) }
    #expect(shelf.itemSet.value(forKey: "label") as? Set<String> == ["a", "b"])
    let erased = AnyReefCollection(shelf.itemSet)
    #expect(erased.value(forKey: "label") as? Set<String> == ["a", "b"])
    let nils = try #require(erased.value(forKey: "shelf") as? Set<AnyHashable>)
    #expect(nils.isEmpty, "nil values are left out, as NSSet's valueForKey: leaves them out")
    let objects = try #require(erased.value(forKey: "self") as? Set<LoopItem>)
    #expect(objects.map(\.label).sorted() == ["a", "b", "b"])
    #expect(AnyReefCollection(shelf.items).value(forKey: "label") as? [String] == [], "a list's are an array")
  }
}
