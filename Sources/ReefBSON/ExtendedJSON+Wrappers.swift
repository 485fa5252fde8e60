#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The keys the Extended JSON parser gives a meaning to: type wrapper keys, the legacy keys
/// (`$regex`, `$options`, `$type`) and the keys inside wrapper values.
enum ExtendedJSONKey: UInt8 {
  case other
  case oid, symbol, numberInt, numberLong, numberDouble, numberDecimal, binary, code, scope, timestamp
  case regularExpression, dbPointer, date, minKey, maxKey, undefined, uuid
  case regex, options, type
  case base64, subType, t, i, pattern, patternOptions, ref, id

  static let names: [StaticString] = [
    "", "$oid", "$symbol", "$numberInt", "$numberLong", "$numberDouble", "$numberDecimal", "$binary", "$code",
    "$scope", "$timestamp", "$regularExpression", "$dbPointer", "$date", "$minKey", "$maxKey", "$undefined",
    "$uuid", "$regex", "$options", "$type", "base64", "subType", "t", "i", "pattern", "options", "$ref", "$id",
  ]

  /// Classifies the `n` key bytes at `p`.
  @inline(__always)
  init(_ p: UnsafePointer<UInt8>, _ n: Int) { self = ExtendedJSONKey.classify(p, n) }

  @inline(__always)
  static func classify(_ p: UnsafePointer<UInt8>, _ n: Int) -> ExtendedJSONKey {
    @inline(__always) func match(_ s: StaticString) -> Bool { memcmp(p, s.utf8Start, n) == 0 }
    switch n {
    case 1:
      if p[0] == UInt8(ascii: "t") { return .t }
      if p[0] == UInt8(ascii: "i") { return .i }
    case 3:
      if match("$id") { return .id }
    case 4:
      if match("$oid") { return .oid }
      if match("$ref") { return .ref }
    case 5:
      if match("$code") { return .code }
      if match("$date") { return .date }
      if match("$type") { return .type }
      if match("$uuid") { return .uuid }
    case 6:
      if match("$scope") { return .scope }
      if match("$regex") { return .regex }
      if match("base64") { return .base64 }
    case 7:
      if match("$symbol") { return .symbol }
      if match("$binary") { return .binary }
      if match("$minKey") { return .minKey }
      if match("$maxKey") { return .maxKey }
      if match("subType") { return .subType }
      if match("pattern") { return .pattern }
      if match("options") { return .patternOptions }
    case 8:
      if match("$options") { return .options }
    case 10:
      if match("$numberInt") { return .numberInt }
      if match("$timestamp") { return .timestamp }
      if match("$dbPointer") { return .dbPointer }
      if match("$undefined") { return .undefined }
    case 11:
      if match("$numberLong") { return .numberLong }
    case 13:
      if match("$numberDouble") { return .numberDouble }
    case 14:
      if match("$numberDecimal") { return .numberDecimal }
    case 18:
      if match("$regularExpression") { return .regularExpression }
    default:
      break
    }
    return .other
  }

  /// The key as written in JSON.
  var name: String { ExtendedJSONKey.names[Int(rawValue)].description }

  /// The key's bit in a set of keys.
  @inline(__always)
  var bit: UInt64 { 1 << UInt64(rawValue) }

  /// The keys that make an object (other than the top-level one) a type wrapper.
  static let wrapperMask: UInt64 = {
    var mask: UInt64 = 0
    for k in ExtendedJSONKey.oid.rawValue...ExtendedJSONKey.uuid.rawValue { mask |= 1 << UInt64(k) }
    return mask
  }()

  /// Whether this key makes an object a type wrapper.
  var isWrapper: Bool { rawValue >= ExtendedJSONKey.oid.rawValue && rawValue <= ExtendedJSONKey.uuid.rawValue }

  /// The keys in `mask`, quoted and joined with "and" (for messages).
  static func list(_ mask: UInt64) -> String {
    var parts: [String] = []
    for k in 0..<names.count where mask & (1 << UInt64(k)) != 0 {
      parts.append(k == 0 ? "other keys" : "\"\(names[k])\"")
    }
    return parts.joined(separator: " and ")
  }
}

extension ExtendedJSONReader {
  /// The members of an object that may be a type wrapper: which keys it has and where the first
  /// four values start.
  struct Members {
    var count = 0
    var mask: UInt64 = 0
    /// The input position of a known key that appears twice, or -1.
    var duplicate = -1
    var slots: (Slot, Slot, Slot, Slot) = (Slot(), Slot(), Slot(), Slot())

    struct Slot {
      var key = ExtendedJSONKey.other
      var keyPosition = 0
      var valuePosition = 0
    }

    mutating func add(_ key: ExtendedJSONKey, keyPosition: Int, valuePosition: Int) {
      if key != .other && mask & key.bit != 0 && duplicate < 0 { duplicate = keyPosition }
      mask |= key.bit
      let slot = Slot(key: key, keyPosition: keyPosition, valuePosition: valuePosition)
      switch count {
      case 0: slots.0 = slot
      case 1: slots.1 = slot
      case 2: slots.2 = slot
      case 3: slots.3 = slot
      default: break
      }
      count &+= 1
    }

    /// The slot of `key`; only asked for keys the caller knows are present among the first four.
    func slot(_ key: ExtendedJSONKey) -> Slot {
      if slots.0.key == key { return slots.0 }
      if slots.1.key == key { return slots.1 }
      if slots.2.key == key { return slots.2 }
      return slots.3
    }

    func has(_ key: ExtendedJSONKey) -> Bool { mask & key.bit != 0 }
  }

  /// Reads the keys of the object at `pos` (skipping the values) and moves past it.
  mutating func members() throws(BSONError) -> Members {
    var m = Members()
    pos &+= 1
    skipWhitespace()
    if peek == UInt8(ascii: "}") {
      pos &+= 1
      return m
    }
    while true {
      guard peek == UInt8(ascii: "\"") else {
        throw error(.invalidJSON, "expected a key string, found \(describeByte(at: pos))", at: pos)
      }
      let keyPosition = pos
      let mark = out.count
      _ = try stringContents()
      let key = ExtendedJSONKey(out.base + mark, out.count &- mark)
      out.count = mark
      skipWhitespace()
      try expect(UInt8(ascii: ":"), "':' after the key")
      skipWhitespace()
      let valuePosition = pos
      try skipValue()
      m.add(key, keyPosition: keyPosition, valuePosition: valuePosition)
      skipWhitespace()
      let b = peek
      pos &+= 1
      if b == UInt8(ascii: ",") {
        skipWhitespace()
        continue
      }
      if b == UInt8(ascii: "}") { return m }
      pos &-= 1
      throw error(.invalidJSON, "expected ',' or '}' after a member, found \(describeByte(at: pos))", at: pos)
    }
  }

  /// When the object at `pos` is a type wrapper (or a legacy one), writes its value, moves past
  /// it and returns the BSON type; otherwise returns `nil` with nothing consumed.
  mutating func wrapperIfPresent() throws(BSONError) -> UInt8? {
    var q = pos &+ 1
    while q < end, input[q] == 0x20 || input[q] == 0x0A || input[q] == 0x0D || input[q] == 0x09 { q &+= 1 }
    guard end &- q >= 2, input[q] == UInt8(ascii: "\""),
      input[q &+ 1] == UInt8(ascii: "$") || input[q &+ 1] == UInt8(ascii: "\\")
    else { return nil }
    let objectStart = pos
    let mark = out.count
    pos = q
    _ = try stringContents()
    let first = ExtendedJSONKey(out.base + mark, out.count &- mark)
    out.count = mark
    guard first.isWrapper || first == .regex || first == .options || first == .type else {
      pos = objectStart
      return nil
    }
    // Fast path for the common case, a wrapper with a single key: no second pass over the keys.
    if first.isWrapper {
      skipWhitespace()
      if peek == UInt8(ascii: ":") {
        pos &+= 1
        skipWhitespace()
        let valuePosition = pos
        try skipValue()
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
          let after = pos &+ 1
          var single = Members()
          single.add(first, keyPosition: q, valuePosition: valuePosition)
          if let type = try wrapper(single, objectStart: objectStart) {
            pos = after
            return type
          }
        }
      }
    }
    pos = objectStart
    let m = try members()
    let after = pos
    guard let type = try wrapper(m, objectStart: objectStart) else {
      pos = objectStart
      return nil
    }
    pos = after
    return type
  }

  /// Writes the value of the wrapper object whose members are `m`, or returns `nil` when the
  /// object is an ordinary document (legacy keys used as query operators).
  mutating func wrapper(_ m: Members, objectStart: Int) throws(BSONError) -> UInt8? {
    let canonical = m.mask & ExtendedJSONKey.wrapperMask
    guard canonical != 0 else { return try legacyRegex(m) }
    if m.duplicate >= 0 {
      throw error(
        .invalidExtendedJSON, "expected each key of a type wrapper once, found a repeated key", at: m.duplicate)
    }
    if m.has(.binary) {
      if m.mask == ExtendedJSONKey.binary.bit { return try binary(m.slot(.binary)) }
      let legacy = ExtendedJSONKey.binary.bit | ExtendedJSONKey.type.bit
      if m.mask == legacy { return try legacyBinary(m.slot(.binary), m.slot(.type)) }
      throw unexpectedKey(in: objectStart, allowed: m.has(.type) ? legacy : ExtendedJSONKey.binary.bit, of: .binary)
    }
    if m.has(.code) || m.has(.scope) {
      let both = ExtendedJSONKey.code.bit | ExtendedJSONKey.scope.bit
      if m.mask == ExtendedJSONKey.code.bit {
        let code = m.slot(.code)
        try requireString(code, "a string")
        pos = code.valuePosition
        try stringValue()
        return 0x0D
      }
      if m.mask == both { return try codeWithScope(m.slot(.code), m.slot(.scope)) }
      if m.mask & ~both != 0 { throw unexpectedKey(in: objectStart, allowed: both, of: .code) }
      throw error(
        .invalidExtendedJSON, "expected \"$code\" with \"$scope\" in a code-with-scope wrapper, found no \"$code\"",
        at: objectStart)
    }
    // Every other wrapper has exactly one key.
    let key = ExtendedJSONKey(rawValue: UInt8(canonical.trailingZeroBitCount))!
    guard m.mask == key.bit else { throw unexpectedKey(in: objectStart, allowed: key.bit, of: key) }
    let slot = m.slot(key)
    let v = slot.valuePosition
    switch key {
    case .oid:
      try objectId(slot)
      return 0x07
    case .symbol:
      try requireString(slot, "a string")
      pos = v
      try stringValue()
      return 0x0E
    case .numberInt:
      let (mark, n) = try stringToTail(slot, "a string holding a 32-bit integer")
      guard let value = ExtendedJSONReader.parseInteger(out.base + mark, n), let small = Int32(exactly: value) else {
        throw badString(slot, mark: mark, n, "a 32-bit integer")
      }
      out.count = mark
      out.appendInt32LE(small)
      return 0x10
    case .numberLong:
      let (mark, n) = try stringToTail(slot, "a string holding a 64-bit integer")
      guard let value = ExtendedJSONReader.parseInteger(out.base + mark, n) else {
        throw badString(slot, mark: mark, n, "a 64-bit integer")
      }
      out.count = mark
      out.appendUInt64LE(UInt64(bitPattern: value))
      return 0x12
    case .numberDouble:
      let (mark, n) = try stringToTail(slot, "a string holding a number, \"Infinity\", \"-Infinity\" or \"NaN\"")
      guard let value = ExtendedJSONReader.parseDouble(out.base + mark, n) else {
        throw badString(slot, mark: mark, n, "a decimal number, \"Infinity\", \"-Infinity\" or \"NaN\"")
      }
      out.count = mark
      out.appendUInt64LE(value.bitPattern)
      return 0x01
    case .numberDecimal:
      let (mark, n) = try stringToTail(slot, "a string holding a decimal number")
      let text = String(decoding: UnsafeBufferPointer(start: out.base + mark, count: n), as: UTF8.self)
      guard let value = Decimal128(text) else { throw badString(slot, mark: mark, n, "a Decimal128 number") }
      out.count = mark
      out.appendUInt64LE(value.low)
      out.appendUInt64LE(value.high)
      return 0x13
    case .timestamp:
      let inner = try exactMembers(at: v, required: ExtendedJSONKey.t.bit | ExtendedJSONKey.i.bit, of: key)
      let t = try unsigned32(inner.slot(.t), in: key)
      let i = try unsigned32(inner.slot(.i), in: key)
      out.appendUInt64LE(UInt64(t) << 32 | UInt64(i))
      return 0x11
    case .regularExpression:
      let required = ExtendedJSONKey.pattern.bit | ExtendedJSONKey.patternOptions.bit
      let inner = try exactMembers(at: v, required: required, of: key)
      let pattern = inner.slot(.pattern)
      let options = inner.slot(.patternOptions)
      try requireString(pattern, "a string")
      try requireString(options, "a string")
      try regex(pattern: pattern.valuePosition, options: options.valuePosition)
      return 0x0B
    case .dbPointer:
      let required = ExtendedJSONKey.ref.bit | ExtendedJSONKey.id.bit
      let inner = try exactMembers(at: v, required: required, of: key)
      let ref = inner.slot(.ref)
      let id = inner.slot(.id)
      try requireString(ref, "a string")
      guard input[id.valuePosition] == UInt8(ascii: "{") else {
        throw typeError(id, "an ObjectId ({\"$oid\": …})")
      }
      let oid = try exactMembers(at: id.valuePosition, required: ExtendedJSONKey.oid.bit, of: .id)
      pos = ref.valuePosition
      try stringValue()
      try objectId(oid.slot(.oid))
      return 0x0C
    case .date:
      try date(slot)
      return 0x09
    case .minKey, .maxKey:
      guard let scan = ExtendedJSONNumber.scan(input, from: v, to: end, lenient: false),
        scan.isInteger && scan.exact && !scan.negative && scan.mantissa == 1
      else { throw typeError(slot, "the number 1") }
      return key == .minKey ? 0xFF : 0x7F
    case .undefined:
      guard input[v] == UInt8(ascii: "t") else { throw typeError(slot, "true") }
      return 0x06
    case .uuid:
      try uuid(slot)
      return 0x05
    default:
      // Unreachable: `canonical` holds only wrapper keys, all handled above.
      return nil
    }
  }

  // MARK: - Wrapper values

  /// `{"$regex": "…", "$options": "…"}` (legacy). A `$regex` whose value is not a string is the
  /// query operator, so the object is an ordinary document.
  mutating func legacyRegex(_ m: Members) throws(BSONError) -> UInt8? {
    let allowed = ExtendedJSONKey.regex.bit | ExtendedJSONKey.options.bit
    guard m.has(.regex), m.mask & ~allowed == 0, m.duplicate < 0 else { return nil }
    let pattern = m.slot(.regex)
    guard input[pattern.valuePosition] == UInt8(ascii: "\"") else { return nil }
    if m.has(.options) {
      let options = m.slot(.options)
      try requireString(options, "a string")
      try regex(pattern: pattern.valuePosition, options: options.valuePosition)
    } else {
      try regex(pattern: pattern.valuePosition, options: nil)
    }
    return 0x0B
  }

  /// Writes a regular expression: the pattern and the options (sorted) as C strings.
  mutating func regex(pattern: Int, options: Int?) throws(BSONError) {
    pos = pattern
    if try stringContents() {
      throw error(
        .invalidExtendedJSON, "expected a regular expression pattern without \\u0000 (BSON stores a C string)",
        at: pattern)
    }
    out.append(0)
    if let options {
      pos = options
      let start = out.count
      if try stringContents() {
        throw error(
          .invalidExtendedJSON, "expected regular expression options without \\u0000 (BSON stores a C string)",
          at: options)
      }
      ExtendedJSONReader.sortOptions(out.base + start, out.count &- start)
    }
    out.append(0)
  }

  /// Sorts regex options in place: ASCII letters by byte (insertion sort: there are a handful),
  /// anything else by `Character`, as ``BSONRegularExpression/init(pattern:options:)`` does.
  static func sortOptions(_ p: UnsafeMutablePointer<UInt8>, _ n: Int) {
    var ascii = true
    for i in 0..<n where p[i] >= 0x80 { ascii = false }
    if !ascii {
      let sorted = String(String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self).sorted())
      // Sorting valid UTF-8 by Character keeps the same bytes, so the count is unchanged.
      var i = 0
      for b in sorted.utf8 where i < n {
        p[i] = b
        i &+= 1
      }
      return
    }
    var i = 1
    while i < n {
      let b = p[i]
      var j = i
      while j > 0 && p[j &- 1] > b {
        p[j] = p[j &- 1]
        j &-= 1
      }
      p[j] = b
      i &+= 1
    }
  }

  /// `{"$binary": {"base64": "…", "subType": "…"}}`.
  mutating func binary(_ slot: Members.Slot) throws(BSONError) -> UInt8 {
    guard input[slot.valuePosition] == UInt8(ascii: "{") else {
      throw typeError(slot, "an object with \"base64\" and \"subType\"")
    }
    let required = ExtendedJSONKey.base64.bit | ExtendedJSONKey.subType.bit
    let inner = try exactMembers(at: slot.valuePosition, required: required, of: .binary)
    return try binaryValue(base64: inner.slot(.base64), subtype: inner.slot(.subType))
  }

  /// `{"$binary": "…", "$type": "…"}` (legacy).
  mutating func legacyBinary(_ data: Members.Slot, _ type: Members.Slot) throws(BSONError) -> UInt8 {
    try binaryValue(base64: data, subtype: type)
  }

  mutating func binaryValue(base64: Members.Slot, subtype: Members.Slot) throws(BSONError) -> UInt8 {
    try requireString(base64, "a base64 string")
    let (mark, n) = try stringToTail(subtype, "a string of one or two hexadecimal digits")
    let p = out.base + mark
    guard n >= 1 && n <= 2, let high = hexValue(p[0]), let low = n == 2 ? hexValue(p[1]) : 0 else {
      throw badString(subtype, mark: mark, n, "one or two hexadecimal digits")
    }
    let type = n == 2 ? high << 4 | low : high
    out.count = mark
    let lengthAt = out.count
    out.appendInt32LE(0)
    out.append(type)
    if type == 0x02 { out.appendInt32LE(0) }
    let dataStart = out.count
    pos = base64.valuePosition
    _ = try stringContents()
    let text = out.count &- dataStart
    guard let length = ExtendedJSONBase64.decode(out.base + dataStart, text, into: out.base + dataStart) else {
      throw badString(base64, mark: dataStart, text, "base64 text")
    }
    out.count = dataStart &+ length
    if type == 0x02 {
      out.patchInt32LE(Int32(truncatingIfNeeded: length &+ 4), at: lengthAt)
      out.patchInt32LE(Int32(truncatingIfNeeded: length), at: lengthAt &+ 5)
    } else {
      out.patchInt32LE(Int32(truncatingIfNeeded: length), at: lengthAt)
    }
    return 0x05
  }

  /// `{"$code": "…", "$scope": {…}}`, keys in either order.
  mutating func codeWithScope(_ code: Members.Slot, _ scope: Members.Slot) throws(BSONError) -> UInt8 {
    try requireString(code, "a string")
    guard input[scope.valuePosition] == UInt8(ascii: "{") else { throw typeError(scope, "a document") }
    let start = out.count
    out.appendInt32LE(0)
    pos = code.valuePosition
    try stringValue()
    // The scope document comes next; `objectTree()` writes it, without recursion, and then
    // patches the code-with-scope's length at `start`.
    pendingScope = PendingScope(
      start: start, keyPosition: scope.keyPosition, valuePosition: scope.valuePosition)
    return 0x0F
  }

  /// Writes the 12 bytes of the ObjectId whose 24 hex digits are the string in `slot`.
  mutating func objectId(_ slot: Members.Slot) throws(BSONError) {
    let (mark, n) = try stringToTail(slot, "a string of 24 hexadecimal digits")
    let p = out.base + mark
    var ok = n == 24
    if ok {
      // Decode in place: byte j comes from digits 2j and 2j+1, which are never overwritten first.
      for j in 0..<12 {
        guard let high = hexValue(p[2 &* j]), let low = hexValue(p[2 &* j &+ 1]) else {
          ok = false
          break
        }
        p[j] = high << 4 | low
      }
    }
    guard ok else {
      // The digits may be half decoded: read the text again for the message.
      out.count = mark
      let (again, count) = try stringToTail(slot, "a string")
      throw badString(slot, mark: again, count, "24 hexadecimal digits")
    }
    out.count = mark &+ 12
  }

  /// `{"$date": "<ISO-8601>"}` or `{"$date": {"$numberLong": "<ms>"}}`.
  mutating func date(_ slot: Members.Slot) throws(BSONError) {
    let v = slot.valuePosition
    if input[v] == UInt8(ascii: "\"") {
      let (mark, n) = try stringToTail(slot, "a string")
      let text = String(decoding: UnsafeBufferPointer(start: out.base + mark, count: n), as: UTF8.self)
      guard let ms = ISO8601.parse(text) else {
        if let problem = ISO8601.impossibleDay(in: text) {
          throw badString(slot, mark: mark, n, "a date that exists (\(problem))")
        }
        throw badString(slot, mark: mark, n, "an ISO-8601 date-time such as \"1970-01-01T00:00:00Z\"")
      }
      out.count = mark
      out.appendUInt64LE(UInt64(bitPattern: ms))
      return
    }
    guard input[v] == UInt8(ascii: "{") else {
      throw typeError(slot, "an ISO-8601 string or {\"$numberLong\": \"<milliseconds>\"}")
    }
    let inner = try exactMembers(at: v, required: ExtendedJSONKey.numberLong.bit, of: .date)
    let long = inner.slot(.numberLong)
    let (mark, n) = try stringToTail(long, "a string holding a 64-bit integer")
    guard let ms = ExtendedJSONReader.parseInteger(out.base + mark, n) else {
      throw badString(long, mark: mark, n, "a 64-bit integer")
    }
    out.count = mark
    out.appendUInt64LE(UInt64(bitPattern: ms))
  }

  /// `{"$uuid": "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"}` (hyphens optional) as binary subtype 4.
  mutating func uuid(_ slot: Members.Slot) throws(BSONError) {
    let (mark, n) = try stringToTail(slot, "a UUID string")
    let p = out.base + mark
    var high: UInt64 = 0
    var low: UInt64 = 0
    var digits = 0
    var ok = n == 36 || n == 32
    var i = 0
    while ok && i < n {
      if n == 36 && (i == 8 || i == 13 || i == 18 || i == 23) {
        ok = p[i] == UInt8(ascii: "-")
      } else if let d = hexValue(p[i]) {
        if digits < 16 { high = high << 4 | UInt64(d) } else { low = low << 4 | UInt64(d) }
        digits &+= 1
      } else {
        ok = false
      }
      i &+= 1
    }
    guard ok && digits == 32 else {
      throw badString(slot, mark: mark, n, "a UUID of 32 hexadecimal digits (8-4-4-4-12 with hyphens)")
    }
    out.count = mark
    out.appendInt32LE(16)
    out.append(0x04)
    for half in [high, low] {
      for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: half >> UInt64(shift))) }
    }
  }

  // MARK: - Helpers

  /// Reads the object at `position` and checks that its keys are exactly those in `required`.
  mutating func exactMembers(at position: Int, required: UInt64, of wrapper: ExtendedJSONKey) throws(BSONError)
    -> Members
  {
    pos = position
    let m = try members()
    if m.duplicate >= 0 {
      throw error(
        .invalidExtendedJSON, "expected each key of the \"\(wrapper.name)\" value once, found a repeated key",
        at: m.duplicate)
    }
    if m.mask & ~required != 0 { throw unexpectedKey(in: position, allowed: required, of: wrapper) }
    if m.mask != required {
      throw error(
        .invalidExtendedJSON,
        "expected the keys \(ExtendedJSONKey.list(required)) in the \"\(wrapper.name)\" value, "
          + "missing \(ExtendedJSONKey.list(required & ~m.mask))",
        at: position)
    }
    return m
  }

  /// The error for the first key of the object at `objectStart` that is not in `allowed`.
  @inline(never)
  mutating func unexpectedKey(in objectStart: Int, allowed: UInt64, of wrapper: ExtendedJSONKey) -> BSONError {
    let message = "expected only \(ExtendedJSONKey.list(allowed)) in a \"\(wrapper.name)\" wrapper"
    pos = objectStart &+ 1
    while true {
      skipWhitespace()
      guard peek == UInt8(ascii: "\"") else { break }
      let keyPosition = pos
      let mark = out.count
      guard (try? stringContents()) != nil else { break }
      let key = ExtendedJSONKey(out.base + mark, out.count &- mark)
      let text = String(decoding: UnsafeBufferPointer(start: out.base + mark, count: out.count &- mark), as: UTF8.self)
      out.count = mark
      if key.bit & allowed == 0 {
        return error(.invalidExtendedJSON, message + ", found the key \"\(text)\"", at: keyPosition)
      }
      skipWhitespace()
      pos &+= 1
      skipWhitespace()
      guard (try? skipValue()) != nil else { break }
      skipWhitespace()
      pos &+= 1
    }
    return error(.invalidExtendedJSON, message, at: objectStart)
  }

  /// Throws unless the value in `slot` is a string.
  @inline(__always)
  mutating func requireString(_ slot: Members.Slot, _ expected: @autoclosure () -> String) throws(BSONError) {
    guard input[slot.valuePosition] == UInt8(ascii: "\"") else { throw typeError(slot, expected()) }
  }

  /// Decodes the string in `slot` to the end of `out` and returns where it starts and its length;
  /// the caller truncates `out` back to the mark.
  mutating func stringToTail(_ slot: Members.Slot, _ expected: @autoclosure () -> String) throws(BSONError)
    -> (mark: Int, count: Int)
  {
    try requireString(slot, expected())
    pos = slot.valuePosition
    let mark = out.count
    _ = try stringContents()
    return (mark, out.count &- mark)
  }

  @inline(never)
  mutating func typeError(_ slot: Members.Slot, _ expected: String) -> BSONError {
    let key = keyText(at: slot.keyPosition)
    return error(
      .invalidExtendedJSON, "expected \(expected) for \"\(key)\", found \(describeValue(at: slot.valuePosition))",
      at: slot.valuePosition)
  }

  /// The error for a string of the right type but the wrong content (decoded at `mark`).
  @inline(never)
  mutating func badString(_ slot: Members.Slot, mark: Int, _ n: Int, _ expected: String) -> BSONError {
    var text = String(decoding: UnsafeBufferPointer(start: out.base + mark, count: n), as: UTF8.self)
    if text.count > 60 { text = String(text.prefix(60)) + "…" }
    out.count = mark
    let key = keyText(at: slot.keyPosition)
    return error(
      .invalidExtendedJSON, "expected \(expected) for \"\(key)\", found \"\(text)\"", at: slot.valuePosition)
  }

  /// Reads a JSON integer in 0...UInt32.max (the fields of `$timestamp`).
  mutating func unsigned32(_ slot: Members.Slot, in wrapper: ExtendedJSONKey) throws(BSONError) -> UInt32 {
    guard let scan = ExtendedJSONNumber.scan(input, from: slot.valuePosition, to: end, lenient: false),
      scan.isInteger && scan.exact && (!scan.negative || scan.mantissa == 0), scan.mantissa <= UInt32.max
    else { throw typeError(slot, "an integer from 0 to 4294967295") }
    return UInt32(scan.mantissa)
  }

  /// Parses `-?[0-9]+` as an Int64; `nil` when malformed or out of range.
  static func parseInteger(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int64? {
    var i = 0
    let negative = n > 0 && p[0] == UInt8(ascii: "-")
    if negative { i = 1 }
    guard i < n else { return nil }
    var magnitude: UInt64 = 0
    while i < n {
      let d = p[i] &- 0x30
      guard d < 10 else { return nil }
      let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
      let (s, o2) = m.addingReportingOverflow(UInt64(d))
      guard !o1 && !o2 else { return nil }
      magnitude = s
      i &+= 1
    }
    if negative {
      guard magnitude <= 1 << 63 else { return nil }
      return Int64(bitPattern: 0 &- magnitude)
    }
    return Int64(exactly: magnitude)
  }

  /// Parses the text of `$numberDouble`: a decimal number, `Infinity`, `-Infinity` or `NaN`.
  static func parseDouble(_ p: UnsafePointer<UInt8>, _ n: Int) -> Double? {
    func equals(_ s: StaticString) -> Bool { s.utf8CodeUnitCount == n && memcmp(p, s.utf8Start, n) == 0 }
    if equals("Infinity") || equals("+Infinity") { return .infinity }
    if equals("-Infinity") { return -.infinity }
    if equals("NaN") { return .nan }
    guard let scan = ExtendedJSONNumber.scan(p, from: 0, to: n, lenient: true), scan.end == n else { return nil }
    return scan.double(p, from: 0)
  }
}
