import Foundation
import ReefSwift
import Testing

/// `NSPredicate(format:…)`, `NSPredicate(value:)` and `NSCompoundPredicate` as Realm's users
/// write them (Reef's own initializers on Linux, where swift-corelibs-foundation has no format
/// strings), given to each collection's `filter` and `index(matching:)`.
@Suite struct NSPredicateTests {
  /// The standard error of an exit test, as text.
  private func stderr(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
  }

  /// A reader with the three books of ``addCatalogReader(_:)`` in every kind of collection:
  /// `books` and `favourites` hold all three, `shelves` maps "a", "b", "c" to them, and each
  /// book's `readers` is that reader.
  private func shelvedReader(_ reef: Reef) throws -> CatalogReader {
    let reader = try addCatalogReader(reef)
    try reef.write {
      reader.favourites.insert(objectsIn: Array(reader.books))
      for (key, book) in zip(["a", "b", "c"], reader.books) { reader.shelves[key] = book }
    }
    return reader
  }

  @Test func aFormatPredicateFiltersEveryCollection() throws {
    let (reef, _) = try openReef()
    let reader = try shelvedReader(reef)
    let longer = NSPredicate(format: "pages > %d", 200)
    #expect(reef.objects(CatalogBook.self).filter(longer).map(\.title).sorted() == ["Dune", "Emma"])
    #expect(reader.books.filter(longer).map(\.title) == ["Emma", "Dune"])
    #expect(reader.favourites.filter(longer).map(\.title).sorted() == ["Dune", "Emma"])
    #expect(reader.shelves.filter(longer).map(\.title) == ["Emma", "Dune"])
    let emma = try #require(reef.object(ofType: CatalogBook.self, forPrimaryKey: 1))
    #expect(emma.readers.filter(NSPredicate(format: "name == %@", "Ann")).count == 1)
    #expect(emma.readers.filter(NSPredicate(format: "name == %@", "Bob")).isEmpty)
    #expect(AnyReefCollection(reader.books).filter(longer).map(\.id) == [1, 2])
    // The results stay live, as a string filter's.
    let cheap = reader.books.filter(NSPredicate(format: "price < %f", 15.0))
    #expect(cheap.map(\.id) == [1, 2])
    try reef.write { reader.books[2].price = 5 }
    #expect(cheap.map(\.id) == [1, 2, 3])
  }

  @Test func genericCodeFiltersAnyReefCollectionWithAnNSPredicate() throws {
    func titles<C: ReefCollection>(_ books: C, _ predicate: NSPredicate) -> [String] where C.Element == CatalogBook {
      books.filter(predicate).map(\.title)
    }
    let (reef, _) = try openReef()
    let reader = try shelvedReader(reef)
    let short = NSPredicate(format: "pages < 400")
    #expect(titles(reader.books, short) == ["Emma", "Odes"])
    #expect(titles(reef.objects(CatalogBook.self).sorted(byKeyPath: "id"), short) == ["Emma", "Odes"])
    #expect(titles(reader.favourites, short).sorted() == ["Emma", "Odes"])
    #expect(titles(AnyReefCollection(reader.books), short) == ["Emma", "Odes"])
  }

  @Test func formatArgumentsAsNSPredicateTakesThem() throws {
    let (reef, _) = try openReef()
    let reader = try shelvedReader(reef)
    let books = reader.books
    #expect(books.filter(NSPredicate(format: "%K > %d AND %K < %f", "pages", 200, "price", 10.0)).map(\.id) == [2])
    try reef.write { books[1].author = CatalogAuthor(1, "Herbert") }
    #expect(books.filter(NSPredicate(format: "%K.%K == %@", "author", "name", "Herbert")).map(\.id) == [2])
    #expect(books.filter(NSPredicate(format: "%K BEGINSWITH %s", "title", "O")).map(\.id) == [3])
    #expect(books.filter(NSPredicate(format: "pages >= %ld AND price <= %lf", 300, 12.5)).map(\.id) == [1, 2])
    #expect(books.filter(NSPredicate(format: "title == $1 OR title == $0", "Emma", "Odes")).map(\.id) == [1, 3])
    #expect(books.filter(NSPredicate(format: "title IN %@", ["Dune", "Odes"])).map(\.id) == [2, 3])
    #expect(books.filter(NSPredicate(format: "title == 'Dune'", argumentArray: nil)).map(\.id) == [2])
    #expect(books.filter(NSPredicate(format: "%K == %@", argumentArray: ["title", "Odes"])).map(\.id) == [3])
    let optional: String? = nil
    #expect(books.filter(NSPredicate(format: "title != %@", optional as Any)).count == 3)
    #expect(books.filter(NSPredicate(format: "author == %@", optional as Any)).map(\.id) == [1, 3])
  }

  @Test func indexMatchingTakesAnNSPredicate() throws {
    let (reef, _) = try openReef()
    let reader = try shelvedReader(reef)
    let dune = NSPredicate(format: "title == %@", "Dune")
    #expect(reader.books.index(matching: dune) == 1)
    #expect(reef.objects(CatalogBook.self).sorted(byKeyPath: "id", ascending: false).index(matching: dune) == 1)
    #expect(AnyReefCollection(reader.books).index(matching: dune) == 1)
    #expect(reader.books.index(matching: NSPredicate(format: "title == %@", "Iliad")) == nil)
    let emma = try #require(reef.object(ofType: CatalogBook.self, forPrimaryKey: 1))
    #expect(emma.readers.index(matching: NSPredicate(format: "name == 'Ann'")) == 0)
    try reef.write { reader.scores.append(objectsIn: [3, 8, 1, 9]) }
    #expect(reader.scores.index(matching: NSPredicate(format: "self > %d", 5)) == 1)
    #expect(reader.scores.index(matching: NSPredicate(format: "self > %d", 9)) == nil)
  }

  @Test func compoundPredicatesReadEachSubpredicateWithItsOwnArguments() throws {
    let (reef, _) = try openReef()
    let books = try shelvedReader(reef).books
    // `$0` is each subpredicate's own first argument.
    let long = NSPredicate(format: "pages > $0", 200)
    let cheap = NSPredicate(format: "price < $0", 10.0)
    let and = NSCompoundPredicate(andPredicateWithSubpredicates: [long, cheap])
    #expect(books.filter(and).map(\.id) == [2])
    let or = NSCompoundPredicate(orPredicateWithSubpredicates: [NSPredicate(format: "title == %@", "Odes"), cheap])
    #expect(books.filter(or).map(\.id) == [2, 3])
    #expect(books.filter(NSCompoundPredicate(notPredicateWithSubpredicate: long)).map(\.id) == [3])
    let nested = NSCompoundPredicate(andPredicateWithSubpredicates: [
      NSCompoundPredicate(notPredicateWithSubpredicate: cheap), or,
    ])
    #expect(books.filter(nested).map(\.id) == [3])
    // Foundation's NOT of several subpredicates is the NOT of their AND.
    #expect(books.filter(NSCompoundPredicate(type: .not, subpredicates: [long, cheap])).map(\.id) == [1, 3])
    #expect(books.filter(NSCompoundPredicate(andPredicateWithSubpredicates: [])).count == 3)
    #expect(books.filter(NSCompoundPredicate(orPredicateWithSubpredicates: [])).isEmpty)
    #expect(books.index(matching: and) == 1)
  }

  @Test func constantPredicatesMatchAllOrNothing() throws {
    let (reef, _) = try openReef()
    let books = try shelvedReader(reef).books
    #expect(books.filter(NSPredicate(value: true)).count == 3)
    #expect(books.filter(NSPredicate(value: false)).isEmpty)
    let some = NSCompoundPredicate(orPredicateWithSubpredicates: [
      NSPredicate(value: false), NSPredicate(format: "id == 3"),
    ])
    #expect(books.filter(some).map(\.id) == [3])
    #expect(reef.objects(CatalogBook.self).index(matching: NSPredicate(value: false)) == nil)
  }

  @Test func aFormatPredicateEvaluatesReefObjectsAndValues() throws {
    let (reef, _) = try openReef()
    let reader = try shelvedReader(reef)
    let long = NSPredicate(format: "pages > %d", 200)
    #expect(long.evaluate(with: reader.books[0]))
    #expect(!long.evaluate(with: reader.books[2]))
    #expect(long.evaluate(with: CatalogBook(9, "Unsaved", pages: 700)))
    #expect(!long.evaluate(with: CatalogBook(9, "Unsaved", pages: 7)))
    #expect(NSPredicate(format: "self BEGINSWITH %@", "Re").evaluate(with: "Reef"))
    #expect(!NSPredicate(format: "self > %d", 5).evaluate(with: 2))
  }

  // MARK: Stops

  @Test func aBlockPredicateStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = reef.objects(CatalogBook.self).filter(NSPredicate { _, _ in true })
      }
    }
    #expect(
      stderr(result).contains(
        "Invalid predicate: Reef reads predicates made with NSPredicate(format:), NSPredicate(value:) and "
          + "NSCompoundPredicate; a block predicate (NSPredicate(block:)) cannot be queried"), "\(stderr(result))")
  }

  @Test func aFormatThatDoesNotParseStopsWhereThePredicateIsMade() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = NSPredicate(format: "pages >> 3")
    }
    #expect(stderr(result).contains("Unable to parse the format string \"pages >> 3\""), "\(stderr(result))")
    #expect(stderr(result).contains("(at column 8)"), "\(stderr(result))")
  }

  @Test func aPercentKArgumentThatIsNotAStringStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = NSPredicate(format: "%K == %@", 3, "x")
    }
    #expect(
      stderr(result).contains("the argument for '%K' number 1 must be a string naming a key path but is an integer"),
      "\(stderr(result))")
  }

  @Test func indexMatchingAnNSPredicateOnAMutableSetStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let reader = try addCatalogReader(reef)
        _ = reader.favourites.index(matching: NSPredicate(format: "pages > 1"))
      }
    }
    #expect(stderr(result).contains("index(matching:) is not available on MutableSet"), "\(stderr(result))")
  }

  @Test func sortInsideACompoundStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let sorted = NSPredicate(format: "pages > 1 SORT(title ASC)")
        _ = reef.objects(CatalogBook.self).filter(NSCompoundPredicate(andPredicateWithSubpredicates: [sorted]))
      }
    }
    #expect(
      stderr(result).contains(
        "SORT(…), DISTINCT(…) and LIMIT(…) cannot be inside a subpredicate of an NSCompoundPredicate"),
      "\(stderr(result))")
  }
}
