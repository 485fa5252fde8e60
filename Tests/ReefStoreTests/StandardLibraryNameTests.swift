import ReefBSON
import ReefStore
import Testing

/// The number of elements of any `Swift.Collection`. It compiles only while `ReefStore` declares
/// no type named `Collection`, which would shadow the standard library's protocol in every file
/// that imports it (issue 13).
private func elementCount<C: Collection>(_ elements: C) -> Int { elements.count }

/// The elements of any `Swift.Sequence`, as an array.
private func elements<S: Sequence>(of sequence: S) -> [S.Element] { Array(sequence) }

/// A file that imports `ReefStore` (as an app does, without `@testable`) still means the standard
/// library's protocols by `Collection` and `Sequence`: the store's collection type is
/// `DocumentCollection`.
@Suite struct StandardLibraryNameTests {
  @Test func collectionMeansTheStandardLibraryProtocol() throws {
    #expect(elementCount([1, 2, 3]) == 3)
    #expect(elementCount("reef") == 4)
    #expect(elements(of: 1...3) == [1, 2, 3])
  }

  @Test func aStoreCollectionIsADocumentCollection() throws {
    let temporary = try TemporaryStore()
    let contacts: DocumentCollection = temporary.store.collection("contacts")
    try contacts.insertMany([["_id": 1], ["_id": 2]])
    let found = try contacts.find().toArray()
    #expect(elementCount(found) == 2)
    #expect(elementCount(try contacts.listIndexes()) == 1)
  }
}
