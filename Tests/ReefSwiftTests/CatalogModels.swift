import ReefSwift

// Models for the collection tests: a reader's books in a List, a MutableSet and a Map, lists,
// sets and maps of values, notes (embedded) that link to books, and the inverse relationships.

class CatalogReader: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var books: List<CatalogBook>
  @Persisted var favourites: MutableSet<CatalogBook>
  @Persisted var shelves: Map<String, CatalogBook?>
  @Persisted var scores: List<Int>
  @Persisted var ratings: MutableSet<Double>
  @Persisted var counts: Map<String, Int>
  @Persisted var notes: List<CatalogNote>
  @Persisted var pinned: CatalogNote?
  @Persisted var folder: CatalogFolder?
}

/// Notes two levels down: in a folder (embedded) of a reader.
class CatalogFolder: EmbeddedObject {
  @Persisted var label = ""
  @Persisted var notes: Map<String, CatalogNote?>
}

class CatalogBook: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var title = ""
  @Persisted var pages = 0
  @Persisted var price: Double = 0
  @Persisted var author: CatalogAuthor?
  @Persisted(originProperty: "books") var readers: LinkingObjects<CatalogReader>
  @Persisted(originProperty: "book") var notes: LinkingObjects<CatalogNote>

  convenience init(_ id: Int, _ title: String, pages: Int = 100, price: Double = 10, author: CatalogAuthor? = nil) {
    self.init()
    self.id = id
    self.title = title
    self.pages = pages
    self.price = price
    self.author = author
  }
}

class CatalogAuthor: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""

  convenience init(_ id: Int, _ name: String) {
    self.init()
    self.id = id
    self.name = name
  }
}

class CatalogNote: EmbeddedObject {
  @Persisted var text = ""
  @Persisted var book: CatalogBook?
  @Persisted(originProperty: "notes") var reader: LinkingObjects<CatalogReader>

  convenience init(_ text: String, book: CatalogBook? = nil) {
    self.init()
    self.text = text
    self.book = book
  }
}

/// A reader with three books (1 "Emma" 300 pages 12.5, 2 "Dune" 500 pages 9, 3 "Odes" 100 pages
/// 20) in that order in `books`, added to `reef`.
func addCatalogReader(_ reef: Reef) throws -> CatalogReader {
  let reader = CatalogReader()
  reader.id = 1
  reader.name = "Ann"
  reader.books.append(objectsIn: [
    CatalogBook(1, "Emma", pages: 300, price: 12.5), CatalogBook(2, "Dune", pages: 500, price: 9),
    CatalogBook(3, "Odes", pages: 100, price: 20),
  ])
  try reef.write { reef.add(reader) }
  return reader
}
