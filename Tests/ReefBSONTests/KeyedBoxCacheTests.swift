import Testing

@testable import ReefBSON

@Suite("Keyed container boxes")
struct KeyedBoxCacheTests {
  /// The coders reuse the standard library's container boxes only when a keyed container is one
  /// reference to its box; with another layout they still work, but each container costs an
  /// allocation again. This toolchain must keep the fast path.
  @Test func theBoxLayoutHoldsOnThisToolchain() {
    #expect(KeyedBoxCache.layoutHolds)
    #expect(KeyedEncodingBoxCache.layoutHolds)
  }
}
