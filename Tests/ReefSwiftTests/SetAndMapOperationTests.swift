import Foundation
import ReefSwift
import Testing

/// Realm's `MutableSet` and `Map` API: positions, set algebra, entries, merging, aggregates,
/// queries over their objects, equality and description.
@Suite struct SetAndMapOperationTests {
  @Test func aSetIsReadByPositionInItsStoredOrder() throws {
    let set = MutableSet<Int>()
    set.insert(objectsIn: [5, 6, 5, 7])
    #expect(set.count == 3 && set[0] == 5 && set[2] == 7)
    #expect(set.first == 5 && set.last == 7)
    #expect(set.objects(at: IndexSet([0, 2])) == [5, 7])
    #expect(set.min() == 5 && set.max() == 7 && set.sum() == 18)
    #expect(set.average() == 6.0)

    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    try reef.write { reader.favourites.insert(objectsIn: Array(reader.books)) }
    #expect(reader.favourites[1].title == "Dune")
    #expect(reader.favourites.map(\.id) == [1, 2, 3])
  }

  @Test func setAlgebraOnManagedAndUnmanagedSets() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let other = CatalogReader()
    other.id = 2
    try reef.write { reef.add(other) }
    let (emma, dune, odes) = (reader.books[0], reader.books[1], reader.books[2])
    try reef.write {
      reader.favourites.insert(objectsIn: [emma, dune])
      other.favourites.insert(objectsIn: [dune, odes])
    }
    #expect(reader.favourites.intersects(other.favourites))
    #expect(!reader.favourites.isSubset(of: other.favourites))
    try reef.write { reader.favourites.formIntersection(other.favourites) }
    #expect(reader.favourites.map(\.title) == ["Dune"])
    #expect(reader.favourites.isSubset(of: other.favourites))
    try reef.write { other.favourites.subtract(reader.favourites) }
    #expect(other.favourites.map(\.title) == ["Odes"])
    try reef.write { reader.favourites.formUnion(other.favourites) }
    #expect(Set(reader.favourites.map(\.title)) == ["Dune", "Odes"])
    #expect(reader.favourites.contains(odes) && !reader.favourites.contains(emma))

    let unmanaged = MutableSet<Int>()
    unmanaged.insert(objectsIn: [1, 2, 3])
    let small = MutableSet<Int>()
    small.insert(2)
    #expect(small.isSubset(of: unmanaged) && unmanaged.intersects(small))
    unmanaged.subtract(small)
    #expect(Array(unmanaged) == [1, 3])
  }

  @Test func queriesAndAggregatesOverASetsObjects() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    try reef.write { reader.favourites.insert(objectsIn: [reader.books[0], reader.books[2]]) }
    #expect(reader.favourites.filter("pages < 200").map(\.title) == ["Odes"])
    #expect(reader.favourites.sorted(byKeyPath: "price", ascending: false).map(\.title) == ["Odes", "Emma"])
    let pages: Int = reader.favourites.sum(ofProperty: "pages")
    let cheapest: Double? = reader.favourites.min(ofProperty: "price")
    #expect(pages == 400 && cheapest == 12.5)
    try reef.write { reader.ratings.insert(objectsIn: [4.5, 3.5, 4.5]) }
    #expect(reader.ratings.count == 2 && reader.ratings.max() == 4.5 && reader.ratings.sum() == 8.0)
  }

  @Test func setEqualityIgnoresOrderForUnmanagedSets() throws {
    let a = MutableSet<String>()
    let b = MutableSet<String>()
    #expect(a == b)
    a.insert(objectsIn: ["x", "y"])
    b.insert(objectsIn: ["y", "x"])
    #expect(a == b && a.isEqual(b))
    b.insert("z")
    #expect(a != b)
  }

  @Test func aMapGivesEntriesKeysValuesAndKeyValuePairs() throws {
    let map = Map<String, Int>()
    map["b"] = 2
    map["a"] = 1
    map.updateValue(3, forKey: "c")
    #expect(map.keys == ["b", "a", "c"] && map.values == [2, 1, 3])
    #expect(map.map(\.key) == ["b", "a", "c"] && map.map(\.value) == [2, 1, 3])
    var pairs: [String] = []
    for (key, value) in map.asKeyValueSequence() { pairs.append("\(key)=\(value)") }
    #expect(pairs == ["b=2", "a=1", "c=3"])
    #expect(map.contains { $0 == "a" && $1 == 1 })
    #expect(!map.contains { _, value in value > 3 })
    // Entries compare by their values, as Realm's.
    #expect(map.map(map.contains).allSatisfy { $0 })
    let other = Map<String, Int>()
    other["other"] = 2
    #expect(Array(other)[0] == Array(map)[0], "the same value under another key")
    map["b"] = nil
    #expect(map.keys == ["a", "c"] && map["b"] == nil)
    #expect(map.min() == 1 && map.max() == 3 && map.sum() == 4 && map.average() == 2.0)
  }

  @Test func mergingPicksValuesForDuplicateKeys() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let (emma, dune) = (reader.books[0], reader.books[1])
    try reef.write {
      reader.shelves["a"] = emma
      reader.shelves.merge(["b": dune]) { old, _ in
        Issue.record("combine called without duplicates")
        return old
      }
      reader.shelves.merge(["b": emma]) { old, _ in old }
    }
    #expect(reader.shelves.count == 2 && reader.shelves["b"]??.title == "Dune")
    try reef.write { reader.shelves.merge(["b": emma]) { _, new in new } }
    #expect(reader.shelves["b"]??.title == "Emma")
    let other = Map<String, Int>()
    other["x"] = 1
    let counts = Map<String, Int>()
    counts["x"] = 10
    counts.merge(other) { $0 + $1 }
    #expect(counts["x"] == 11)
  }

  @Test func aMapOfOptionalsHoldsNilValues() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    try reef.write {
      reader.shelves["empty"] = .some(nil)
      reader.shelves["full"] = reader.books[0]
    }
    #expect(reader.shelves.count == 2)
    #expect(reader.shelves["empty"] != nil && reader.shelves["empty"]! == nil)
    #expect(reader.shelves["missing"] == nil)
    // The objects of a map, nil values left out, in key order.
    #expect(reader.shelves.filter("pages > 0").map(\.title) == ["Emma"])
    try reef.write { reef.delete(reader.books[0]) }
    #expect(reader.shelves["full"]! == nil, "a deleted object leaves its key with nil")
  }

  @Test func queriesAndAggregatesOverAMapsObjects() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    try reef.write {
      reader.shelves["z"] = reader.books[0]
      reader.shelves["y"] = reader.books[1]
    }
    #expect(reader.shelves.sorted(byKeyPath: "pages").map(\.title) == ["Emma", "Dune"])
    let pages: Int = reader.shelves.sum(ofProperty: "pages")
    let most: Int? = reader.shelves.max(ofProperty: "pages")
    #expect(pages == 800 && most == 500)
    let unmanaged = Map<String, CatalogBook?>()
    unmanaged["one"] = reader.books[2]
    let fewest: Int? = unmanaged.min(ofProperty: "pages")
    #expect(fewest == 100)
  }

  @Test func descriptionsInRealmsForm() throws {
    let set = MutableSet<String>()
    set.insert("x")
    #expect(set.description.hasPrefix("MutableSet<string> <0x"), "\(set.description)")
    #expect(set.description.hasSuffix("> (\n\t[0] x\n)"), "\(set.description)")

    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    try reef.write { reader.shelves["key3"] = reader.books[2] }
    let text = reader.shelves.description
    #expect(text.hasPrefix("Map<string, CatalogBook> <0x"), "\(text)")
    #expect(text.contains("[key3]: CatalogBook {\n\t\tid = 3;"), "\(text)")
  }
}

/// What Realm raises from its sets and maps is a stop with Realm's message.
@Suite struct SetAndMapStopTests {
  private func stderr(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
  }

  @Test func indexOfIsNotAvailableOnASet() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let set = MutableSet<Int>()
      set.insert(1)
      _ = set.index(of: 1)
    }
    #expect(stderr(result).contains("index(of:) is not available on MutableSet"), "\(stderr(result))")
  }

  @Test func aSetPositionOutOfBoundsStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = MutableSet<Int>()[0]
    }
    #expect(stderr(result).contains("Index 0 is out of bounds (must be less than 0)."), "\(stderr(result))")
  }

  @Test func sortingAnUnmanagedMapStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Map<String, CatalogBook?>().sorted(byKeyPath: "pages")
    }
    #expect(
      stderr(result).contains("This method may only be called on RLMDictionary instances retrieved from a Reef"),
      "\(stderr(result))")
  }
}
