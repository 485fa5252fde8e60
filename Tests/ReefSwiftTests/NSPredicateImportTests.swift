import ReefSwift
import Testing

/// A file that imports only ReefSwift, as a ported Realm file does (`import RealmSwift`), has
/// `NSPredicate(format:)` and `NSCompoundPredicate`.
@Suite struct NSPredicateImportTests {
  @Test func importingReefSwiftAloneGivesNSPredicate() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let predicate = NSCompoundPredicate(orPredicateWithSubpredicates: [
      NSPredicate(format: "title == %@", "Odes"), NSPredicate(format: "%K < %d", argumentArray: ["pages", 400]),
    ])
    #expect(reader.books.filter(predicate).map(\.id) == [1, 3])
    #expect(reef.objects(CatalogBook.self).filter(NSPredicate(format: "title == 'Dune'")).map(\.id) == [2])
  }
}
