import ReefSwift
import Testing

@Suite struct SortDescriptorTests {
  @Test func aDescriptorIsAscendingUnlessToldAndReversesBothWays() {
    let descriptor = SortDescriptor(keyPath: "title")
    #expect(descriptor.ascending)
    let reversed = descriptor.reversed()
    #expect(reversed.keyPath == "title" && !reversed.ascending)
    #expect(reversed.reversed() == descriptor)
  }

  @Test func theDescriptionIsRealms() {
    #expect(SortDescriptor(keyPath: "title").description == "SortDescriptor(keyPath: title, direction: ascending)")
    #expect(
      SortDescriptor(keyPath: "pages", ascending: false).description
        == "SortDescriptor(keyPath: pages, direction: descending)")
  }

  @Test func aStringLiteralIsAnAscendingDescriptor() {
    let literal: SortDescriptor = "title"
    #expect(literal == SortDescriptor(keyPath: "title"))
  }

  @Test func aSwiftKeyPathNamesTheStoredPath() throws {
    #expect(
      SortDescriptor(keyPath: \CatalogBook.pages, ascending: false)
        == SortDescriptor(keyPath: "pages", ascending: false))
    #expect(SortDescriptor(keyPath: \CatalogBook.author?.name).keyPath == "author.name")
    let (reef, _) = try openReef()
    let reader = try addCatalogReader(reef)
    let sorted = reader.books.sorted(by: [SortDescriptor(keyPath: \CatalogBook.price).reversed()])
    #expect(sorted.map(\.title) == ["Odes", "Emma", "Dune"])
  }
}
