// The parser's strings: contents scanned eight bytes at a time, UTF-8 checked, escapes decoded.

extension ExtendedJSONReader {
  /// Writes the JSON string at `pos` as a BSON string (length, bytes, zero).
  @inline(__always)
  mutating func stringValue() throws(BSONError) {
    let lengthAt = out.count
    out.appendInt32LE(0)
    _ = try stringContents()
    out.append(0)
    let n = out.count &- lengthAt &- 4
    guard n <= ExtendedJSONReader.maximumSize else { throw sizeError() }
    out.patchInt32LE(Int32(truncatingIfNeeded: n), at: lengthAt)
  }

  /// Decodes the JSON string whose opening quote is at `pos` into `out` (without quotes or
  /// terminator) and moves past it. Returns whether the decoded text contains a zero byte.
  mutating func stringContents() throws(BSONError) -> Bool {
    let quote = pos
    var i = pos &+ 1
    var hasZero = false
    while true {
      let runStart = i
      while true {
        while end &- i >= 8 {
          let w = UnsafeRawPointer(input + i).loadUnaligned(as: UInt64.self)
          if ExtendedJSONReader.needsAttention(w) { break }
          i &+= 8
        }
        guard i < end else { break }
        let b = input[i]
        if b >= 0x80 {
          guard let n = utf8SequenceLength(at: i) else {
            throw error(.invalidUTF8, "expected UTF-8 text in a string, found an invalid byte sequence", at: i)
          }
          i &+= n
          continue
        }
        if b == 0x22 || b == 0x5C || b < 0x20 { break }
        i &+= 1
      }
      if i > runStart { out.append(input + runStart, count: i &- runStart) }
      guard i < end else {
        throw error(.invalidJSON, "expected a closing '\"' for the string, found the end of the input", at: quote)
      }
      let b = input[i]
      if b == 0x22 {
        pos = i &+ 1
        return hasZero
      }
      if b == 0x5C {
        i = try escapeSequence(at: i, hasZero: &hasZero)
        continue
      }
      throw error(
        .invalidJSON, "expected a printable character or an escape in a string, found control character 0x\(hex(b))",
        at: i)
    }
  }

  /// Whether any of the eight bytes of `w` is a control character, a quote, a backslash or non-ASCII.
  @inline(__always)
  static func needsAttention(_ w: UInt64) -> Bool {
    (stringEndMarks(w) | w) & 0x8080_8080_8080_8080 != 0
  }

  /// The high bit set in some byte when one of the eight bytes of `w` is a quote, a backslash or
  /// a control character (a byte above a marked one may be marked too): what ends the fast scan
  /// of a string's contents, eight bytes at a time.
  @inline(__always)
  static func stringEndMarks(_ w: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let quote = w ^ (ones &* 0x22)
    let backslash = w ^ (ones &* 0x5C)
    let control = (w &- ones &* 0x20) & ~w
    let hasQuote = (quote &- ones) & ~quote
    let hasBackslash = (backslash &- ones) & ~backslash
    return control | hasQuote | hasBackslash
  }

  /// The length of the valid UTF-8 sequence starting with a non-ASCII byte at `i`, or `nil`.
  @inline(__always)
  func utf8SequenceLength(at i: Int) -> Int? {
    ReefBSON.utf8SequenceLength(UnsafeRawPointer(input), at: i, end: end)
  }

  /// Decodes the escape at `i` (a backslash) into `out` and returns the position after it.
  @inline(never)
  mutating func escapeSequence(at i: Int, hasZero: inout Bool) throws(BSONError) -> Int {
    guard end &- i >= 2 else {
      throw error(.invalidJSON, "expected an escape character after '\\', found the end of the input", at: i)
    }
    let c = input[i &+ 1]
    switch c {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(c)
    case UInt8(ascii: "b"): out.append(0x08)
    case UInt8(ascii: "f"): out.append(0x0C)
    case UInt8(ascii: "n"): out.append(0x0A)
    case UInt8(ascii: "r"): out.append(0x0D)
    case UInt8(ascii: "t"): out.append(0x09)
    case UInt8(ascii: "u"):
      guard let unit = hex4(at: i &+ 2) else {
        throw error(.invalidJSON, "expected four hexadecimal digits after '\\u'", at: i)
      }
      var scalar = UInt32(unit)
      var next = i &+ 6
      if unit >= 0xD800 && unit <= 0xDBFF {
        guard end &- next >= 6, input[next] == 0x5C, input[next &+ 1] == UInt8(ascii: "u"),
          let low = hex4(at: next &+ 2), low >= 0xDC00 && low <= 0xDFFF
        else {
          throw error(
            .invalidUTF8, "expected a low surrogate escape after the high surrogate \\u\(hex16(unit)), found none",
            at: i)
        }
        scalar = 0x10000 &+ ((UInt32(unit) &- 0xD800) << 10) &+ (UInt32(low) &- 0xDC00)
        next &+= 6
      } else if unit >= 0xDC00 && unit <= 0xDFFF {
        throw error(
          .invalidUTF8, "expected a high surrogate before the low surrogate \\u\(hex16(unit)), found none", at: i)
      }
      if scalar == 0 { hasZero = true }
      appendUTF8(scalar)
      return next
    default:
      throw error(
        .invalidJSON, "expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u, found \(describeByte(at: i &+ 1))", at: i)
    }
    return i &+ 2
  }

  @inline(__always)
  func hex4(at i: Int) -> UInt16? {
    guard end &- i >= 4 else { return nil }
    var v: UInt16 = 0
    for k in 0..<4 {
      guard let d = hexValue(input[i &+ k]) else { return nil }
      v = v << 4 | UInt16(d)
    }
    return v
  }

  mutating func appendUTF8(_ scalar: UInt32) {
    out.reserve(4)
    switch scalar {
    case 0..<0x80:
      out.appendUnchecked(UInt8(scalar))
    case 0x80..<0x800:
      out.appendUnchecked(UInt8(0xC0 | scalar >> 6))
      out.appendUnchecked(UInt8(0x80 | scalar & 0x3F))
    case 0x800..<0x10000:
      out.appendUnchecked(UInt8(0xE0 | scalar >> 12))
      out.appendUnchecked(UInt8(0x80 | scalar >> 6 & 0x3F))
      out.appendUnchecked(UInt8(0x80 | scalar & 0x3F))
    default:
      out.appendUnchecked(UInt8(0xF0 | scalar >> 18))
      out.appendUnchecked(UInt8(0x80 | scalar >> 12 & 0x3F))
      out.appendUnchecked(UInt8(0x80 | scalar >> 6 & 0x3F))
      out.appendUnchecked(UInt8(0x80 | scalar & 0x3F))
    }
  }
}
