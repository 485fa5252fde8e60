import Foundation
import ReefSwift
import Testing

/// An object that a shelf holds, by a list and a set, and that links to its shelf.
final class LoopItem: Object {
  @Persisted var label = ""
  @Persisted var shelf: LoopShelf?
}

/// Holds items in a list and in a set; finds the items that link to it.
final class LoopShelf: Object {
  @Persisted var items: List<LoopItem>
  @Persisted var itemSet: MutableSet<LoopItem>
  @Persisted var labels: List<String>
  @Persisted(originProperty: "shelf") var linked: LinkingObjects<LoopItem>
}

/// A loop over a collection enumerates the collection as it was when the loop began, as Realm's:
/// a loop that appends to the list it reads ends, and a loop that deletes the objects it reads
/// deletes each of them.
@Suite struct SnapshotEnumerationTests {
  /// A shelf with items "a", "b", "c" in its list and set, each linking to it, added.
  private func filledShelf() throws -> (Reef, LoopShelf) {
    let (reef, _) = try openReef()
    let shelf = LoopShelf()
    for label in ["a", "b", "c"] {
      let item = LoopItem()
      item.label = label
      item.shelf = shelf
      shelf.items.append(item)
      shelf.itemSet.insert(item)
    }
    shelf.labels.append(objectsIn: ["a", "b", "c"])
    try reef.write { reef.add(shelf) }
    return (reef, shelf)
  }

  @Test func aLoopThatAppendsToAnUnmanagedListSeesEachElementOnce() {
    let shelf = LoopShelf()
    shelf.labels.append(objectsIn: ["a", "b"])
    var seen: [String] = []
    for label in shelf.labels {
      seen.append(label)
      shelf.labels.append(label + "!")
    }
    #expect(seen == ["a", "b"])
    #expect(Array(shelf.labels) == ["a", "b", "a!", "b!"])
  }

  @Test func aLoopThatAppendsToAManagedListSeesEachElementOnce() throws {
    let (reef, shelf) = try filledShelf()
    var seen: [String] = []
    try reef.write {
      for item in shelf.items {
        seen.append(item.label)
        shelf.items.append(item)
      }
      for label in shelf.labels { shelf.labels.append(label) }
    }
    #expect(seen == ["a", "b", "c"])
    #expect(shelf.items.map(\.label) == ["a", "b", "c", "a", "b", "c"])
    #expect(Array(shelf.labels) == ["a", "b", "c", "a", "b", "c"])
  }

  @Test func aLoopThatRemovesFromAManagedSetSeesEachElementOnce() throws {
    let (reef, shelf) = try filledShelf()
    var seen: [String] = []
    try reef.write {
      for item in shelf.itemSet {
        seen.append(item.label)
        shelf.itemSet.remove(item)
      }
    }
    #expect(seen.sorted() == ["a", "b", "c"])
    #expect(shelf.itemSet.isEmpty)
  }

  @Test(arguments: ["results", "filtered", "list", "set", "linkingObjects"])
  func aLoopOverAnErasedCollectionDeletesEachObjectItReads(_ kind: String) throws {
    let (reef, shelf) = try filledShelf()
    let collection: AnyReefCollection<LoopItem> =
      switch kind {
      case "results": AnyReefCollection(reef.objects(LoopItem.self))
      case "filtered": AnyReefCollection(reef.objects(LoopItem.self).filter("label != ''"))
      case "list": AnyReefCollection(shelf.items)
      case "set": AnyReefCollection(shelf.itemSet)
      default: AnyReefCollection(shelf.linked)
      }
    #expect(collection.count == 3)
    var seen: [String] = []
    try reef.write {
      for item in collection {
        seen.append(item.label)
        reef.delete(item)
      }
    }
    #expect(seen.sorted() == ["a", "b", "c"])
    #expect(collection.count == 0)
    #expect(reef.objects(LoopItem.self).isEmpty)
  }
}
