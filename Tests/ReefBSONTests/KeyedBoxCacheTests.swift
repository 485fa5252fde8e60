import Testing

@testable import ReefBSON

@Suite("Keyed container boxes")
struct KeyedBoxCacheTests {
  /// The decoder reuses the standard library's container boxes only when a
  /// `KeyedDecodingContainer` is one reference to its box; with another layout it still works,
  /// but each container costs an allocation again. This toolchain must keep the fast path.
  @Test func theBoxLayoutHoldsOnThisToolchain() {
    #expect(KeyedBoxCache.layoutHolds)
  }
}
