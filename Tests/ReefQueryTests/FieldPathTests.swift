import Testing

@testable import ReefQuery

@Suite struct FieldPathTests {
  @Test func splitsOnDotsAndRecognisesArrayIndexes() {
    let path = FieldPath("addresses.0.city")
    #expect(path.segments.map(\.index) == [nil, 0, nil])
    #expect(path.description == "addresses.0.city")
    #expect(FieldPath("a.01").segments[1].index == nil)
    #expect(FieldPath("a.12").segments[1].index == 12)
    #expect(FieldPath("").segments.isEmpty)
  }
}
