#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A document or array being written by ``ExtendedJSONWriter/document(_:isArray:level:)``.
struct WriterFrame {
  /// The document's length prefix.
  var doc: UnsafeRawPointer
  /// The offset of its terminating zero byte, and of its next element.
  var end: Int
  var pos: Int
  /// Its indentation level, and for a code-with-scope's scope, that value's level (-1 otherwise).
  var level: Int
  var scopeLevel: Int
  var isArray: Bool
  /// Whether no element has been written yet.
  var first: Bool
}

/// Writes Extended JSON v2 straight from validated BSON bytes: no `BSON` values or strings are
/// created except for doubles (shortest round-trip digits) and Decimal128 values.
///
/// Compact output has no spaces (`{"a":{"$numberInt":"1"}}`); pretty output puts each member of
/// a document or array on its own line, indented by two spaces per level, and keeps type
/// wrappers on one line (`"a": {"$numberInt": "1"}`).
struct ExtendedJSONWriter {
  var out: ExtendedJSONBuffer
  let relaxed: Bool
  let pretty: Bool

  init(out: ExtendedJSONBuffer, mode: ExtendedJSONMode, pretty: Bool) {
    self.out = out
    self.relaxed = mode == .relaxed
    self.pretty = pretty
  }

  /// Writes `literal` in compact mode and `spaced` in pretty mode.
  @inline(__always)
  mutating func token(_ literal: StaticString, _ spaced: StaticString) {
    out.append(pretty ? spaced : literal)
  }

  /// Writes an integer: bare in relaxed mode, in its `{"$numberInt"|"$numberLong": "…"}` wrapper
  /// (`open` compact, `spaced` pretty) in canonical mode.
  @inline(__always)
  mutating func integer(_ v: Int64, _ open: StaticString, _ spaced: StaticString) {
    if relaxed {
      out.appendDecimal(v)
    } else {
      token(open, spaced)
      out.appendDecimal(v)
      out.append(#""}"#)
    }
  }

  @inline(__always)
  mutating func newline(_ level: Int) {
    out.reserve(1 &+ 2 &* level)
    out.appendUnchecked(0x0A)
    for _ in 0..<(2 &* level) { out.appendUnchecked(0x20) }
  }

  /// Writes the document or array whose length prefix is at `doc`; `level` is its indentation level.
  ///
  /// Nested documents, arrays and scopes are written by a loop over a ``FrameStack``, not by
  /// recursion, so that a document of any depth is written on any thread.
  mutating func document(_ doc: UnsafeRawPointer, isArray: Bool, level: Int) {
    withFrameStack(of: WriterFrame.self) { stack in
      // The innermost open document stays in a local (in registers); its parents are on `stack`.
      var cur = open(doc, isArray: isArray, level: level, scopeLevel: -1)
      while true {
        guard cur.pos < cur.end else {
          if pretty && !cur.first { newline(cur.level) }
          out.append(cur.isArray ? UInt8(ascii: "]") : UInt8(ascii: "}"))
          if cur.scopeLevel >= 0 {
            // The end of a code-with-scope value, whose scope this was.
            if pretty { newline(cur.scopeLevel) }
            out.append("}")
          }
          guard stack.count > 0 else { return }
          cur = stack.top.pointee
          stack.pop()
          continue
        }
        let doc = cur.doc
        let type = doc.byte(cur.pos)
        let key = doc + (cur.pos &+ 1)
        let keyLength = strlen(key.assumingMemoryBound(to: CChar.self))
        if !cur.first { out.append(UInt8(ascii: ",")) }
        cur.first = false
        if pretty { newline(cur.level &+ 1) }
        if !cur.isArray {
          string(key, keyLength)
          token(":", ": ")
        }
        let value = cur.pos &+ 1 &+ keyLength &+ 1
        let p = doc + value
        let level = cur.level &+ 1
        switch type {
        case 0x03, 0x04:
          cur.pos = value &+ Int(p.int32LE(0))
          stack.push(cur)
          cur = open(p, isArray: type == 0x04, level: level, scopeLevel: -1)
        case 0x0F:
          cur.pos = value &+ Int(p.int32LE(0))
          let codeLength = Int(p.int32LE(4))
          codeWithScopeHead(p, codeLength: codeLength, level: level)
          stack.push(cur)
          cur = open(p + (8 &+ codeLength), isArray: false, level: level &+ 1, scopeLevel: level)
        default:
          cur.pos = value &+ self.value(type: type, p, level: level)
        }
      }
    }
  }

  /// Writes a code-with-scope value (at `p`, after its total length) up to its scope document:
  /// `{"$code": …, "$scope": `.
  mutating func codeWithScopeHead(_ p: UnsafeRawPointer, codeLength: Int, level: Int) {
    if pretty {
      out.append("{")
      newline(level &+ 1)
      out.append(#""$code": "#)
      string(p + 8, codeLength &- 1)
      out.append(",")
      newline(level &+ 1)
      out.append(#""$scope": "#)
    } else {
      out.append(#"{"$code":"#)
      string(p + 8, codeLength &- 1)
      out.append(#","$scope":"#)
    }
  }

  /// Writes the opening bracket of a document or array and returns its frame.
  @inline(__always)
  mutating func open(_ doc: UnsafeRawPointer, isArray: Bool, level: Int, scopeLevel: Int) -> WriterFrame {
    out.append(isArray ? UInt8(ascii: "[") : UInt8(ascii: "{"))
    // Safe: the document was validated, so its length is at least 5 and every element is complete.
    let end = Int(doc.int32LE(0)) &- 1
    return WriterFrame(doc: doc, end: end, pos: 4, level: level, scopeLevel: scopeLevel, isArray: isArray, first: true)
  }

  /// Writes one value and returns its length in bytes.
  mutating func value(type: UInt8, _ p: UnsafeRawPointer, level: Int) -> Int {
    switch type {
    case 0x01:
      double(Double(bitPattern: p.uint64LE(0)))
      return 8
    case 0x02:
      let n = Int(p.int32LE(0))
      string(p + 4, n &- 1)
      return 4 &+ n
    case 0x03, 0x04:
      document(p, isArray: type == 0x04, level: level)
      return Int(p.int32LE(0))
    case 0x05:
      let n = Int(p.int32LE(0))
      let subtype = p.byte(4)
      token(#"{"$binary":{"base64":""#, #"{"$binary": {"base64": ""#)
      if subtype == 0x02 && n >= 4 {
        base64(p + 9, n &- 4)
      } else {
        base64(p + 5, n)
      }
      token(#"","subType":""#, #"", "subType": ""#)
      hexByte(subtype)
      out.append(#""}}"#)
      return 5 &+ n
    case 0x06:
      token(#"{"$undefined":true}"#, #"{"$undefined": true}"#)
      return 0
    case 0x07:
      token(#"{"$oid":""#, #"{"$oid": ""#)
      objectId(p)
      out.append(#""}"#)
      return 12
    case 0x08:
      if p.byte(0) != 0 { out.append("true") } else { out.append("false") }
      return 1
    case 0x09:
      date(p.int64LE(0))
      return 8
    case 0x0A:
      out.append("null")
      return 0
    case 0x0B:
      let patternLength = strlen(p.assumingMemoryBound(to: CChar.self))
      let options = p + (patternLength &+ 1)
      let optionsLength = strlen(options.assumingMemoryBound(to: CChar.self))
      token(#"{"$regularExpression":{"pattern":""#, #"{"$regularExpression": {"pattern": ""#)
      stringContents(p, patternLength)
      token(#"","options":""#, #"", "options": ""#)
      regexOptions(options, optionsLength)
      out.append(#""}}"#)
      return patternLength &+ optionsLength &+ 2
    case 0x0C:
      let n = Int(p.int32LE(0))
      token(#"{"$dbPointer":{"$ref":"#, #"{"$dbPointer": {"$ref": "#)
      string(p + 4, n &- 1)
      token(#","$id":{"$oid":""#, #", "$id": {"$oid": ""#)
      objectId(p + (4 &+ n))
      out.append(#""}}}"#)
      return 4 &+ n &+ 12
    case 0x0D:
      let n = Int(p.int32LE(0))
      token(#"{"$code":"#, #"{"$code": "#)
      string(p + 4, n &- 1)
      out.append("}")
      return 4 &+ n
    case 0x0E:
      let n = Int(p.int32LE(0))
      token(#"{"$symbol":"#, #"{"$symbol": "#)
      string(p + 4, n &- 1)
      out.append("}")
      return 4 &+ n
    case 0x0F:
      let total = Int(p.int32LE(0))
      let codeLength = Int(p.int32LE(4))
      codeWithScopeHead(p, codeLength: codeLength, level: level)
      document(p + (8 &+ codeLength), isArray: false, level: pretty ? level &+ 1 : level)
      if pretty { newline(level) }
      out.append("}")
      return total
    case 0x10:
      integer(Int64(p.int32LE(0)), #"{"$numberInt":""#, #"{"$numberInt": ""#)
      return 4
    case 0x11:
      token(#"{"$timestamp":{"t":"#, #"{"$timestamp": {"t": "#)
      out.appendDecimal(Int64(UInt32(bitPattern: p.int32LE(4))))
      token(#","i":"#, #", "i": "#)
      out.appendDecimal(Int64(UInt32(bitPattern: p.int32LE(0))))
      out.append("}}")
      return 8
    case 0x12:
      integer(p.int64LE(0), #"{"$numberLong":""#, #"{"$numberLong": ""#)
      return 8
    case 0x13:
      token(#"{"$numberDecimal":""#, #"{"$numberDecimal": ""#)
      var text = Decimal128(reading: p).description
      text.withUTF8 { out.append($0.baseAddress!, count: $0.count) }
      out.append(#""}"#)
      return 16
    case 0xFF:
      token(#"{"$minKey":1}"#, #"{"$minKey": 1}"#)
      return 0
    case 0x7F:
      token(#"{"$maxKey":1}"#, #"{"$maxKey": 1}"#)
      return 0
    default:
      // Unreachable for validated documents, which contain only known types.
      out.append("null")
      return 0
    }
  }

  // MARK: - Strings

  /// Writes a quoted, escaped JSON string from `n` UTF-8 bytes at `p`.
  @inline(__always)
  mutating func string(_ p: UnsafeRawPointer, _ n: Int) {
    out.reserve(n &+ 2)
    out.appendUnchecked(UInt8(ascii: "\""))
    stringContents(p, n)
    out.append(UInt8(ascii: "\""))
  }

  /// Writes the escaped contents of a JSON string (no quotes). The bytes are valid UTF-8 (the
  /// document was validated), so only `"`, `\` and control characters need escaping.
  mutating func stringContents(_ p: UnsafeRawPointer, _ n: Int) {
    let s = p.assumingMemoryBound(to: UInt8.self)
    var i = 0
    var runStart = 0
    while i < n {
      // Skip eight plain bytes at a time: no byte below 0x20, no '"' (0x22) and no '\' (0x5C).
      while n &- i >= 8 && !ExtendedJSONWriter.needsEscape(UnsafeRawPointer(s + i).loadUnaligned(as: UInt64.self)) {
        i &+= 8
      }
      // The next eight bytes hold a byte to escape, or fewer than eight are left: find it.
      let limit = min(n, i &+ 8)
      while i < limit && !ExtendedJSONWriter.isEscaped(s[i]) { i &+= 1 }
      if i < limit {
        out.append(s + runStart, count: i &- runStart)
        escape(s[i])
        i &+= 1
        runStart = i
      }
    }
    out.append(s + runStart, count: n &- runStart)
  }

  @inline(__always)
  static func isEscaped(_ b: UInt8) -> Bool { b < 0x20 || b == 0x22 || b == 0x5C }

  /// Whether any of the eight bytes in `w` is below 0x20, a quote or a backslash.
  @inline(__always)
  static func needsEscape(_ w: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let quote = w ^ (ones &* 0x22)
    let backslash = w ^ (ones &* 0x5C)
    // A byte is below 0x20 exactly when subtracting 0x20 borrows into its high bit while its own
    // high bit is clear; the zero tests for quote and backslash use the same borrow trick.
    let control = (w &- ones &* 0x20) & ~w
    let hasQuote = (quote &- ones) & ~quote
    let hasBackslash = (backslash &- ones) & ~backslash
    return (control | hasQuote | hasBackslash) & highs != 0
  }

  @inline(never)
  mutating func escape(_ b: UInt8) {
    out.reserve(6)
    out.appendUnchecked(UInt8(ascii: "\\"))
    switch b {
    case 0x22: out.appendUnchecked(UInt8(ascii: "\""))
    case 0x5C: out.appendUnchecked(UInt8(ascii: "\\"))
    case 0x08: out.appendUnchecked(UInt8(ascii: "b"))
    case 0x0C: out.appendUnchecked(UInt8(ascii: "f"))
    case 0x0A: out.appendUnchecked(UInt8(ascii: "n"))
    case 0x0D: out.appendUnchecked(UInt8(ascii: "r"))
    case 0x09: out.appendUnchecked(UInt8(ascii: "t"))
    default:
      out.appendUnchecked(UInt8(ascii: "u"))
      out.appendUnchecked(UInt8(ascii: "0"))
      out.appendUnchecked(UInt8(ascii: "0"))
      out.appendUnchecked(ExtendedJSONWriter.hexDigit(b >> 4))
      out.appendUnchecked(ExtendedJSONWriter.hexDigit(b & 0xF))
    }
  }

  /// Writes regex options in alphabetical order (BSON requires it; old data may not have it).
  mutating func regexOptions(_ p: UnsafeRawPointer, _ n: Int) {
    let s = p.assumingMemoryBound(to: UInt8.self)
    var sorted = true
    var i = 1
    while i < n {
      if s[i &- 1] > s[i] { sorted = false }
      i &+= 1
    }
    if sorted {
      stringContents(p, n)
      return
    }
    var bytes = Array(UnsafeBufferPointer(start: s, count: n))
    bytes.withUnsafeMutableBufferPointer { ExtendedJSONReader.sortOptions($0.baseAddress!, n) }
    bytes.withUnsafeBytes { stringContents($0.baseAddress!, n) }
  }

  // MARK: - Other values

  @inline(__always)
  static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? v &+ 0x30 : v &+ 0x57 }

  @inline(__always)
  mutating func hexByte(_ b: UInt8) {
    out.reserve(2)
    out.appendUnchecked(ExtendedJSONWriter.hexDigit(b >> 4))
    out.appendUnchecked(ExtendedJSONWriter.hexDigit(b & 0xF))
  }

  @inline(__always)
  mutating func objectId(_ p: UnsafeRawPointer) {
    out.reserve(24)
    for i in 0..<12 {
      let b = p.byte(i)
      out.appendUnchecked(ExtendedJSONWriter.hexDigit(b >> 4))
      out.appendUnchecked(ExtendedJSONWriter.hexDigit(b & 0xF))
    }
  }

  /// Writes `n` bytes as padded base64.
  mutating func base64(_ p: UnsafeRawPointer, _ n: Int) {
    let s = p.assumingMemoryBound(to: UInt8.self)
    out.reserve((n &+ 2) / 3 &* 4)
    let alphabet = ExtendedJSONBase64.alphabet.utf8Start
    var i = 0
    while n &- i >= 3 {
      let v = UInt32(s[i]) << 16 | UInt32(s[i &+ 1]) << 8 | UInt32(s[i &+ 2])
      out.appendUnchecked(alphabet[Int(v >> 18)])
      out.appendUnchecked(alphabet[Int(v >> 12 & 0x3F)])
      out.appendUnchecked(alphabet[Int(v >> 6 & 0x3F)])
      out.appendUnchecked(alphabet[Int(v & 0x3F)])
      i &+= 3
    }
    if n &- i == 1 {
      let v = UInt32(s[i]) << 16
      out.appendUnchecked(alphabet[Int(v >> 18)])
      out.appendUnchecked(alphabet[Int(v >> 12 & 0x3F)])
      out.appendUnchecked(UInt8(ascii: "="))
      out.appendUnchecked(UInt8(ascii: "="))
    } else if n &- i == 2 {
      let v = UInt32(s[i]) << 16 | UInt32(s[i &+ 1]) << 8
      out.appendUnchecked(alphabet[Int(v >> 18)])
      out.appendUnchecked(alphabet[Int(v >> 12 & 0x3F)])
      out.appendUnchecked(alphabet[Int(v >> 6 & 0x3F)])
      out.appendUnchecked(UInt8(ascii: "="))
    }
  }

  /// Writes a datetime: ISO-8601 in relaxed mode for years 1970 through 9999, otherwise milliseconds.
  mutating func date(_ ms: Int64) {
    if relaxed && ms >= 0 && ms <= 253_402_300_799_999 {
      token(#"{"$date":""#, #"{"$date": ""#)
      isoDate(ms)
      out.append(#""}"#)
    } else {
      token(#"{"$date":{"$numberLong":""#, #"{"$date": {"$numberLong": ""#)
      out.appendDecimal(ms)
      out.append(#""}}"#)
    }
  }

  /// Writes `YYYY-MM-DDTHH:MM:SS[.mmm]Z` for a non-negative time before year 10000.
  mutating func isoDate(_ ms: Int64) {
    let millis = Int(ms % 1000)
    let seconds = ms / 1000
    let (y, m, d) = ISO8601.civil(days: seconds / 86400)
    let secondOfDay = Int(seconds % 86400)
    out.reserve(24)
    func two(_ v: Int) {
      out.appendUnchecked(UInt8(truncatingIfNeeded: v / 10) &+ 0x30)
      out.appendUnchecked(UInt8(truncatingIfNeeded: v % 10) &+ 0x30)
    }
    two(Int(y / 100))
    two(Int(y % 100))
    out.appendUnchecked(UInt8(ascii: "-"))
    two(Int(m))
    out.appendUnchecked(UInt8(ascii: "-"))
    two(Int(d))
    out.appendUnchecked(UInt8(ascii: "T"))
    two(secondOfDay / 3600)
    out.appendUnchecked(UInt8(ascii: ":"))
    two(secondOfDay / 60 % 60)
    out.appendUnchecked(UInt8(ascii: ":"))
    two(secondOfDay % 60)
    if millis != 0 {
      out.appendUnchecked(UInt8(ascii: "."))
      out.appendUnchecked(UInt8(truncatingIfNeeded: millis / 100) &+ 0x30)
      two(millis % 100)
    }
    out.appendUnchecked(UInt8(ascii: "Z"))
  }

  /// Writes a double: a JSON number in relaxed mode when finite, otherwise `{"$numberDouble": "…"}`.
  mutating func double(_ d: Double) {
    if !d.isFinite {
      token(#"{"$numberDouble":""#, #"{"$numberDouble": ""#)
      if d.isNaN {
        out.append("NaN")
      } else if d < 0 {
        out.append("-Infinity")
      } else {
        out.append("Infinity")
      }
      out.append(#""}"#)
    } else if relaxed {
      ExtendedJSONWriter.appendDouble(d, to: &out)
    } else {
      token(#"{"$numberDouble":""#, #"{"$numberDouble": ""#)
      ExtendedJSONWriter.appendDouble(d, to: &out)
      out.append(#""}"#)
    }
  }

  /// Appends the shortest digits that round-trip to `d` (finite), always with a fraction or an
  /// exponent so that the text reads back as a double: `1.0`, `-0.0`, `0.1`, `1.0E+300`, `5.0E-324`.
  static func appendDouble(_ d: Double, to out: inout ExtendedJSONBuffer) {
    var text = d.description
    text.withUTF8 { u in
      let n = u.count
      out.reserve(n &+ 4)
      var e = 0
      while e < n && u[e] != UInt8(ascii: "e") { e &+= 1 }
      if e == n {
        out.appendUnchecked(u.baseAddress!, count: n)
        return
      }
      // Mantissa, with ".0" when it has no fraction.
      var hasPoint = false
      for i in 0..<e {
        if u[i] == UInt8(ascii: ".") { hasPoint = true }
        out.appendUnchecked(u[i])
      }
      if !hasPoint {
        out.appendUnchecked(UInt8(ascii: "."))
        out.appendUnchecked(UInt8(ascii: "0"))
      }
      out.appendUnchecked(UInt8(ascii: "E"))
      // Exponent: sign always written, leading zeros dropped ("e-05" becomes "E-5").
      var i = e &+ 1
      if i < n && (u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-")) {
        out.appendUnchecked(u[i])
        i &+= 1
      } else {
        out.appendUnchecked(UInt8(ascii: "+"))
      }
      while i < n &- 1 && u[i] == UInt8(ascii: "0") { i &+= 1 }
      while i < n {
        out.appendUnchecked(u[i])
        i &+= 1
      }
    }
  }
}

/// Base64 (RFC 4648, standard alphabet) for `$binary`.
enum ExtendedJSONBase64 {
  static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

  /// The 6-bit value of a base64 character, or 0xFF.
  @inline(__always)
  static func value(_ c: UInt8) -> UInt8 {
    switch c {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): c &- UInt8(ascii: "A")
    case UInt8(ascii: "a")...UInt8(ascii: "z"): c &- UInt8(ascii: "a") &+ 26
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c &- UInt8(ascii: "0") &+ 52
    case UInt8(ascii: "+"): 62
    case UInt8(ascii: "/"): 63
    default: 0xFF
    }
  }

  /// Decodes base64 text of `n` bytes at `src` into `dst`, which may be the same memory as `src`
  /// (the output never overtakes the input). Padding is optional; returns the number of bytes
  /// written, or `nil` when the text is not base64.
  static func decode(_ src: UnsafePointer<UInt8>, _ n: Int, into dst: UnsafeMutablePointer<UInt8>) -> Int? {
    var length = n
    if length % 4 == 0 && length > 0 && src[length &- 1] == UInt8(ascii: "=") {
      length &-= 1
      if src[length &- 1] == UInt8(ascii: "=") { length &-= 1 }
    }
    guard length % 4 != 1 else { return nil }
    var i = 0
    var o = 0
    while length &- i >= 4 {
      let a = value(src[i]), b = value(src[i &+ 1]), c = value(src[i &+ 2]), d = value(src[i &+ 3])
      guard (a | b | c | d) & 0xC0 == 0 else { return nil }
      dst[o] = a << 2 | b >> 4
      dst[o &+ 1] = b << 4 | c >> 2
      dst[o &+ 2] = c << 6 | d
      i &+= 4
      o &+= 3
    }
    let rest = length &- i
    if rest >= 2 {
      let a = value(src[i]), b = value(src[i &+ 1])
      guard (a | b) & 0xC0 == 0 else { return nil }
      dst[o] = a << 2 | b >> 4
      o &+= 1
      if rest == 3 {
        let c = value(src[i &+ 2])
        guard c & 0xC0 == 0 else { return nil }
        dst[o] = b << 4 | c >> 2
        o &+= 1
      }
    }
    return o
  }
}
