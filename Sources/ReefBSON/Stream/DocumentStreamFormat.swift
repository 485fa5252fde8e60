/// What a stream of documents is written in: BSON, or Extended JSON as mongoexport writes it.
///
/// ``detect(_:maximumSize:)`` tells them apart from the first bytes of the (decompressed) input,
/// without consuming them; read a ``bson`` stream with ``BSONStreamReader`` and the others with
/// ``ExtendedJSONStreamReader``.
public enum DocumentStreamFormat: Sendable, Hashable {
  /// Concatenated BSON documents (mongodump's and bsondump's `.bson` files).
  case bson
  /// A JSON array of Extended JSON documents (`mongoexport --jsonArray`).
  case extendedJSONArray
  /// Extended JSON documents one after another: one per line (`mongoexport` by default), or
  /// pretty-printed, separated by whitespace. Also text that is neither BSON nor starts like
  /// JSON, whose reader then says what it found.
  case extendedJSONSequence

  /// Whether the input is Extended JSON text.
  public var isExtendedJSON: Bool { self != .bson }

  /// The most bytes of leading whitespace looked at to tell an array from a sequence.
  static let whitespaceLookahead = 64 * 1024

  /// Detects the format of `source` from its first bytes, which stay unread.
  ///
  /// The rules, in order:
  /// 1. An empty input is an empty BSON stream (both readers return no documents).
  /// 2. A UTF-8 byte-order mark (`EF BB BF`) starts Extended JSON, unless a zero byte follows it
  ///    (then it is the length of a 12 MB BSON document).
  /// 3. A zero byte in the first four bytes means BSON: a document length of at most 16 MiB has a
  ///    zero top byte, and JSON text never holds a zero byte (so a truncated length is BSON too). This comes before looking for `{`,
  ///    because a length can itself be the byte `{` (a 123-byte document) or whitespace.
  /// 4. A length between 5 and `maximumSize` followed by a BSON type byte that is not JSON
  ///    whitespace means BSON (for documents over 16 MiB, when the limit allows them).
  /// 5. Otherwise the input is Extended JSON: an array when its first byte after whitespace (and
  ///    the byte-order mark) is `[`, a sequence when not. Only the first 64 KiB are looked at:
  ///    longer leading whitespace reads as a sequence, and the reader still finds an array
  ///    after it.
  /// - Parameters:
  ///   - source: the input, positioned at its start.
  ///   - maximumSize: the largest BSON document to expect (``ValidationOptions/maximumSize``).
  /// - Throws: ``BSONError/Kind/io`` when the input cannot be read or decompressed.
  public static func detect(
    _ source: ByteSource, maximumSize: Int = ValidationOptions.default.maximumSize
  ) throws(BSONError) -> DocumentStreamFormat {
    let head = try source.peek(count: 5)
    if head.isEmpty { return .bson }
    var textStart = 0
    if head.starts(with: [0xEF, 0xBB, 0xBF]) && (head.count < 4 || head[3] != 0) {
      textStart = 3
    } else {
      if head.prefix(4).contains(0) { return .bson }
      guard head.count == 5 else { return try jsonForm(source, from: 0) }
      let length = Int(
        Int32(bitPattern: UInt32(head[0]) | UInt32(head[1]) << 8 | UInt32(head[2]) << 16 | UInt32(head[3]) << 24))
      if length >= 5 && length <= maximumSize && isElementStart(head[4]) { return .bson }
    }
    return try jsonForm(source, from: textStart)
  }

  /// The form of Extended JSON text whose first `textStart` bytes are a byte-order mark.
  private static func jsonForm(_ source: ByteSource, from textStart: Int) throws(BSONError) -> DocumentStreamFormat {
    var count = 256
    while true {
      let prefix = try source.peek(count: count)
      var i = textStart
      while i < prefix.count && isJSONWhitespace(prefix[i]) { i += 1 }
      if i < prefix.count { return prefix[i] == UInt8(ascii: "[") ? .extendedJSONArray : .extendedJSONSequence }
      // Only whitespace so far: at the end of the input, or past the lookahead, a sequence.
      if prefix.count < count || count >= whitespaceLookahead { return .extendedJSONSequence }
      count *= 4
    }
  }

  /// Whether `byte` can follow a document length in BSON and cannot be JSON whitespace.
  private static func isElementStart(_ byte: UInt8) -> Bool {
    ((0x01...0x13).contains(byte) && !isJSONWhitespace(byte)) || byte == 0x7F || byte == 0xFF
  }

  static func isJSONWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }
}
