import Foundation
import ReefSwift
import Testing

/// Thread-safe references to every kind of collection, `@ThreadSafe`, and Realm's stops.
@Suite struct ThreadSafeCollectionTests {
  final class Lines: @unchecked Sendable { var lines: [String] = [] }

  @Test func setsMapsLinkingObjectsAndErasedCollectionsResolveOnAnotherThread() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    try reef.write {
      reader.favourites.insert(objectsIn: [reader.books[0], reader.books[2]])
      reader.shelves["top"] = reader.books[1]
      reader.counts["read"] = 4
    }
    let configuration = reef.configuration
    let toSet = ThreadSafeReference(to: reader.favourites)
    let toMap = ThreadSafeReference(to: reader.shelves)
    let toCounts = ThreadSafeReference(to: reader.counts)
    let toReaders = ThreadSafeReference(to: reader.books[0].readers)
    let toErased = ThreadSafeReference(to: AnyReefCollection(reader.books.sorted(byKeyPath: "pages")))
    let toFiltered = ThreadSafeReference(to: reader.books.filter("price > 10"))
    #expect(!toSet.isInvalidated)
    let seen = Lines()
    let error = onAnotherThread {
      let other = try Reef(configuration: configuration)
      let set = try #require(other.resolve(toSet))
      seen.lines.append("set \(set.map(\.title)) \(set.realm === other)")
      let map = try #require(other.resolve(toMap))
      seen.lines.append("map \(map["top"]??.title ?? "-")")
      seen.lines.append("counts \(other.resolve(toCounts)?["read"] ?? -1)")
      let readers = try #require(other.resolve(toReaders))
      seen.lines.append("readers \(readers.map(\.name))")
      let erased = try #require(other.resolve(toErased))
      seen.lines.append("erased \(erased.map(\.pages))")
      let filtered = try #require(other.resolve(toFiltered))
      seen.lines.append("filtered \(filtered.map(\.title))")
      // Resolved in this thread's Reef, they are live there.
      try other.write { set.removeAll() }
    }
    #expect(error == nil, "\(error!)")
    #expect(
      seen.lines == [
        "set [\"Emma\", \"Odes\"] true", "map Dune", "counts 4", "readers [\"Ann\"]", "erased [100, 300, 500]",
        "filtered [\"Emma\", \"Odes\"]",
      ])
    #expect(toSet.isInvalidated && toMap.isInvalidated)
    reef.refresh()
    #expect(reader.favourites.isEmpty)
  }

  @Test func aCollectionWhoseObjectWasDeletedResolvesToNil() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let toSet = ThreadSafeReference(to: reader.favourites)
    try reef.write { reef.delete(reader) }
    let configuration = reef.configuration
    let seen = Lines()
    let error = onAnotherThread {
      let other = try Reef(configuration: configuration)
      seen.lines.append(other.resolve(toSet) == nil ? "nil" : "found")
    }
    #expect(error == nil)
    #expect(seen.lines == ["nil"])
  }

  @Test func aThreadSafePropertyResolvesOnTheThreadThatReadsIt() throws {
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    @ThreadSafe var books = reader.books
    @ThreadSafe var first = reader.books.first
    @ThreadSafe var nothing: CatalogReader? = nil
    // The wrappers (Sendable), not the values, cross to the other thread.
    let (booksWrapper, firstWrapper) = (_books, _first)
    #expect(nothing == nil)
    let seen = Lines()
    let error = onAnotherThread {
      let (books, first) = (booksWrapper.wrappedValue, firstWrapper.wrappedValue)
      seen.lines.append("\(books?.map(\.title) ?? []) \(first?.title ?? "-")")
      // Each read resolves again.
      seen.lines.append(firstWrapper.wrappedValue?.title ?? "-")
    }
    #expect(error == nil, "\(error!)")
    #expect(seen.lines == ["[\"Emma\", \"Dune\", \"Odes\"] Emma", "Emma"])
    try reef.write { reef.delete(reader.books[0]) }
    #expect(first == nil, "deleted since")
    #expect(books?.count == 2)
  }
}

/// Realm's stops for references.
@Suite struct ThreadSafeReferenceStopTests {
  private func stderr(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
  }

  @Test func resolvingTwiceStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let reader = try addCatalogReader(reef)
        let reference = ThreadSafeReference(to: reader.favourites)
        _ = reef.resolve(reference)
        _ = reef.resolve(reference)
      }
    }
    #expect(stderr(result).contains("Can only resolve a thread safe reference once"), "\(stderr(result))")
  }

  @Test func aReferenceToAnUnmanagedSetStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = ThreadSafeReference(to: MutableSet<Int>())
    }
    #expect(stderr(result).contains("Cannot construct reference to unmanaged object"), "\(stderr(result))")
  }

  @Test func aReferenceToTheMapOfADeletedObjectStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let reader = try addCatalogReader(reef)
        let shelves = reader.shelves
        try reef.write { reef.delete(reader) }
        _ = ThreadSafeReference(to: shelves)
      }
    }
    #expect(stderr(result).contains("Cannot construct reference to invalidated object"), "\(stderr(result))")
  }

  @Test func wrappingAnUnmanagedObjectAsThreadSafeStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      @ThreadSafe var book: CatalogBook? = CatalogBook(1, "Emma")
      _ = book
    }
    #expect(stderr(result).contains("Only managed objects may be wrapped as thread safe."), "\(stderr(result))")
  }
}
