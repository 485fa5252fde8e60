import Foundation
import ReefSwift
import Testing

/// `LinkingObjects` whose origin type is embedded, as in Realm: the embedded objects whose link
/// names an object, and an embedded object's parent through the property that embeds it.
@Suite struct EmbeddedOriginTests {
  @Test func theEmbeddedObjectsThatLinkToABookAreItsLinkingObjects() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let (emma, dune) = (reader.books[0], reader.books[1])
    let folder = CatalogFolder()
    folder.label = "later"
    folder.notes["x"] = CatalogNote("folded", book: emma)
    try reef.write {
      reader.notes.append(CatalogNote("first", book: emma))
      reader.notes.append(CatalogNote("second", book: dune))
      reader.notes.append(CatalogNote("third", book: emma))
      reader.pinned = CatalogNote("pinned", book: emma)
      reader.folder = folder
    }
    let notes = emma.notes
    #expect(notes.count == 4)
    #expect(Set(notes.map(\.text)) == ["first", "third", "pinned", "folded"])
    // They are the embedded objects themselves, managed in their parent.
    let first = try #require(notes.first { $0.text == "first" })
    #expect(first.isEqual(to: reader.notes[0]))
    try reef.write { first.text = "changed" }
    #expect(reader.notes[0].text == "changed")
    #expect(dune.notes.map(\.text) == ["second"])
    #expect(emma.notes.index(matching: "text == 'third'") != nil)
    // They follow the links.
    try reef.write {
      reader.notes[1].book = emma
      reader.notes.remove(at: 2)
    }
    #expect(emma.notes.count == 4 && dune.notes.isEmpty)
    #expect(emma.notes.description.hasPrefix("LinkingObjects<CatalogNote> <0x"))
  }

  @Test func anEmbeddedObjectsParentIsItsLinkingObject() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    try reef.write {
      reader.notes.append(CatalogNote("mine"))
      reader.pinned = CatalogNote("pinned")
    }
    #expect(reader.notes[0].reader.map(\.name) == ["Ann"])
    // Pinned is embedded through another property than `notes`.
    #expect(reader.pinned?.reader.isEmpty == true)
    #expect(reader.notes[0].reader.filter("name == 'Ann'").count == 1)
  }

  @Test func aTypeTheReefHasNotUsedIsFoundThroughTheConfiguration() throws {
    let (first, path) = try openReef()
    let reader = try addCatalogReader(first)
    try first.write { reader.notes.append(CatalogNote("kept", book: reader.books[1])) }
    var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: path))
    configuration.objectTypes = [
      CatalogReader.self, CatalogBook.self, CatalogAuthor.self, CatalogNote.self, CatalogFolder.self,
    ]
    let second = try Reef(configuration: configuration)
    let dune = try #require(second.object(ofType: CatalogBook.self, forPrimaryKey: 2))
    #expect(dune.notes.map(\.text) == ["kept"])
  }

  @Test func linkingObjectsOfAnEmbeddedOriginAreObserved() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let emma = reader.books[0]
    var seen: [String] = []
    let token = emma.notes.observe { change in
      switch change {
      case .initial(let notes): seen.append("initial \(notes.count)")
      case .update(let notes, _, let insertions, _): seen.append("update \(notes.count) \(insertions)")
      case .error(let error): seen.append("error \(error)")
      }
    }
    try reef.write { reader.notes.append(CatalogNote("new", book: emma)) }
    token.invalidate()
    #expect(seen == ["initial 0", "update 1 [0]"])
  }
}
