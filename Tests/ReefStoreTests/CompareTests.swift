import ReefBSON
import ReefQuery
import Testing

@Suite struct CompareBSONTests {
  @Test func publicComparisonFollowsMongoOrder() {
    #expect(compareBSON(.int32(1), .double(1.0)) == 0)
    #expect(compareBSON(.null, .int32(0)) < 0)
    #expect(compareBSON(.string("b"), .string("a")) > 0)
  }
}
