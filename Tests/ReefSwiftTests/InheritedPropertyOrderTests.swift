import Foundation
import ReefSwift
import Testing

// A model's properties in Realm's order: a superclass's first.

class OrderedParent: Object {
  @Persisted var parentFirst = 0
  @Persisted var parentSecond = ""
}

class OrderedChild: OrderedParent {
  @Persisted var childFirst = 0
  @Persisted var childList: List<String>
  @Persisted var childLast: ReefOptional<Int>
}

@Suite struct InheritedPropertyOrderTests {
  @Test func aSuperclasssPropertiesComeFirst() {
    #expect(
      OrderedChild.sharedSchema()?.properties.map(\.name) == [
        "parentFirst", "parentSecond", "childFirst", "childList", "childLast",
      ])
  }

  @Test func anArrayValueFollowsThatOrder() throws {
    let object = OrderedChild(value: [7, "seven", 8, ["a", "b"], 9] as [Any])
    #expect(object.parentFirst == 7)
    #expect(object.parentSecond == "seven")
    #expect(object.childFirst == 8)
    #expect(Array(object.childList) == ["a", "b"])
    #expect(object.childLast.value == 9)
    let (reef, _) = try openReef()
    try reef.write { _ = reef.create(OrderedChild.self, value: [1, "one", 2, [] as [String], NSNull()] as [Any]) }
    let stored = try #require(reef.objects(OrderedChild.self).first)
    #expect(stored.parentSecond == "one")
    #expect(stored.childFirst == 2)
    #expect(stored.childLast.value == nil)
  }
}
