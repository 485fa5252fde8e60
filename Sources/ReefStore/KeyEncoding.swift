import ReefBSON

/// The order-preserving byte encoding of BSON values used for index keys.
///
/// Comparing two encodings as unsigned bytes (`memcmp`, then the shorter first) gives the same
/// order as MongoDB's comparison of the values (`compareBSON` in ReefQuery): values of different
/// canonical types order by type, numbers compare exactly across int32, int64, double and
/// Decimal128, strings bytewise, documents and arrays element by element. Values that compare
/// equal encode to identical bytes, so LMDB's byte order is query order and equality lookups are
/// exact byte matches.
///
/// Every encoding is self-delimiting (no encoding is a prefix of another), so a compound key is
/// the concatenation of its components and compares component by component. A descending
/// component is the complement of its ascending bytes, which reverses its order.
///
/// The exact format, with examples, is in `Specs/store/key-encoding.md`.
public enum KeyEncoding {
  /// Appends one value's encoding; `descending` complements its bytes (for a descending index component).
  ///
  /// Strings, integers and integral doubles encode without allocating beyond `key`'s own growth;
  /// reserve capacity in `key` to avoid that too.
  ///
  /// - Parameters:
  ///   - value: The value to encode.
  ///   - descending: Whether to complement the bytes, so that larger values sort first.
  ///   - key: The key to append to.
  /// - Complexity: O(*n*) in the size of the value; a non-integral double takes O(*d*²) in its
  ///   number of exact decimal digits (at most 767).
  public static func append(_ value: BSON, descending: Bool = false, to key: inout [UInt8]) {
    let start = key.count
    appendValue(value, to: &key)
    if descending { complement(&key, from: start) }
  }

  /// The encoding of a compound key.
  ///
  /// - Parameters:
  ///   - values: The components, in index order.
  ///   - descending: For each component, whether it is descending; `nil` for all ascending.
  ///     Precondition: when given, it has one flag per value.
  /// - Returns: The concatenated encodings of the components.
  /// - Complexity: O(*n*) in the total size of the values.
  public static func encode(_ values: [BSON], descending: [Bool]? = nil) -> [UInt8] {
    if let descending {
      precondition(
        descending.count == values.count,
        "KeyEncoding.encode: \(descending.count) descending flags for \(values.count) values")
    }
    var key: [UInt8] = []
    var estimate = 0
    for value in values { estimate += estimatedCount(value) }
    key.reserveCapacity(estimate)
    for index in values.indices {
      append(values[index], descending: descending?[index] ?? false, to: &key)
    }
    return key
  }

  /// Calls `body` with `encode([id])`, the key of a document whose `_id` is `id`: for an
  /// ObjectId (the usual `_id`) encoded on the stack, for other values in an array.
  @inline(__always)
  static func withPrimaryKey<R, E: Error>(_ id: BSON, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    guard case .objectId(let objectId) = id else {
      return try withBytes(encode([id]), body)
    }
    // The tag, then the 12 bytes: the encoding `appendValue` writes for an ObjectId.
    var buffer: (UInt64, UInt64) = (0, 0)
    return try withUnsafeMutableBytes(of: &buffer) { (raw) throws(E) -> R in
      raw[0] = Tag.objectId
      // Safe: the buffer holds 16 bytes, the key 13.
      withUnsafeBytes(of: objectId.bytes) { id in
        raw.baseAddress!.advanced(by: 1).copyMemory(from: id.baseAddress!, byteCount: 12)
      }
      return try body(UnsafeRawBufferPointer(start: raw.baseAddress, count: 13))
    }
  }

  /// Decodes one component starting at `offset`; returns the value and the offset after it.
  ///
  /// Numbers decode to the first of these types that holds the value exactly: `.int32` for an
  /// integer in Int32's range, `.int64` for an integer in Int64's range, `.double`, then
  /// `.decimal128` (with the largest exponent that keeps the coefficient within 34 digits, capped
  /// at 6111). Zero (including `-0.0` and Decimal128 zeros) decodes to `.int32(0)`; every NaN to
  /// `.double(.nan)`; the infinities to `.double(±.infinity)`. The decoded number is equal to the
  /// encoded one (`compareBSON == 0`) but need not have its type. A symbol decodes to `.string`,
  /// which it equals.
  ///
  /// - Parameters:
  ///   - key: The key bytes.
  ///   - offset: Where the component starts.
  ///   - descending: Whether the component was encoded as descending.
  /// - Returns: The value and the offset of the byte after the component.
  /// - Throws: ``BSONError`` with the offset of the problem, for bytes that are not an encoding
  ///   this type writes: ``BSONError/Kind/truncated`` when the key ends inside the component,
  ///   ``BSONError/Kind/unknownType`` for an unknown type byte, ``BSONError/Kind/invalidUTF8``,
  ///   ``BSONError/Kind/embeddedNull`` for a zero byte in a key or regular expression,
  ///   ``BSONError/Kind/depthLimitExceeded`` beyond ``maximumDecodingDepth`` levels of nesting,
  ///   and ``BSONError/Kind/invalidValue`` for anything else that is not canonical.
  /// - Complexity: O(*n*) in the size of the component, plus O(*d*²) for a number of *d* digits.
  public static func decode(_ key: [UInt8], at offset: Int, descending: Bool = false) throws -> (BSON, Int) {
    guard offset >= 0, offset <= key.count else {
      throw BSONError(.invalidLength, "offset \(offset) is outside the key of \(key.count) bytes", offset: offset)
    }
    var reader = KeyReader(key: key, offset: offset, mask: descending ? 0xFF : 0)
    let value = try reader.value(depth: 0)
    return (value, reader.offset)
  }

  /// The deepest nesting of documents and arrays that ``decode(_:at:descending:)`` accepts.
  public static let maximumDecodingDepth = 200
}

// MARK: - Type bytes

extension KeyEncoding {
  /// The first byte of each encoding, in MongoDB's canonical type order.
  enum Tag {
    static let minKey: UInt8 = 0x10
    static let undefined: UInt8 = 0x14
    static let null: UInt8 = 0x18
    static let nan: UInt8 = 0x20
    static let negativeInfinity: UInt8 = 0x21
    static let negative: UInt8 = 0x22
    static let zero: UInt8 = 0x23
    static let positive: UInt8 = 0x24
    static let positiveInfinity: UInt8 = 0x25
    static let string: UInt8 = 0x30
    static let document: UInt8 = 0x34
    static let array: UInt8 = 0x38
    static let binary: UInt8 = 0x3C
    static let objectId: UInt8 = 0x40
    static let boolFalse: UInt8 = 0x44
    static let boolTrue: UInt8 = 0x45
    static let datetime: UInt8 = 0x48
    static let timestamp: UInt8 = 0x4C
    static let regex: UInt8 = 0x50
    static let dbPointer: UInt8 = 0x54
    static let javascript: UInt8 = 0x58
    static let javascriptWithScope: UInt8 = 0x5C
    static let maxKey: UInt8 = 0xF0
    /// Ends the elements of a document or array; below every type byte.
    static let end: UInt8 = 0x00
  }

  /// The rank byte (``rankByte(_:)``) of the value whose encoding starts with `tag`.
  static func rankByte(ofTag tag: UInt8) -> UInt8 {
    switch tag {
    case Tag.nan...Tag.positiveInfinity: Tag.nan
    case Tag.boolTrue: Tag.boolFalse
    default: tag
    }
  }

  /// The byte that stands for a value's canonical type inside a document or array: the type
  /// byte with the number classes and the two booleans folded together.
  static func rankByte(_ value: BSON) -> UInt8 {
    switch value {
    case .minKey: Tag.minKey
    case .undefined: Tag.undefined
    case .null: Tag.null
    case .double, .int32, .int64, .decimal128: Tag.nan
    case .string, .symbol: Tag.string
    case .document: Tag.document
    case .array: Tag.array
    case .binary: Tag.binary
    case .objectId: Tag.objectId
    case .bool: Tag.boolFalse
    case .datetime: Tag.datetime
    case .timestamp: Tag.timestamp
    case .regex: Tag.regex
    case .dbPointer: Tag.dbPointer
    case .javascript: Tag.javascript
    case .javascriptWithScope: Tag.javascriptWithScope
    case .maxKey: Tag.maxKey
    }
  }

  /// A cheap upper bound of a value's encoded size for the common cases (exact for strings
  /// without zero bytes and for integers), used to reserve capacity.
  static func estimatedCount(_ value: BSON) -> Int {
    switch value {
    case .string(let s), .symbol(let s), .javascript(let s): 3 &+ s.utf8.count
    case .int32, .int64, .double, .decimal128: 24
    case .document(let d): 2 &* d.byteCount
    case .array(let a): 2 &* a.document.byteCount
    case .binary(let b): 10 &+ b.data.count
    case .objectId: 13
    case .datetime, .timestamp: 9
    case .regex(let r): 5 &+ r.pattern.utf8.count &+ r.options.utf8.count
    case .dbPointer(let p): 15 &+ p.ref.utf8.count
    case .javascriptWithScope(let c): 3 &+ c.code.utf8.count &+ 2 &* c.scope.byteCount
    default: 1
    }
  }

  static func complement(_ key: inout [UInt8], from start: Int) {
    for index in start..<key.count { key[index] = ~key[index] }
  }
}

// MARK: - Encoding

extension KeyEncoding {
  static func appendValue(_ value: BSON, to key: inout [UInt8]) {
    switch value {
    case .minKey: key.append(Tag.minKey)
    case .undefined: key.append(Tag.undefined)
    case .null: key.append(Tag.null)
    case .int32(let x): appendInteger(Int64(x), to: &key)
    case .int64(let x): appendInteger(x, to: &key)
    case .double(let x): appendDouble(x, to: &key)
    case .decimal128(let x): appendDecimal(x, to: &key)
    case .string(let s), .symbol(let s):
      key.append(Tag.string)
      appendString(s, to: &key)
    case .document(let d):
      key.append(Tag.document)
      appendElements(d, withKeys: true, to: &key)
    case .array(let a):
      key.append(Tag.array)
      appendElements(a.document, withKeys: false, to: &key)
    case .binary(let b):
      key.append(Tag.binary)
      let old = b.subtype == .binaryOld
      // The BSON length: subtype 2 repeats the payload's length inside the payload.
      appendBigEndian(UInt32(truncatingIfNeeded: b.data.count &+ (old ? 4 : 0)), to: &key)
      key.append(b.subtype.rawValue)
      if old {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: b.data.count).littleEndian) { key.append(contentsOf: $0) }
      }
      key.append(contentsOf: b.data)
    case .objectId(let id):
      key.append(Tag.objectId)
      withUnsafeBytes(of: id.bytes) { key.append(contentsOf: $0) }
    case .bool(let b): key.append(b ? Tag.boolTrue : Tag.boolFalse)
    case .datetime(let d):
      key.append(Tag.datetime)
      appendBigEndian(UInt64(bitPattern: d.millisecondsSinceEpoch) ^ (1 << 63), to: &key)
    case .timestamp(let t):
      key.append(Tag.timestamp)
      appendBigEndian(UInt64(t.timestamp) << 32 | UInt64(t.increment), to: &key)
    case .regex(let r):
      key.append(Tag.regex)
      appendString(r.pattern, to: &key)
      appendString(r.options, to: &key)
    case .dbPointer(let p):
      key.append(Tag.dbPointer)
      appendString(p.ref, to: &key)
      withUnsafeBytes(of: p.id.bytes) { key.append(contentsOf: $0) }
    case .javascript(let s):
      key.append(Tag.javascript)
      appendString(s, to: &key)
    case .javascriptWithScope(let c):
      key.append(Tag.javascriptWithScope)
      appendString(c.code, to: &key)
      appendElements(c.scope, withKeys: true, to: &key)
    case .maxKey: key.append(Tag.maxKey)
    }
  }

  static func appendBigEndian<T: FixedWidthInteger>(_ value: T, to key: inout [UInt8]) {
    withUnsafeBytes(of: value.bigEndian) { key.append(contentsOf: $0) }
  }

  /// Appends a string's UTF-8 bytes with each zero byte written as `00 FF`, then `00 00`.
  static func appendString(_ string: String, to key: inout [UInt8]) {
    var string = string
    string.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: &key) }
  }

  static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to key: inout [UInt8]) {
    var runStart = 0
    for index in 0..<bytes.count where bytes[index] == 0 {
      key.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
      key.append(0x00)
      key.append(0xFF)
      runStart = index &+ 1  // Safe: index < bytes.count.
    }
    key.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart...]))
    key.append(0x00)
    key.append(0x00)
  }

  /// Appends the elements of a document or array, each as its rank byte, its key (documents
  /// only) and its value, then the end byte.
  static func appendElements(_ document: Document, withKeys: Bool, to key: inout [UInt8]) {
    for element in document {
      let value = element.value
      key.append(rankByte(value))
      if withKeys { element.withUnsafeKeyBytes { appendEscaped($0, to: &key) } }
      appendValue(value, to: &key)
    }
    key.append(Tag.end)
  }
}
