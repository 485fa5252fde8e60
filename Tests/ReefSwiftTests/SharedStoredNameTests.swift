import Foundation
import ReefSwift
import Testing

// Two pairs of model classes, each pair stored as one type: className() gives both classes of a
// pair the same name and their properties are mapped to the same stored names, as Realm lets
// two classes read one table. The linking objects of each item class have their origins in
// either holder class.

class SharedItemFirst: Object {
  @Persisted var count = 0
  @Persisted var label = ""
  @Persisted(originProperty: "targetFirst") var fromFirstHolders: LinkingObjects<SharedHolderFirst>
  @Persisted(originProperty: "targetSecond") var fromSecondHolders: LinkingObjects<SharedHolderSecond>
  override class func className() -> String { "Shared Item" }
  override class func propertiesMapping() -> [String: String] { ["count": "item count", "label": "item label"] }
}

class SharedItemSecond: Object {
  @Persisted var number = 0
  @Persisted var text = ""
  @Persisted(originProperty: "targetFirst") var fromFirstHolders: LinkingObjects<SharedHolderFirst>
  @Persisted(originProperty: "targetSecond") var fromSecondHolders: LinkingObjects<SharedHolderSecond>
  override class func className() -> String { "Shared Item" }
  override class func propertiesMapping() -> [String: String] { ["number": "item count", "text": "item label"] }
}

class SharedHolderFirst: Object {
  @Persisted var targetFirst: SharedItemFirst?
  @Persisted var itemsFirst: List<SharedItemFirst>
  override class func className() -> String { "Shared Holder" }
  override class func propertiesMapping() -> [String: String] { ["targetFirst": "target", "itemsFirst": "items"] }
}

class SharedHolderSecond: Object {
  @Persisted var targetSecond: SharedItemSecond?
  @Persisted var itemsSecond: List<SharedItemSecond>
  override class func className() -> String { "Shared Holder" }
  override class func propertiesMapping() -> [String: String] { ["targetSecond": "target", "itemsSecond": "items"] }
}

@Suite struct SharedStoredNameTests {
  /// Adds a holder linking to an item through the first classes, then reads both back through
  /// the second classes.
  private func checkSharedType(_ reef: Reef) throws {
    let item = SharedItemFirst()
    item.count = 5
    item.label = "a"
    let holder = SharedHolderFirst()
    holder.targetFirst = item
    holder.itemsFirst.append(item)
    try reef.write { reef.add(holder) }

    #expect(item.fromFirstHolders.count == 1)
    #expect(item.fromFirstHolders.first?.isSameObject(as: holder) == true)
    #expect(item.fromSecondHolders.count == 1, "the second holder class reads the same stored holder")

    let itemSecond = try #require(reef.objects(SharedItemSecond.self).first)
    #expect(reef.objects(SharedItemSecond.self).count == 1)
    #expect(itemSecond.number == 5)
    #expect(itemSecond.text == "a")
    #expect(itemSecond.fromFirstHolders.first?.isSameObject(as: holder) == true)
    let holderSecond = try #require(reef.objects(SharedHolderSecond.self).first)
    #expect(holderSecond.targetSecond?.number == 5)
    #expect(holderSecond.itemsSecond.map(\.text) == ["a"])
    #expect(itemSecond.fromSecondHolders.count == 1)
  }

  @Test func linkingObjectsWhoseOriginLinksToAnotherClassOfTheSameNameAreAccepted() throws {
    let (reef, _) = try openReef(types: [
      SharedItemFirst.self, SharedItemSecond.self, SharedHolderFirst.self, SharedHolderSecond.self,
    ])
    try checkSharedType(reef)
  }

  @Test func classesOfTheSameNameAreAcceptedWhenFirstUsed() throws {
    let (reef, _) = try openReef()
    try checkSharedType(reef)
  }
}
