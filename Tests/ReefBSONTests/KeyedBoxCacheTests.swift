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

  private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  private final class Kept: @unchecked Sendable {
    var container: KeyedEncodingContainer<Key>?
  }

  private struct Inner: Encodable {
    func encode(to encoder: any Encoder) throws {
      var c = encoder.container(keyedBy: Key.self)
      try c.encode("inner", forKey: Key("i"))
    }
  }

  /// Keeps its container, after encoding a value with another encoder inside its own call: that
  /// call's state ends first and is kept for reuse, so this call's state is the one let go, with
  /// the kept container's box still held.
  private struct Keeper: Encodable {
    let kept: Kept
    func encode(to encoder: any Encoder) throws {
      var c = encoder.container(keyedBy: Key.self)
      let inner = try BSONEncoder().encode(Inner())
      try c.encode(inner, forKey: Key("nested"))
      kept.container = c
    }
  }

  @Test func aContainerKeptPastAStateThatWentWritesNowhere() throws {
    let kept = Kept()
    let first = try BSONEncoder().encodeBytes(Keeper(kept: kept))
    var expected = DocumentBuilder()
    expected.appendDocument("nested") { $0.append("i", "inner") }
    #expect(first == expected.bytes)
    // The kept container writes nowhere, and later calls are unaffected.
    var stale = try #require(kept.container)
    try stale.encode(1, forKey: Key("late"))
    var nested = stale.nestedContainer(keyedBy: Key.self, forKey: Key("n"))
    try nested.encode(2, forKey: Key("x"))
    #expect(stale.codingPath.isEmpty)
    #expect(try BSONEncoder().encodeBytes(Keeper(kept: kept)) == expected.bytes)
    var inner = DocumentBuilder()
    inner.append("i", "inner")
    #expect(try BSONEncoder().encodeBytes(Inner()) == inner.bytes)
  }
}
