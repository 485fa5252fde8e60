#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Parses Extended JSON text (UTF-8) straight into BSON bytes: no intermediate tree, one output
/// buffer. Objects whose first key starts with `$` may be type wrappers; those are scanned first
/// and written in BSON order (see `ExtendedJSON+Wrappers.swift`).
///
/// Errors carry the byte offset in the input, the line and column (computed only when an error is
/// thrown) and the key path (kept as input positions of the keys, decoded only on error).
///
/// Nothing recurses once per level of nesting: the open documents and arrays are frames on a
/// ``FrameStack`` (see `objectTree()`), and skipped values keep their open brackets in a bit set,
/// so any ``maximumDepth`` is safe on any thread.
struct ExtendedJSONReader {
  let input: UnsafePointer<UInt8>
  let end: Int
  var pos: Int
  var out: ExtendedJSONBuffer
  /// One entry per open document or array: the input position of the current member's key, or
  /// `-(index + 1)` for an array element, or `Int.min` while a key is being read.
  var path: [Int]
  /// BSON nesting depth below the top-level document of the value being written.
  var depth = 0
  var documentIndex: Int?
  /// The deepest nesting of documents and arrays accepted below the top-level document.
  var maximumDepth = ExtendedJSONReader.defaultMaximumDepth
  /// The `$scope` document of a code-with-scope wrapper just written up to its code, for
  /// `objectTree()` to write next (set by `codeWithScope`).
  var pendingScope: PendingScope?

  /// MongoDB's limit on nesting, the default ``maximumDepth``.
  static let defaultMaximumDepth = 100
  /// The largest document the parser produces (MongoDB's limit plus its internal headroom).
  static let maximumSize = 16 * 1024 * 1024 + 16 * 1024

  init(input: UnsafePointer<UInt8>, count: Int, position: Int, out: ExtendedJSONBuffer, path: [Int]) {
    self.input = input
    self.end = count
    self.pos = position
    self.out = out
    self.path = path
  }

  // MARK: - Bytes

  @inline(__always)
  var peek: UInt8 { pos < end ? input[pos] : 0 }

  @inline(__always)
  mutating func skipWhitespace() {
    while pos < end {
      let b = input[pos]
      guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
      pos &+= 1
    }
  }

  /// Skips a UTF-8 byte order mark at the very start of the input.
  mutating func skipByteOrderMark() {
    if pos == 0 && end >= 3 && input[0] == 0xEF && input[1] == 0xBB && input[2] == 0xBF { pos = 3 }
  }

  @inline(__always)
  mutating func expect(_ c: UInt8, _ what: StaticString) throws(BSONError) {
    guard peek == c else {
      throw error(.invalidJSON, "expected \(what), found \(describeByte(at: pos))", at: pos)
    }
    pos &+= 1
  }

  // MARK: - Documents

  /// Reads the object at `pos` as a top-level document (keys taken as they are).
  mutating func readDocument() throws(BSONError) -> Document {
    out.count = 0
    path.removeAll(keepingCapacity: true)
    depth = 0
    pendingScope = nil
    try objectTree()
    let storage = DocumentStorage(copying: UnsafeRawBufferPointer(start: out.base, count: out.count))
    return Document(storage: storage, start: 0, length: out.count)
  }

  /// An open document or array while `objectTree()` writes it.
  struct Frame {
    /// Where its length prefix is in `out`.
    var start: Int
    /// Where the type byte of the element that holds it is in `out`, or -1 (the top-level
    /// document, and a `$scope` document, whose element is a code-with-scope).
    var typeAt: Int
    /// For an array, the index of its next element; -1 for a document.
    var index: Int
    /// Whether it is the top-level document (whose keys are taken as they are).
    var topLevel: Bool
    /// Whether an element was read, so that `,` or the closing bracket comes next.
    var hasElements = false
    /// For a `$scope` document: where the code-with-scope's length is in `out`; -1 otherwise.
    var scopeOf = -1
    /// For a `$scope` document: the input position after the wrapper object that holds it.
    var after = 0
  }

  /// The `$scope` of a code-with-scope wrapper, still to be written.
  struct PendingScope {
    /// Where the code-with-scope's length is in `out`.
    var start: Int
    /// The input positions of the `$scope` key and of its value's `{`.
    var keyPosition: Int
    var valuePosition: Int
  }

  /// Writes the object at `pos`, and everything nested in it, as a BSON document.
  ///
  /// It does not recurse: each open document or array is a ``Frame``, and the loop reads one
  /// element of the innermost at a time, so the depth of nesting costs heap, not stack.
  mutating func objectTree() throws(BSONError) {
    try withFrameStack(of: Frame.self) { (stack) throws(BSONError) in
      try openContainer(&stack, Frame(start: out.count, typeAt: -1, index: -1, topLevel: true))
      while stack.count > 0 {
        let frame = stack.top
        let isArray = frame.pointee.index >= 0
        if frame.pointee.hasElements {
          skipWhitespace()
          let b = peek
          if b == UInt8(ascii: ",") {
            pos &+= 1
            skipWhitespace()
          } else if b == (isArray ? UInt8(ascii: "]") : UInt8(ascii: "}")) {
            pos &+= 1
            try closeContainer(&stack)
            continue
          } else {
            throw error(
              .invalidJSON,
              isArray
                ? "expected ',' or ']' after an array element, found \(describeByte(at: pos))"
                : "expected ',' or '}' after a member, found \(describeByte(at: pos))", at: pos)
          }
        }
        frame.pointee.hasElements = true
        let typeAt: Int
        if isArray {
          let index = frame.pointee.index
          path[path.count &- 1] = -(index &+ 1)
          typeAt = out.count
          out.reserve(22)
          out.appendUnchecked(0)
          out.appendDecimalUnchecked(UInt64(index))
          out.appendUnchecked(0)
          frame.pointee.index = index &+ 1
        } else {
          typeAt = try key(topLevel: frame.pointee.topLevel)
        }
        guard pos < end else {
          throw error(.invalidJSON, "expected a value, found the end of the input", at: pos)
        }
        switch input[pos] {
        case UInt8(ascii: "{"):
          if let type = try wrapperIfPresent() {
            out.base[typeAt] = type
            if let scope = pendingScope {
              // A code-with-scope: its `$scope` document is written as a frame of its own.
              pendingScope = nil
              let after = pos
              pos = scope.valuePosition
              try enterNested()
              path.append(scope.keyPosition)
              try openContainer(
                &stack,
                Frame(start: out.count, typeAt: -1, index: -1, topLevel: false, scopeOf: scope.start, after: after))
            }
            continue
          }
          try enterNested()
          try openContainer(&stack, Frame(start: out.count, typeAt: typeAt, index: -1, topLevel: false))
        case UInt8(ascii: "["):
          try enterNested()
          try openContainer(&stack, Frame(start: out.count, typeAt: typeAt, index: 0, topLevel: false))
        default:
          // Not `out.base[typeAt] = try scalar()`: that reads `out.base` before `scalar()` may
          // move the buffer.
          let type = try scalar()
          out.base[typeAt] = type
        }
      }
    }
  }

  /// Starts the document or array whose bracket is at `pos`: its length placeholder, its frame
  /// and its level in the key path; closes it at once when it is empty.
  @inline(__always)
  mutating func openContainer(_ stack: inout FrameStack<Frame>, _ frame: Frame) throws(BSONError) {
    out.appendInt32LE(0)
    pos &+= 1
    skipWhitespace()
    path.append(frame.index >= 0 ? -1 : Int.min)
    stack.push(frame)
    if peek == (frame.index >= 0 ? UInt8(ascii: "]") : UInt8(ascii: "}")) {
      pos &+= 1
      try closeContainer(&stack)
    }
  }

  /// Ends the innermost document or array (its closing bracket read): its terminator and
  /// length, its type byte in the element that holds it, and for a `$scope` the length of the
  /// code-with-scope and the input position after its wrapper.
  @inline(__always)
  mutating func closeContainer(_ stack: inout FrameStack<Frame>) throws(BSONError) {
    let frame = stack.top.pointee
    stack.pop()
    path.removeLast()
    try finishDocument(frame.start)
    if frame.topLevel { return }
    depth &-= 1
    if frame.typeAt >= 0 { out.base[frame.typeAt] = frame.index >= 0 ? 0x04 : 0x03 }
    if frame.scopeOf >= 0 {
      path.removeLast()
      out.patchInt32LE(Int32(truncatingIfNeeded: out.count &- frame.scopeOf), at: frame.scopeOf)
      pos = frame.after
    }
  }

  /// Reads a member's key at `pos`, the `:` and the whitespace after it, and writes a type byte
  /// placeholder and the key; returns where the type byte is in `out`.
  @inline(__always)
  mutating func key(topLevel: Bool) throws(BSONError) -> Int {
    guard peek == UInt8(ascii: "\"") else {
      throw error(.invalidJSON, "expected a key string, found \(describeByte(at: pos))", at: pos)
    }
    let keyPosition = pos
    let level = path.count &- 1
    path[level] = Int.min
    let typeAt = out.count
    out.append(0)
    let keyStart = out.count
    if try stringContents() {
      throw error(
        .invalidKey, "expected a key without a zero character (BSON keys are C strings), found \\u0000",
        at: keyPosition)
    }
    // Safe: `keyStart` is within the bytes written.
    if !topLevel && out.count > keyStart && out.base[keyStart] == UInt8(ascii: "$") {
      try checkOrdinaryKey(at: keyStart, keyPosition: keyPosition)
    }
    out.append(0)
    path[level] = keyPosition
    skipWhitespace()
    try expect(UInt8(ascii: ":"), "':' after the key")
    skipWhitespace()
    return typeAt
  }

  @inline(__always)
  mutating func finishDocument(_ start: Int) throws(BSONError) {
    out.append(0)
    let length = out.count &- start
    guard length <= ExtendedJSONReader.maximumSize else { throw sizeError() }
    out.patchInt32LE(Int32(truncatingIfNeeded: length), at: start)
  }

  @inline(never)
  mutating func sizeError() -> BSONError {
    error(
      .sizeLimitExceeded, "expected a document of at most \(ExtendedJSONReader.maximumSize) bytes, found a larger one",
      at: pos)
  }

  /// A key of an ordinary nested document may not be a type wrapper's key (the wrapper would
  /// have had to be the whole object).
  @inline(never)
  mutating func checkOrdinaryKey(at keyStart: Int, keyPosition: Int) throws(BSONError) {
    let key = ExtendedJSONKey(out.base + keyStart, out.count &- keyStart)
    guard key.isWrapper else { return }
    throw error(
      .invalidExtendedJSON,
      "expected \"\(key.name)\" only as the first key of a type wrapper object, found it after other keys",
      at: keyPosition)
  }

  /// Writes the value at `pos`, which is not a document or an array, and returns its BSON type byte.
  @inline(__always)
  mutating func scalar() throws(BSONError) -> UInt8 {
    switch input[pos] {
    case UInt8(ascii: "\""):
      try stringValue()
      return 0x02
    case UInt8(ascii: "t"):
      try literal("true")
      out.append(1)
      return 0x08
    case UInt8(ascii: "f"):
      try literal("false")
      out.append(0)
      return 0x08
    case UInt8(ascii: "n"):
      try literal("null")
      return 0x0A
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return try number()
    default:
      throw error(.invalidJSON, "expected a value, found \(describeByte(at: pos))", at: pos)
    }
  }

  @inline(__always)
  mutating func enterNested() throws(BSONError) {
    guard depth < maximumDepth else {
      throw error(
        .depthLimitExceeded,
        "expected documents and arrays nested at most \(maximumDepth) deep, found deeper nesting",
        at: pos)
    }
    depth &+= 1
  }

  mutating func literal(_ text: StaticString) throws(BSONError) {
    let n = text.utf8CodeUnitCount
    guard end &- pos >= n, memcmp(input + pos, text.utf8Start, n) == 0 else {
      throw error(.invalidJSON, "expected \(text), found \(describeByte(at: pos))", at: pos)
    }
    pos &+= n
  }

  // MARK: - Strings

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
    let b0 = input[i]
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    let n: Int
    switch b0 {
    case 0xC2...0xDF: n = 2
    case 0xE0:
      n = 3
      low = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: n = 3
    case 0xED:
      n = 3
      high = 0x9F
    case 0xF0:
      n = 4
      low = 0x90
    case 0xF1...0xF3: n = 4
    case 0xF4:
      n = 4
      high = 0x8F
    default: return nil
    }
    guard end &- i >= n else { return nil }
    let b1 = input[i &+ 1]
    guard b1 >= low && b1 <= high else { return nil }
    if n >= 3 && input[i &+ 2] & 0xC0 != 0x80 { return nil }
    if n == 4 && input[i &+ 3] & 0xC0 != 0x80 { return nil }
    return n
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

  // MARK: - Numbers

  /// Writes the JSON number at `pos`: int32 when the integer fits, else int64, else double; a
  /// number with a fraction or exponent is a double.
  mutating func number() throws(BSONError) -> UInt8 {
    guard let scan = ExtendedJSONNumber.scan(input, from: pos, to: end, lenient: false) else {
      throw error(.invalidJSON, "expected a JSON number, found \(describeByte(at: pos))", at: pos)
    }
    let start = pos
    pos = scan.end
    if scan.isInteger && scan.exact {
      if scan.negative {
        if scan.mantissa <= 0x8000_0000 {
          out.appendInt32LE(Int32(truncatingIfNeeded: 0 &- Int64(scan.mantissa)))
          return 0x10
        }
        if scan.mantissa <= 0x8000_0000_0000_0000 {
          out.appendUInt64LE(0 &- scan.mantissa)
          return 0x12
        }
      } else {
        if scan.mantissa <= 0x7FFF_FFFF {
          out.appendInt32LE(Int32(truncatingIfNeeded: scan.mantissa))
          return 0x10
        }
        if scan.mantissa <= 0x7FFF_FFFF_FFFF_FFFF {
          out.appendUInt64LE(scan.mantissa)
          return 0x12
        }
      }
    }
    out.appendUInt64LE(scan.double(input, from: start).bitPattern)
    return 0x01
  }

  // MARK: - Skipping

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

  // MARK: - Errors

  /// Describes the byte at `i` for a message: `'x'`, `byte 0xNN` or `the end of the input`.
  func describeByte(at i: Int) -> String {
    guard i < end else { return "the end of the input" }
    let b = input[i]
    if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
    return "byte 0x\(hex(b))"
  }

  /// Describes the JSON value starting at `i`: `a string`, `a number`, `an object`, ….
  func describeValue(at i: Int) -> String {
    guard i < end else { return "the end of the input" }
    switch input[i] {
    case UInt8(ascii: "\""): return "a string"
    case UInt8(ascii: "{"): return "an object"
    case UInt8(ascii: "["): return "an array"
    case UInt8(ascii: "t"): return "true"
    case UInt8(ascii: "f"): return "false"
    case UInt8(ascii: "n"): return "null"
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return "a number"
    default: return describeByte(at: i)
    }
  }

  /// An error at input position `at`, with the line, column and key path filled in.
  @inline(never)
  mutating func error(_ kind: BSONError.Kind, _ message: String, at position: Int) -> BSONError {
    let (line, column) = ExtendedJSONReader.lineAndColumn(input, upTo: min(position, end))
    var keyPath: [String] = []
    for entry in path where entry != Int.min {
      keyPath.append(entry < 0 ? String(-entry - 1) : keyText(at: entry))
    }
    return BSONError(
      kind, message, offset: position, keyPath: keyPath, documentIndex: documentIndex, line: line, column: column)
  }

  /// The key whose string token starts at `position`, decoded leniently (for messages only).
  func keyText(at position: Int) -> String {
    var copy = self
    copy.out = ExtendedJSONBuffer(capacity: 64)
    defer { copy.out.release() }
    copy.pos = position
    copy.path = []
    _ = try? copy.stringContents()
    return String(decoding: UnsafeBufferPointer(start: copy.out.base, count: copy.out.count), as: UTF8.self)
  }

  /// The one-based line and column (in bytes) of `position`.
  static func lineAndColumn(_ input: UnsafePointer<UInt8>, upTo position: Int) -> (Int, Int) {
    var line = 1
    var lineStart = 0
    var i = 0
    while i < position {
      guard let nl = memchr(input + i, 0x0A, position &- i) else { break }
      line &+= 1
      i = UnsafeRawPointer(nl) - UnsafeRawPointer(input) &+ 1
      lineStart = i
    }
    return (line, position &- lineStart &+ 1)
  }

  @inline(never)
  func hex16(_ v: UInt16) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: 4 - s.count) + s
  }
}

/// Scanning and converting JSON number text.
enum ExtendedJSONNumber {
  /// A scanned number: its digits as an integer (`exact` when none were dropped), the decimal
  /// exponent to apply, and whether it had neither fraction nor exponent.
  struct Scan {
    var negative = false
    var mantissa: UInt64 = 0
    var exponent = 0
    var isInteger = true
    var exact = true
    var end = 0

    /// The value as a double, correctly rounded.
    func double(_ s: UnsafePointer<UInt8>, from start: Int) -> Double {
      var mantissa = mantissa
      var exponent = exponent
      if exact && mantissa > 1 << 53 {
        // "4837384839313709000" is 4837384839313709e3: drop trailing zeros to stay exact.
        while mantissa % 10 == 0 && mantissa != 0 {
          mantissa /= 10
          exponent &+= 1
        }
      }
      if exact && mantissa <= 1 << 53 && exponent >= -22 && exponent <= 22 {
        // Exact operands and one correctly rounded operation give the correctly rounded result.
        var d = Double(mantissa)
        if exponent >= 0 {
          d *= ExtendedJSONNumber.powersOfTen[exponent]
        } else {
          d /= ExtendedJSONNumber.powersOfTen[-exponent]
        }
        return negative ? -d : d
      }
      let text = String(decoding: UnsafeBufferPointer(start: s + start, count: end &- start), as: UTF8.self)
      // The scanner admitted only decimal digits, a point, an exponent and signs, which Double parses.
      return Double(text) ?? .nan
    }
  }

  static let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
    1e20, 1e21, 1e22,
  ]

  /// Scans a number at `i`. Strict mode follows JSON (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`);
  /// lenient mode also allows a leading `+`, leading zeros, and `.5` or `5.` forms. Returns
  /// `nil` when the text does not start with a number of that form.
  @inline(__always)
  static func scan(_ s: UnsafePointer<UInt8>, from start: Int, to end: Int, lenient: Bool) -> Scan? {
    var r = Scan()
    var i = start
    if i < end && s[i] == UInt8(ascii: "-") {
      r.negative = true
      i &+= 1
    } else if lenient && i < end && s[i] == UInt8(ascii: "+") {
      i &+= 1
    }
    var digits = 0
    var significant = 0
    @inline(__always) func digit(_ d: UInt8, fraction: Bool) {
      if r.mantissa == 0 && d == 0 {
        if fraction { r.exponent &-= 1 }
        return
      }
      if significant < 19 {
        r.mantissa = r.mantissa &* 10 &+ UInt64(d)
        significant &+= 1
        if fraction { r.exponent &-= 1 }
      } else {
        r.exact = false
        if !fraction { r.exponent &+= 1 }
      }
    }
    let intStart = i
    while i < end, case let d = s[i] &- 0x30, d < 10 {
      digit(d, fraction: false)
      i &+= 1
    }
    digits = i &- intStart
    if !lenient {
      guard digits > 0 else { return nil }
      if digits > 1 && s[intStart] == UInt8(ascii: "0") { return nil }
    }
    if i < end && s[i] == UInt8(ascii: ".") {
      r.isInteger = false
      i &+= 1
      let fracStart = i
      while i < end, case let d = s[i] &- 0x30, d < 10 {
        digit(d, fraction: true)
        i &+= 1
      }
      let fracDigits = i &- fracStart
      if !lenient && fracDigits == 0 { return nil }
      digits &+= fracDigits
    }
    guard digits > 0 else { return nil }
    if i < end && (s[i] == UInt8(ascii: "e") || s[i] == UInt8(ascii: "E")) {
      r.isInteger = false
      i &+= 1
      var negativeExponent = false
      if i < end && (s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-")) {
        negativeExponent = s[i] == UInt8(ascii: "-")
        i &+= 1
      }
      let expStart = i
      var e = 0
      while i < end, case let d = s[i] &- 0x30, d < 10 {
        if e < 100_000 { e = e &* 10 &+ Int(d) }
        i &+= 1
      }
      guard i > expStart else { return nil }
      r.exponent &+= negativeExponent ? -e : e
    }
    if r.mantissa == 0 { r.exponent = 0 }
    r.end = i
    return r
  }
}
