import Foundation
import ReefSwift
import Testing

/// Realm's `List` API, on unmanaged and managed lists alike: positions, ranges, moves,
/// finding, aggregates, queries, equality and description.
@Suite struct ListOperationTests {
  /// The same edits on an unmanaged list and on a managed one (in a write), compared with an
  /// array that had them.
  private func check(_ edit: (List<Int>) -> Void, _ arrayEdit: (inout [Int]) -> Void) throws {
    var array = [0, 1, 2, 3, 4, 5, 6]
    arrayEdit(&array)
    let unmanaged = CatalogReader()
    unmanaged.scores.append(objectsIn: [0, 1, 2, 3, 4, 5, 6])
    edit(unmanaged.scores)
    #expect(Array(unmanaged.scores) == array, "unmanaged")

    let (reef, _) = try openReef()
    let reader = CatalogReader()
    reader.scores.append(objectsIn: [0, 1, 2, 3, 4, 5, 6])
    try reef.write { reef.add(reader) }
    try reef.write { edit(reader.scores) }
    #expect(Array(reader.scores) == array, "managed")
    let stored = try #require(reef.objects(CatalogReader.self).first)
    #expect(Array(stored.scores) == array, "stored")
  }

  /// All of an unmanaged list of `values`, as a slice.
  private func slice(_ values: [Int]) -> Slice<List<Int>> {
    let list = List<Int>()
    list.append(objectsIn: values)
    return list[0..<values.count]
  }

  @Test func sliceAssignmentReplacesARangeWithMoreOrFewerElements() throws {
    try check({ $0[1..<4] = slice([10, 11]) }) { $0[1..<4] = [10, 11] }
    try check({ $0[2..<2] = slice([7, 8, 9]) }) { $0[2..<2] = [7, 8, 9] }
    try check({ $0[0..<7] = slice([42]) }) { $0[0..<7] = [42] }
  }

  @Test func aSliceOfTheListItselfCanBeAssignedBack() throws {
    // The slice reads the list being changed: its elements are taken first.
    try check({ $0[0..<2] = $0[4..<7] }) { $0[0..<2] = $0[4..<7] }
  }

  @Test func rangeReplaceableOperationsAsRealmEmulatesThem() throws {
    try check({ $0.replaceSubrange($0.indices, with: [1, 2, 3]) }) { $0.replaceSubrange($0.indices, with: [1, 2, 3]) }
    try check({ $0.replaceSubrange(2...5, with: [10, 11, 12, 13, 14]) }) {
      $0.replaceSubrange(2...5, with: [10, 11, 12, 13, 14])
    }
    try check({ $0.removeSubrange(1...3) }) { $0.removeSubrange(1...3) }
    try check({ $0.removeSubrange(1..<3) }) { $0.removeSubrange(1..<3) }
    try check({ $0.removeSubrange($0.indices) }) { $0.removeSubrange($0.indices) }
    try check({ $0.removeFirst() }) { $0.removeFirst() }
    try check({ $0.removeFirst(3) }) { $0.removeFirst(3) }
    try check({ $0.removeLast(3) }) { $0.removeLast(3) }
    try check({ $0.insert(contentsOf: [10, 11, 12], at: 2) }) { $0.insert(contentsOf: [10, 11, 12], at: 2) }
    try check({ $0.insert(9, at: 7) }) { $0.insert(9, at: 7) }
    try check({ $0.remove(atOffsets: IndexSet([0, 3, 6])) }) { $0 = [1, 2, 4, 5] }
  }

  @Test func mutableCollectionAlgorithmsWorkOnAManagedList() throws {
    let (reef, _) = try openReef()
    let reader = CatalogReader()
    reader.scores.append(objectsIn: [5, 3, 9, 1])
    try reef.write { reef.add(reader) }
    try reef.write {
      reader.scores.sort()
      #expect(Array(reader.scores) == [1, 3, 5, 9])
      reader.scores.reverse()
      #expect(Array(reader.scores) == [9, 5, 3, 1])
      reader.scores.swapAt(0, 3)
    }
    #expect(Array(reef.objects(CatalogReader.self).first!.scores) == [1, 5, 3, 9])
  }

  @Test func moveFromOffsetsMovesEachInTurnAsRealmDoes() throws {
    let list = List<Int>()
    list.append(objectsIn: [1, 2, 3])
    list.move(fromOffsets: IndexSet([1]), toOffset: 0)
    #expect(Array(list) == [2, 1, 3])
    list.move(fromOffsets: IndexSet([0]), toOffset: 3)
    #expect(Array(list) == [1, 3, 2])
    list.move(fromOffsets: IndexSet([2]), toOffset: 1)
    #expect(Array(list) == [1, 2, 3])
    list.move(fromOffsets: IndexSet([]), toOffset: 1)
    #expect(Array(list) == [1, 2, 3])
    list.move(fromOffsets: IndexSet([0, 2]), toOffset: 1)
    #expect(Array(list) == [2, 3, 1])
  }

  @Test func firstLastIndexAndObjectsAtIndexes() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let books = reader.books
    #expect(books.first?.title == "Emma" && books.last?.title == "Odes")
    let dune = try #require(reef.object(ofType: CatalogBook.self, forPrimaryKey: 2))
    #expect(books.index(of: dune) == 1)
    #expect(books.index(of: CatalogBook(9, "Unmanaged")) == nil)
    #expect(books.index(matching: "pages > %@", 250) == 0)
    #expect(books.index(matching: "title == 'Odes'") == 2)
    #expect(books.index(matching: "title == 'Nope'") == nil)
    #expect(books.objects(at: IndexSet([0, 2])).map(\.title) == ["Emma", "Odes"])
    // A value list compares values, and matches `self`.
    let scores = List<Int>()
    scores.append(objectsIn: [5, 6, 7, 8])
    #expect(scores.index(of: 6) == 1 && scores.index(of: 9) == nil)
    #expect(scores.index(matching: "self == 7") == 2)
    #expect(scores.index(matching: "self > 100") == nil)
  }

  @Test func anUnmanagedListOfManagedObjectsMatchesPredicates() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let copy = List<CatalogBook>()
    copy.append(objectsIn: Array(reader.books.reversed()))
    #expect(copy.index(matching: "title == %@", "Emma") == 2)
    #expect(copy.index(of: reader.books[0]) == 2)
  }

  @Test func aggregatesOfValuesAndOfObjectProperties() throws {
    let values = List<Int>()
    values.append(objectsIn: [5, 6, 7, 8])
    #expect(values.min() == 5 && values.max() == 8 && values.sum() == 26)
    #expect(values.average() == 6.5)
    #expect(List<Double>().min() == nil && List<Int>().sum() == 0)

    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let fewest: Int? = reader.books.min(ofProperty: "pages")
    let most: Int? = reader.books.max(ofProperty: "pages")
    let total: Int = reader.books.sum(ofProperty: "pages")
    let mean: Double? = reader.books.average(ofProperty: "pages")
    #expect(fewest == 100 && most == 500 && total == 900 && mean == 300)
    // An unmanaged list of the same objects gives the same answers.
    let unmanaged = List<CatalogBook>()
    unmanaged.append(objectsIn: Array(reader.books))
    #expect(unmanaged.min(ofProperty: "price") == 9.0 as Double?)
    #expect(unmanaged.sum(ofProperty: "pages") == 900)
    // A book listed twice counts twice, as in Realm.
    try reef.write { reader.books.append(reader.books[2]) }
    #expect(reader.books.sum(ofProperty: "pages") == 1000)
    try reef.write { reader.scores.append(objectsIn: [3, 4]) }
    #expect(reader.scores.max() == 4 && reader.scores.sum() == 7)
  }

  @Test func filterAndSortOfAManagedListKeepTheListsOrderAndFollowIt() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let long = reader.books.filter("pages >= 300")
    #expect(long.map(\.title) == ["Emma", "Dune"])
    let byPrice = reader.books.sorted(byKeyPath: "price")
    #expect(byPrice.map(\.title) == ["Dune", "Emma", "Odes"])
    #expect(reader.books.sorted(by: [SortDescriptor(keyPath: "pages", ascending: false)]).map(\.id) == [2, 1, 3])
    // Live: they follow the list.
    try reef.write {
      reader.books.move(from: 1, to: 0)
      reader.books.append(CatalogBook(4, "Iliad", pages: 700, price: 5))
    }
    #expect(long.map(\.title) == ["Dune", "Emma", "Iliad"])
    #expect(byPrice.first?.title == "Iliad" && byPrice.count == 4)
    // Other books of the type are not in them.
    try reef.write { reef.add(CatalogBook(5, "Loose", pages: 900)) }
    #expect(long.count == 3)
    #expect(reader.books.distinct(by: ["author"]).count == 1)
    #expect(!long.isInvalidated)
    try reef.write { reef.delete(reader) }
    #expect(long.isEmpty && long.isInvalidated)
  }

  @Test func resultsOfAListNotifyWhenTheListChanges() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let long = reader.books.filter("pages >= 300")
    var changes: [String] = []
    let token = long.observe { change in
      switch change {
      case .initial(let results): changes.append("initial \(results.count)")
      case .update(_, let deletions, let insertions, _): changes.append("update \(deletions) \(insertions)")
      case .error(let error): changes.append("error \(error)")
      }
    }
    try reef.write { reader.books.remove(at: 0) }
    token.invalidate()
    #expect(changes == ["initial 2", "update [0] []"])
  }

  @Test func equalityAsRealmsCollections() throws {
    let one = CatalogBook(1, "Emma")
    let two = CatalogBook(2, "Dune")
    let a = List<CatalogBook>()
    let b = List<CatalogBook>()
    #expect(a == b, "empty unmanaged lists are equal")
    a.append(objectsIn: [one, two])
    b.append(objectsIn: [one, two])
    #expect(a == b && a.isEqual(b))
    b.removeLast()
    #expect(a != b)
    b.append(CatalogBook(2, "Dune"))
    #expect(a != b, "another instance of an unmanaged object is another object")

    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let again = try #require(reef.objects(CatalogReader.self).first)
    #expect(reader.books == again.books, "the same managed list")
    #expect(reader.books != a)
  }

  @Test func descriptionInRealmsForm() throws {
    let values = List<Int>()
    values.append(objectsIn: [5, 6])
    let text = values.description
    #expect(text.hasPrefix("List<int> <0x"), "\(text)")
    #expect(text.hasSuffix("> (\n\t[0] 5,\n\t[1] 6\n)"), "\(text)")

    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let books = reader.books.description
    #expect(books.hasPrefix("List<CatalogBook> <0x"), "\(books)")
    #expect(books.contains("\n\t[2] CatalogBook {\n\t\tid = 3;"), "\(books)")
    #expect(books.hasSuffix("\n\t}\n)"), "\(books)")
  }
}

/// What Realm raises from its lists is a stop with Realm's message.
@Suite struct ListStopTests {
  private func stderr(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
  }

  @Test func insertingPastTheEndStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = List<Int>()
      list.append(1)
      list.insert(2, at: 200)
    }
    #expect(stderr(result).contains("Index 200 is out of bounds (must be less than 2)."), "\(stderr(result))")
  }

  @Test func aNegativeIndexStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = List<Int>()
      list.append(1)
      list.remove(at: -2)
    }
    #expect(stderr(result).contains("Cannot pass a negative value for 'index'."), "\(stderr(result))")
  }

  @Test func removingLastFromAnEmptyManagedListStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let reader = CatalogReader()
        try reef.write { reef.add(reader) }
        try reef.write { reader.scores.removeLast() }
      }
    }
    #expect(
      stderr(result).contains(
        "It is not possible to remove more objects (1) from a list than it already contains (0)."),
      "\(stderr(result))")
  }

  @Test func aRangePastTheEndStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = List<Int>()
      list.append(objectsIn: [1, 2])
      list.replaceSubrange(0..<200, with: [3])
    }
    #expect(stderr(result).contains("Index 199 is out of bounds (must be less than 2)."), "\(stderr(result))")
  }

  @Test func filteringAnUnmanagedListStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = CatalogReader().books.filter("pages > 1")
    }
    #expect(
      stderr(result).contains("This method may only be called on RLMArray instances retrieved from a Reef"),
      "\(stderr(result))")
  }

  @Test func anAggregateOfAPropertyThatDoesNotExistStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let list = List<CatalogBook>()
      list.append(CatalogBook(1, "Emma"))
      let _: Int? = list.min(ofProperty: "noSuchCol")
    }
    #expect(
      stderr(result).contains("Invalid property name 'noSuchCol' for class 'CatalogBook'."), "\(stderr(result))")
  }
}
