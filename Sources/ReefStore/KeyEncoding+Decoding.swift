@_spi(ReefInternal) import ReefBSON

// Reading index keys back into values (KeyEncoding.decode), for explain and for checks.

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
