import Foundation
import ReefSwift
import Testing

/// What `Results` have as Realm's collections: their `Reef`, validity, positions of objects,
/// and the other collections as query arguments.
@Suite struct ResultsCollectionTests {
  @Test func resultsKnowTheirReefAndStayValid() throws {
    let (reef, _) = try openReef()
    _ = try addCatalogReader(reef)
    let books = reef.objects(CatalogBook.self)
    #expect(books.realm === reef && books.reef === reef)
    #expect(!books.isInvalidated)
    try reef.write { reef.delete(books) }
    #expect(!books.isInvalidated && books.isEmpty)
    let frozen = reef.objects(CatalogReader.self).freeze()
    #expect(frozen.realm?.isFrozen == true)
  }

  @Test func resultsOfACollectionAreInvalidatedWithItsObject() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let cheap = reader.books.filter("price < 15")
    #expect(!cheap.isInvalidated && cheap.count == 2)
    try reef.write { reef.delete(reader) }
    #expect(cheap.isInvalidated && cheap.isEmpty)
  }

  @Test func positionsOfObjects() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let byPages = reef.objects(CatalogBook.self).sorted(byKeyPath: "pages")
    let emma = reader.books[0]
    #expect(byPages.index(of: emma) == 1)
    #expect(byPages.index(of: CatalogBook(7, "Unmanaged")) == nil)
    #expect(byPages.filter("pages > 300").index(of: emma) == nil)
    #expect(byPages.index(matching: "title BEGINSWITH %@", "D") == 2)
    #expect(byPages.index(matching: "title == 'None'") == nil)
    #expect(byPages.objects(at: IndexSet([0, 2])).map(\.title) == ["Odes", "Dune"])
  }

  @Test func collectionsOfObjectsAreQueryArguments() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let other = CatalogReader()
    other.id = 2
    try reef.write { reef.add(other) }
    let long = reef.objects(CatalogBook.self).filter("pages >= 300")
    #expect(reef.objects(CatalogReader.self).filter("ANY books IN %@", long).map(\.id) == [1])
    try reef.write { other.books.append(reader.books[2]) }
    let cheap = reader.books.filter("price < 15")
    #expect(reef.objects(CatalogReader.self).filter("ANY books IN %@", cheap).map(\.id) == [1])
    #expect(reef.objects(CatalogReader.self).filter("ANY books IN %@", other.books).map(\.id) == [1, 2])
  }

  @Test func aLongDescriptionSaysHowManyObjectsItSkipped() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for id in 0..<103 { reef.add(CatalogBook(id, "Book \(id)")) }
    }
    let text = reef.objects(CatalogBook.self).description
    #expect(text.contains("\t[99] CatalogBook {"), "\(text.suffix(300))")
    #expect(!text.contains("[100]"))
    #expect(text.hasSuffix("\n\t... 3 objects skipped.\n)"), "\(text.suffix(300))")
  }

  @Test func aPositionOutOfBoundsStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = try addCatalogReader(reef)
        _ = reef.objects(CatalogBook.self)[200]
      }
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(text.contains("Index 200 is out of bounds (must be less than 3)."), "\(text)")
  }
}
