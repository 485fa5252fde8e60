// Values the parser moves past without writing: a wrapper's members are scanned before any is
// written.

extension ExtendedJSONReader {
  /// The deepest nesting of JSON objects and arrays `skipValue()` accepts: wrapper objects add a
  /// level or two to the BSON nesting.
  var skipNestingLimit: Int { maximumDepth > Int.max / 4 ? Int.max : 2 &* maximumDepth &+ 8 }

  /// Moves past the JSON value at `pos`, checking its syntax but writing nothing.
  ///
  /// It does not recurse: which open brackets are arrays is kept in a bit set (a word for the
  /// first 64 levels, an array past them).
  mutating func skipValue() throws(BSONError) {
    var arrays: UInt64 = 0
    var deeper: [Bool] = []
    var nesting = 0
    let limit = skipNestingLimit
    func isArray(_ level: Int) -> Bool { level < 64 ? arrays & (1 << UInt64(level)) != 0 : deeper[level &- 64] }
    while true {
      guard pos < end else {
        throw error(.invalidJSON, "expected a value, found the end of the input", at: pos)
      }
      switch input[pos] {
      case UInt8(ascii: "\""):
        try skipString()
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        let array = input[pos] == UInt8(ascii: "[")
        guard nesting < limit else {
          throw error(.depthLimitExceeded, "expected JSON nested less deeply, found deeper nesting", at: pos)
        }
        if nesting < 64 {
          if array { arrays |= 1 << UInt64(nesting) } else { arrays &= ~(1 << UInt64(nesting)) }
        } else {
          deeper.append(array)
        }
        nesting &+= 1
        pos &+= 1
        skipWhitespace()
        if peek == (array ? UInt8(ascii: "]") : UInt8(ascii: "}")) {
          pos &+= 1
          nesting &-= 1
          if nesting >= 64 { deeper.removeLast() }
        } else {
          if !array { try skipKey() }
          continue
        }
      case UInt8(ascii: "t"): try literal("true")
      case UInt8(ascii: "f"): try literal("false")
      case UInt8(ascii: "n"): try literal("null")
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        guard let scan = ExtendedJSONNumber.scan(input, from: pos, to: end, lenient: false) else {
          throw error(.invalidJSON, "expected a JSON number, found \(describeByte(at: pos))", at: pos)
        }
        pos = scan.end
      default:
        throw error(.invalidJSON, "expected a value, found \(describeByte(at: pos))", at: pos)
      }
      // After a value: close the brackets that end here, then go on with the next value.
      while true {
        if nesting == 0 { return }
        let array = isArray(nesting &- 1)
        skipWhitespace()
        let b = peek
        if b == UInt8(ascii: ",") {
          pos &+= 1
          skipWhitespace()
          if !array { try skipKey() }
          break
        }
        guard b == (array ? UInt8(ascii: "]") : UInt8(ascii: "}")) else {
          throw error(
            .invalidJSON, "expected ',' or '\(array ? "]" : "}")', found \(describeByte(at: pos))", at: pos)
        }
        pos &+= 1
        nesting &-= 1
        if nesting >= 64 { deeper.removeLast() }
      }
    }
  }

  /// Moves past a key string at `pos`, the `:` and the whitespace around it.
  mutating func skipKey() throws(BSONError) {
    guard peek == UInt8(ascii: "\"") else {
      throw error(.invalidJSON, "expected a key string, found \(describeByte(at: pos))", at: pos)
    }
    try skipString()
    skipWhitespace()
    try expect(UInt8(ascii: ":"), "':' after the key")
    skipWhitespace()
  }

  /// Moves past the string at `pos`, checking escapes loosely (it is decoded fully when used).
  mutating func skipString() throws(BSONError) {
    let quote = pos
    var i = pos &+ 1
    while i < end {
      let b = input[i]
      if b == 0x22 {
        pos = i &+ 1
        return
      }
      if b == 0x5C {
        i &+= 2
        continue
      }
      if b < 0x20 {
        throw error(
          .invalidJSON, "expected a printable character or an escape in a string, found control character 0x\(hex(b))",
          at: i)
      }
      i &+= 1
    }
    throw error(.invalidJSON, "expected a closing '\"' for the string, found the end of the input", at: quote)
  }
}
