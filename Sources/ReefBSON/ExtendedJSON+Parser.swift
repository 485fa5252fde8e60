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
///
/// This file holds the reader and its documents; its strings, numbers, skipped values and errors
/// are in `ExtendedJSON+Strings.swift`, `+Numbers.swift`, `+Skipping.swift` and `+Errors.swift`.
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
}
