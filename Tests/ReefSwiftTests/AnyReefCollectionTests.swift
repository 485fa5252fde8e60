import Foundation
import ReefSwift
import Testing

/// `AnyReefCollection` over each kind of collection, and generic code over `ReefCollection`:
/// the same calls give the same answers whatever the collection is.
@Suite struct AnyReefCollectionTests {
  /// The three books of ``addCatalogReader(_:)`` as each kind of collection.
  private func collections(_ reef: Reef) throws -> [(String, AnyReefCollection<CatalogBook>)] {
    let reader = try addCatalogReader(reef)
    try reef.write { reader.favourites.insert(objectsIn: Array(reader.books)) }
    let author = CatalogAuthor(1, "Austen")
    try reef.write {
      reef.add(author)
      for book in reader.books { book.author = author }
    }
    let linking = try #require(reef.objects(CatalogBook.self).first).readers
    #expect(linking.count == 1)
    return [
      ("Results", AnyReefCollection(reef.objects(CatalogBook.self).sorted(byKeyPath: "id"))),
      ("List", AnyReefCollection(reader.books)),
      ("MutableSet", AnyReefCollection(reader.favourites)),
      ("Results of a list", AnyReefCollection(reader.books.filter("pages > 0"))),
    ]
  }

  @Test func everyKindAnswersTheSameCalls() throws {
    let (reef, _) = try openReef()
    for (kind, books) in try collections(reef) {
      #expect(books.count == 3, "\(kind)")
      #expect(books.realm === reef && !books.isInvalidated && !books.isFrozen, "\(kind)")
      #expect(books.map(\.title) == ["Emma", "Dune", "Odes"], "\(kind)")
      #expect(books[1].title == "Dune" && books.first?.id == 1 && books.last?.id == 3, "\(kind)")
      #expect(books.objects(at: IndexSet([2])).map(\.title) == ["Odes"], "\(kind)")
      #expect(books.filter("price < 15").map(\.title) == ["Emma", "Dune"], "\(kind)")
      #expect(books.sorted(byKeyPath: "pages", ascending: false).map(\.id) == [2, 1, 3], "\(kind)")
      #expect(books.sorted(by: \.price).map(\.id) == [2, 1, 3], "\(kind)")
      #expect(books.sorted(byKeyPath: "author.name").count == 3, "\(kind)")
      #expect(books.distinct(by: ["author"]).count == 1, "\(kind)")
      #expect(books.distinct(by: [\CatalogBook.price]).count == 3, "\(kind)")
      let fewest: Int? = books.min(ofProperty: "pages")
      let total: Int = books.sum(ofProperty: "pages")
      let mean: Double? = books.average(ofProperty: "price")
      #expect(fewest == 100 && total == 900 && mean == 41.5 / 3, "\(kind)")
      #expect(books.max(of: \.pages) == 500 && books.sum(of: \.pages) == 900, "\(kind)")
      #expect(books.min(of: \.price) == 9 && books.average(of: \.pages) == 300.0, "\(kind)")
      if kind != "MutableSet" {
        let dune = books[1]
        #expect(books.index(of: dune) == 1, "\(kind)")
        #expect(books.index(matching: "title == %@", "Odes") == 2, "\(kind)")
      }
    }
  }

  @Test func theDescriptionIsTheWrappedCollections() throws {
    let (reef, _) = try openReef()
    let kinds = try collections(reef)
    #expect(kinds[0].1.description.hasPrefix("Results<CatalogBook> <0x"))
    #expect(kinds[1].1.description.hasPrefix("List<CatalogBook> <0x"))
    #expect(kinds[2].1.description.hasPrefix("MutableSet<CatalogBook> <0x"))
  }

  @Test func linkingObjectsAsACollection() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let other = CatalogReader()
    other.id = 2
    other.name = "Bob"
    other.books.append(reader.books[0])
    try reef.write { reef.add(other) }
    let readers = AnyReefCollection(reader.books[0].readers)
    #expect(readers.count == 2)
    #expect(readers.filter("name == 'Bob'").map(\.id) == [2])
    #expect(readers.sorted(byKeyPath: "name", ascending: false).map(\.name) == ["Bob", "Ann"])
    #expect(readers.max(of: \.id) == 2)
    #expect(readers.description.hasPrefix("LinkingObjects<CatalogReader> <0x"), "\(readers.description)")
    #expect(readers.index(matching: "name == 'Bob'") == 1)
  }

  /// Generic code over any collection of books.
  private func titles<C: ReefCollection>(_ books: C, cheaperThan price: Double) -> [String]
  where C.Element == CatalogBook {
    books.filter("price < %@", price).sorted(byKeyPath: "title", ascending: true).map(\.title)
  }

  @Test func genericCodeTakesAnyReefCollection() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    #expect(titles(reader.books, cheaperThan: 15) == ["Dune", "Emma"])
    #expect(titles(reef.objects(CatalogBook.self), cheaperThan: 15) == ["Dune", "Emma"])
    #expect(titles(AnyReefCollection(reader.books), cheaperThan: 10) == ["Dune"])
  }

  @Test func observingThroughTheEraserReportsTheWrappedChanges() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let books = AnyReefCollection(reader.books)
    var seen: [String] = []
    let token = books.observe { change in
      switch change {
      case .initial(let books): seen.append("initial \(books.count)")
      case .update(let books, let deletions, let insertions, _):
        seen.append("update \(books.count) \(deletions) \(insertions)")
      case .error(let error): seen.append("error \(error)")
      }
    }
    try reef.write { reader.books.remove(at: 1) }
    token.invalidate()
    #expect(seen == ["initial 3", "update 2 [1] []"])
  }

  @Test func freezingAndThawingThroughTheEraser() throws {
    let (reef, _) = try openReef()
    for (kind, books) in try collections(reef) {
      let frozen = books.freeze()
      #expect(frozen.isFrozen && frozen.count == 3, "\(kind)")
      let live = try #require(frozen.thaw(), "\(kind)")
      #expect(!live.isFrozen && live.count == 3, "\(kind)")
    }
  }

  @Test func anUnmanagedListIsACollectionWithoutAReef() throws {
    let books = List<CatalogBook>()
    books.append(objectsIn: [CatalogBook(1, "Emma", pages: 300), CatalogBook(2, "Dune", pages: 500)])
    let erased = AnyReefCollection(books)
    #expect(erased.realm == nil && erased.count == 2)
    #expect(erased.index(matching: "pages > 400") == 1)
    let most: Int? = erased.max(ofProperty: "pages")
    #expect(most == 500)
  }
}
