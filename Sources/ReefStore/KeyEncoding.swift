@_spi(ReefInternal) import ReefBSON

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

// MARK: - Numbers

extension KeyEncoding {
  /// The bias added to a number's decimal exponent before it is written as a big-endian UInt16.
  static let exponentBias = 0x8000
  /// The smallest and largest decimal exponents a number can have (value = 0.d₁d₂… × 10^E):
  /// Decimal128's smallest subnormal 1E-6176 and its largest finite value, just below 1E6145.
  static let exponentRange = -6175...6145
  /// The most significant digits any BSON number has (a double's exact expansion has at most 767).
  static let maximumDigits = 800

  static func appendInteger(_ x: Int64, to key: inout [UInt8]) {
    if x == 0 {
      key.append(Tag.zero)
    } else {
      appendFinite(magnitude: x.magnitude, exponent: 0, negative: x < 0, to: &key)
    }
  }

  static func appendDouble(_ x: Double, to key: inout [UInt8]) {
    if x.isNaN { return key.append(Tag.nan) }
    if x.isInfinite { return key.append(x < 0 ? Tag.negativeInfinity : Tag.positiveInfinity) }
    if x == 0 { return key.append(Tag.zero) }
    let magnitude = x.magnitude
    if magnitude < 0x1p64, magnitude == magnitude.rounded(.towardZero) {
      return appendFinite(magnitude: UInt64(magnitude), exponent: 0, negative: x < 0, to: &key)
    }
    appendNonIntegralDouble(x, to: &key)
  }

  /// A double that is not an integer below 2^64: m × 2^e written out in decimal exactly.
  @inline(never)
  static func appendNonIntegralDouble(_ x: Double, to key: inout [UInt8]) {
    var significand = x.significandBitPattern | (x.isNormal ? 1 << 52 : 0)
    var binaryExponent = x.isNormal ? Int(x.exponent) - 52 : -1074
    while significand & 1 == 0 {
      significand >>= 1
      binaryExponent += 1
    }
    if binaryExponent < 0 {
      // m × 2^-k = m × 5^k × 10^-k; the product has no trailing zero (m is odd, k > 0).
      let k = -binaryExponent
      var product = significand
      var fits = true
      for _ in 0..<k where fits {
        let (next, overflow) = product.multipliedReportingOverflow(by: 5)
        product = next
        fits = !overflow
      }
      if fits { return appendFinite(magnitude: product, exponent: -k, negative: x < 0, to: &key) }
      var big = DecimalLimbs(significand)
      var remaining = k
      while remaining > 0 {
        let step = min(remaining, 13)
        big.multiply(by: power5[step])
        remaining -= step
      }
      let digits = big.digits()
      appendFinite(digits: digits, exponent: digits.count - k, negative: x < 0, to: &key)
    } else {
      var big = DecimalLimbs(significand)
      var remaining = binaryExponent
      while remaining > 0 {
        let step = min(remaining, 32)
        big.multiply(by: 1 << UInt64(step))
        remaining -= step
      }
      var digits = big.digits()
      let count = digits.count
      while digits.last == 0 { digits.removeLast() }
      appendFinite(digits: digits, exponent: count, negative: x < 0, to: &key)
    }
  }

  static let power5: [UInt64] = (0...13).map { n in (0..<n).reduce(1) { value, _ in value * 5 } }

  static func appendDecimal(_ x: Decimal128, to key: inout [UInt8]) {
    // A non-canonical coefficient (above 10^34 - 1) reads as zero, as MongoDB does.
    let parts = ExactDecimal(x)
    switch parts.kind {
    case .nan: key.append(Tag.nan)
    case .infinity: key.append(parts.negative ? Tag.negativeInfinity : Tag.positiveInfinity)
    case .finite:
      if parts.coefficient == 0 { return key.append(Tag.zero) }
      appendFinite(magnitude: parts.coefficient, exponent: parts.exponent, negative: parts.negative, to: &key)
    }
  }

  /// Appends the non-zero number `magnitude × 10^exponent` (negated when `negative`).
  static func appendFinite<T: FixedWidthInteger & UnsignedInteger>(
    magnitude: T, exponent: Int, negative: Bool, to key: inout [UInt8]
  ) {
    var m = magnitude
    var scale = exponent
    while m % 10 == 0 {
      m /= 10
      scale += 1
    }
    var count = 1
    var power: T = 1
    while m / power >= 10 {
      power *= 10  // Safe from overflow: power * 10 <= m.
      count += 1
    }
    let flip: UInt8 = negative ? 0xFF : 0
    appendHead(decimalExponent: count + scale, negative: negative, to: &key)
    var remaining = count
    while remaining > 0 {
      let first = m / power
      m %= power
      power /= 10
      var second: T = 0
      remaining -= 1
      if remaining > 0 {
        second = m / power
        m %= power
        power /= 10
        remaining -= 1
      }
      let more: UInt8 = remaining > 0 ? 1 : 0
      key.append((UInt8(truncatingIfNeeded: 20 * first + 2 * second) | more) ^ flip)
    }
  }

  /// Appends the non-zero number 0.d₁d₂…dₙ × 10^exponent; `digits` has no leading or trailing zero.
  static func appendFinite(digits: [UInt8], exponent: Int, negative: Bool, to key: inout [UInt8]) {
    let flip: UInt8 = negative ? 0xFF : 0
    appendHead(decimalExponent: exponent, negative: negative, to: &key)
    var index = 0
    while index < digits.count {
      let second = index + 1 < digits.count ? digits[index + 1] : 0
      let more: UInt8 = index + 2 < digits.count ? 1 : 0
      key.append(((20 * digits[index] + 2 * second) | more) ^ flip)
      index += 2
    }
  }

  static func appendHead(decimalExponent: Int, negative: Bool, to key: inout [UInt8]) {
    let flip: UInt8 = negative ? 0xFF : 0
    let biased = UInt16(truncatingIfNeeded: decimalExponent + exponentBias)
    key.append(negative ? Tag.negative : Tag.positive)
    key.append(UInt8(truncatingIfNeeded: biased >> 8) ^ flip)
    key.append(UInt8(truncatingIfNeeded: biased) ^ flip)
  }
}

/// An unsigned integer in base 10^9 limbs (least significant first), for writing a double's
/// exact decimal expansion.
struct DecimalLimbs {
  var limbs: [UInt32]

  init(_ value: UInt64) {
    limbs = []
    var rest = value
    repeat {
      limbs.append(UInt32(rest % 1_000_000_000))
      rest /= 1_000_000_000
    } while rest > 0
  }

  /// Multiplies by `factor` (at most 2^32).
  mutating func multiply(by factor: UInt64) {
    var carry: UInt64 = 0
    for index in limbs.indices {
      // Safe: limb < 10^9 and factor <= 2^32, so the product plus carry stays below 2^63.
      let product = UInt64(limbs[index]) &* factor &+ carry
      limbs[index] = UInt32(product % 1_000_000_000)
      carry = product / 1_000_000_000
    }
    while carry > 0 {
      limbs.append(UInt32(carry % 1_000_000_000))
      carry /= 1_000_000_000
    }
  }

  /// The decimal digits, most significant first, without leading zeros.
  func digits() -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(limbs.count * 9)
    for index in limbs.indices.reversed() {
      var limb = limbs[index]
      var chunk = [UInt8](repeating: 0, count: 9)
      for position in (0..<9).reversed() {
        chunk[position] = UInt8(limb % 10)
        limb /= 10
      }
      if out.isEmpty {
        out.append(contentsOf: chunk.drop(while: { $0 == 0 }))
      } else {
        out.append(contentsOf: chunk)
      }
    }
    return out
  }
}

// MARK: - Decoding

/// Reads one encoded component, complementing each byte with `mask` (0xFF for descending).
struct KeyReader {
  let key: [UInt8]
  var offset: Int
  let mask: UInt8

  func error(_ kind: BSONError.Kind, _ message: String, at position: Int? = nil) -> BSONError {
    BSONError(kind, "index key: " + message, offset: position ?? offset)
  }

  mutating func byte() throws(BSONError) -> UInt8 {
    guard offset < key.count else { throw error(.truncated, "the key ends inside a value") }
    defer { offset += 1 }
    return key[offset] ^ mask
  }

  mutating func bytes(_ count: Int) throws(BSONError) -> [UInt8] {
    guard count <= key.count - offset else {
      throw error(.truncated, "\(count) bytes expected, \(key.count - offset) left")
    }
    defer { offset += count }
    return key[offset..<offset + count].map { $0 ^ mask }
  }

  mutating func bigEndian<T: FixedWidthInteger>(_: T.Type) throws(BSONError) -> T {
    var value: T = 0
    for _ in 0..<MemoryLayout<T>.size { value = value << 8 | T(try byte()) }
    return value
  }

  /// Reads an escaped, terminated byte string.
  mutating func escaped() throws(BSONError) -> [UInt8] {
    var out: [UInt8] = []
    while true {
      let b = try byte()
      if b != 0 {
        out.append(b)
        continue
      }
      switch try byte() {
      case 0x00: return out
      case 0xFF: out.append(0)
      default:
        throw error(.invalidValue, "00 in a string must be followed by 00 (end) or FF (zero byte)", at: offset - 1)
      }
    }
  }

  mutating func string() throws(BSONError) -> String {
    let start = offset
    let bytes = try escaped()
    guard let string = String(validating: bytes, as: UTF8.self) else {
      throw error(.invalidUTF8, "a string is not valid UTF-8", at: start)
    }
    return string
  }

  /// A key or regular expression part: a string without zero bytes.
  mutating func cString() throws(BSONError) -> String {
    let start = offset
    let string = try self.string()
    guard !string.utf8.contains(0) else {
      throw error(.embeddedNull, "a document key or regular expression contains a zero byte", at: start)
    }
    return string
  }

  mutating func objectId() throws(BSONError) -> ObjectId {
    ObjectId(bytes: try bytes(12))!  // 12 bytes always make an ObjectId.
  }

  mutating func value(depth: Int) throws(BSONError) -> BSON {
    let start = offset
    let tag = try byte()
    typealias Tag = KeyEncoding.Tag
    switch tag {
    case Tag.minKey: return .minKey
    case Tag.undefined: return .undefined
    case Tag.null: return .null
    case Tag.nan: return .double(.nan)
    case Tag.negativeInfinity: return .double(-.infinity)
    case Tag.zero: return .int32(0)
    case Tag.positiveInfinity: return .double(.infinity)
    case Tag.negative, Tag.positive: return try number(start: start, negative: tag == Tag.negative)
    case Tag.string: return .string(try string())
    case Tag.document: return .document(try elements(depth: depth + 1))
    case Tag.array:
      guard depth + 1 <= KeyEncoding.maximumDecodingDepth else { throw tooDeep(start) }
      var builder = ArrayBuilder()
      while true {
        let rankOffset = offset
        let rank = try byte()
        if rank == Tag.end { break }
        let element = try value(depth: depth + 1)
        try checkRank(rank, of: element, at: rankOffset)
        builder.append(element)
      }
      return .array(builder.array)
    case Tag.binary:
      let length = try bigEndian(UInt32.self)
      guard length <= UInt32(Int32.max) else {
        throw error(.invalidLength, "binary length \(length) is over Int32.max", at: start + 1)
      }
      let subtype = Binary.Subtype(rawValue: try byte())
      let payloadStart = offset
      var data = try bytes(Int(length))
      if subtype == .binaryOld {
        guard data.count >= 4,
          UInt32(data[0]) | UInt32(data[1]) << 8 | UInt32(data[2]) << 16 | UInt32(data[3]) << 24 == length - 4
        else {
          throw error(.invalidValue, "a subtype 2 binary must repeat its length minus 4", at: payloadStart)
        }
        data.removeFirst(4)
      }
      return .binary(Binary(subtype: subtype, data: data))
    case Tag.objectId: return .objectId(try objectId())
    case Tag.boolFalse: return .bool(false)
    case Tag.boolTrue: return .bool(true)
    case Tag.datetime:
      let bits = try bigEndian(UInt64.self) ^ (1 << 63)
      return .datetime(BSONDateTime(millisecondsSinceEpoch: Int64(bitPattern: bits)))
    case Tag.timestamp:
      let bits = try bigEndian(UInt64.self)
      return .timestamp(
        BSONTimestamp(timestamp: UInt32(truncatingIfNeeded: bits >> 32), increment: UInt32(truncatingIfNeeded: bits)))
    case Tag.regex:
      var regex = BSONRegularExpression(pattern: try cString())
      regex.options = try cString()  // as stored, not re-sorted
      return .regex(regex)
    case Tag.dbPointer:
      let ref = try string()
      return .dbPointer(DBPointer(ref: ref, id: try objectId()))
    case Tag.javascript: return .javascript(try string())
    case Tag.javascriptWithScope:
      let code = try string()
      return .javascriptWithScope(JavaScriptWithScope(code: code, scope: try elements(depth: depth + 1)))
    case Tag.maxKey: return .maxKey
    default:
      throw error(.unknownType, "byte \(hex(tag)) is not a type byte of the key encoding", at: start)
    }
  }

  func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
  }

  func tooDeep(_ position: Int) -> BSONError {
    error(.depthLimitExceeded, "nested deeper than \(KeyEncoding.maximumDecodingDepth) levels", at: position)
  }

  func checkRank(_ rank: UInt8, of value: BSON, at position: Int) throws(BSONError) {
    let expected = KeyEncoding.rankByte(value)
    guard rank == expected else {
      throw error(
        .invalidValue, "element type byte \(hex(rank)) does not match its value's \(hex(expected))", at: position)
    }
  }

  /// The elements of a document (or a code-with-scope's scope), up to the end byte.
  mutating func elements(depth: Int) throws(BSONError) -> Document {
    guard depth <= KeyEncoding.maximumDecodingDepth else { throw tooDeep(offset - 1) }
    var builder = DocumentBuilder()
    while true {
      let rankOffset = offset
      let rank = try byte()
      if rank == KeyEncoding.Tag.end { break }
      let name = try cString()
      let element = try value(depth: depth)
      try checkRank(rank, of: element, at: rankOffset)
      builder.append(name, element)
    }
    return builder.document
  }

  /// A finite non-zero number whose type byte is at `start`.
  mutating func number(start: Int, negative: Bool) throws(BSONError) -> BSON {
    let flip: UInt8 = negative ? 0xFF : 0
    let flip16: UInt16 = negative ? 0xFFFF : 0
    let exponent = Int(try bigEndian(UInt16.self) ^ flip16) - KeyEncoding.exponentBias
    guard KeyEncoding.exponentRange.contains(exponent) else {
      throw error(.invalidValue, "decimal exponent \(exponent) is outside every BSON number's range", at: start + 1)
    }
    var digits: [UInt8] = []
    while true {
      let b = try byte() ^ flip
      guard b < 200 else { throw error(.invalidValue, "digit pair byte \(b) is over 199", at: offset - 1) }
      let pair = b >> 1
      digits.append(pair / 10)
      digits.append(pair % 10)
      if b & 1 == 0 { break }
      guard digits.count < KeyEncoding.maximumDigits else {
        throw error(.invalidValue, "more digits than any BSON number has", at: offset)
      }
    }
    if digits.last == 0 { digits.removeLast() }
    guard digits.first != 0, digits.last != 0 else {
      throw error(.invalidValue, "a number's digits start or end with zero", at: start)
    }
    let consumed = key[start..<offset].map { $0 ^ mask }
    let scale = exponent - digits.count  // value = D × 10^scale
    var candidate: BSON? = integer(digits: digits, scale: scale, negative: negative)
    if candidate == nil, let double = double(digits: digits, scale: scale, negative: negative) {
      candidate = .double(double)
    }
    if let found = candidate, encodes(found, to: consumed) { return found }
    if let decimal = decimal(digits: digits, scale: scale, negative: negative),
      encodes(.decimal128(decimal), to: consumed)
    {
      return .decimal128(decimal)
    }
    throw error(.invalidValue, "no BSON number type holds this number exactly", at: start)
  }

  func encodes(_ value: BSON, to bytes: [UInt8]) -> Bool {
    var encoded: [UInt8] = []
    encoded.reserveCapacity(bytes.count)
    KeyEncoding.appendValue(value, to: &encoded)
    return encoded == bytes
  }

  func integer(digits: [UInt8], scale: Int, negative: Bool) -> BSON? {
    guard scale >= 0, digits.count + scale <= 19 else { return nil }
    var magnitude: UInt64 = 0
    for digit in digits { magnitude = magnitude * 10 + UInt64(digit) }  // Safe: at most 19 digits.
    for _ in 0..<scale { magnitude *= 10 }  // Safe: at most 19 digits in all.
    if negative {
      if magnitude <= UInt64(Int32.max) + 1 { return .int32(Int32(truncatingIfNeeded: 0 &- magnitude)) }
      if magnitude <= UInt64(Int64.max) + 1 { return .int64(Int64(bitPattern: 0 &- magnitude)) }
    } else {
      if magnitude <= UInt64(Int32.max) { return .int32(Int32(magnitude)) }
      if magnitude <= UInt64(Int64.max) { return .int64(Int64(magnitude)) }
    }
    return nil
  }

  /// The correctly rounded double nearest the number; the caller checks that it is exact.
  func double(digits: [UInt8], scale: Int, negative: Bool) -> Double? {
    var text = negative ? "-" : ""
    text.reserveCapacity(digits.count + 8)
    for digit in digits { text.unicodeScalars.append(Unicode.Scalar(48 + digit)) }
    text += "e\(scale)"
    guard let value = Double(text), value.isFinite, value != 0 else { return nil }
    return value
  }

  func decimal(digits: [UInt8], scale: Int, negative: Bool) -> Decimal128? {
    // The largest exponent that keeps the coefficient within 34 digits, and at most 6111.
    let exponent = min(scale, ExactDecimal.maxExponent)
    let count = digits.count + scale - exponent
    guard count <= ExactDecimal.maxDigits, exponent >= ExactDecimal.minExponent else { return nil }
    var coefficient: UInt128 = 0
    for digit in digits { coefficient = coefficient * 10 + UInt128(digit) }
    for _ in 0..<(scale - exponent) { coefficient *= 10 }  // Safe: at most 34 digits in all.
    return ExactDecimal(negative: negative, coefficient: coefficient, exponent: exponent).decimal128
  }
}
