#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What validation checks and the limits it enforces.
public struct ValidationOptions: Hashable, Sendable {
  /// The deepest nesting of embedded documents and arrays allowed below the top-level document.
  /// MongoDB's limit, 100, is the default; ``unlimitedDepth`` sets no limit.
  ///
  /// Validation does not recurse: it keeps the open documents in a list of its own (a few dozen
  /// bytes per level, on the heap past 32 levels), so any limit is safe on any thread.
  public var maximumDepth: Int
  /// The largest top-level document, in bytes. The default is MongoDB's 16 MiB plus the 16 KiB
  /// it allows internally for command overhead, so that anything a server wrote can be read.
  public var maximumSize: Int
  /// Whether keys and strings must be valid UTF-8 (no overlong forms, surrogates or truncated sequences).
  public var checksUTF8: Bool
  /// Whether array keys must be "0", "1", … in order, as the BSON spec requires. libbson and the
  /// MongoDB server do not check them, and the BSON corpus calls other keys "degenerate" but
  /// readable: turn this off to read such arrays (their keys are then ignored by array views).
  public var checksArrayKeys: Bool

  /// Creates options; the defaults are MongoDB's limits with UTF-8 and array keys checked.
  public init(
    maximumDepth: Int = 100, maximumSize: Int = 16 * 1024 * 1024 + 16 * 1024, checksUTF8: Bool = true,
    checksArrayKeys: Bool = true
  ) {
    self.maximumDepth = maximumDepth
    self.maximumSize = maximumSize
    self.checksUTF8 = checksUTF8
    self.checksArrayKeys = checksArrayKeys
  }

  /// MongoDB's limits, UTF-8 checked.
  public static let `default` = ValidationOptions()

  /// A ``maximumDepth`` that no document can reach (its nesting is bounded by its size instead).
  public static let unlimitedDepth = Int.max

  /// Whether every document these options accept is accepted by ``default`` too.
  var isAtLeastAsStrictAsDefault: Bool {
    maximumDepth <= ValidationOptions.default.maximumDepth && maximumSize <= ValidationOptions.default.maximumSize
      && checksUTF8 && checksArrayKeys
  }
}

extension Document {
  /// Checks the document's bytes again with `options` (documents are validated when created;
  /// use this to apply stricter limits).
  /// - Throws: ``BSONError`` with the byte offset from the start of this document and the key path.
  public func validate(options: ValidationOptions = .default) throws(BSONError) {
    _ = try withUnsafeBytes { (raw) throws(BSONError) -> Int in
      try BSONValidator.validateDocument(raw, at: 0, options: options)
    }
  }

  /// Validates the first document in `bytes` and returns its length, without copying anything.
  ///
  /// Use this to check a buffer that may hold more than one document.
  public static func validatedLength(
    of bytes: UnsafeRawBufferPointer, options: ValidationOptions = .default
  ) throws(BSONError) -> Int {
    try BSONValidator.validateDocument(bytes, at: 0, options: options)
  }
}

enum BSONValidator {
  /// Validates the document starting at `offset` and returns its length.
  static func validateDocument(
    _ buffer: UnsafeRawBufferPointer, at offset: Int, options: ValidationOptions
  ) throws(BSONError) -> Int {
    guard let base = buffer.baseAddress, buffer.count - offset >= 4 else {
      throw BSONError(
        .truncated, "expected a 4-byte document length, found \(max(0, buffer.count - offset)) bytes", offset: offset)
    }
    let length = Int(base.int32LE(offset))
    if length > options.maximumSize {
      throw BSONError(
        .sizeLimitExceeded, "document length \(length) exceeds the limit of \(options.maximumSize) bytes",
        offset: offset)
    }
    let v = Validator(
      base: base, checksUTF8: options.checksUTF8, checksArrayKeys: options.checksArrayKeys,
      maximumDepth: options.maximumDepth)
    try v.document(at: offset, limit: buffer.count, isArray: false)
    return length
  }
}

/// Validates one document after another with the same options, keeping its stack of open
/// documents between them: what a scan that validates millions of small documents uses, where
/// ``Document/validatedLength(of:options:)`` would set up its stack for each one.
///
/// For Reef's own modules. Use one per thread.
@_spi(ReefInternal)
public final class DocumentValidator {
  /// How documents are validated.
  public let options: ValidationOptions
  /// The stack, behind a pointer rather than in a stored property: an `inout` access to a class's
  /// stored property is checked for exclusivity at run time, twice per document.
  private let stack: UnsafeMutablePointer<FrameStack<ValidationFrame>>
  private let initialFrames: UnsafeMutableBufferPointer<ValidationFrame>

  /// A validator for `options`.
  public init(options: ValidationOptions = .default) {
    self.options = options
    initialFrames = .allocate(capacity: 32)
    stack = .allocate(capacity: 1)
    stack.initialize(to: FrameStack(initialFrames))
  }

  deinit {
    stack.pointee.release()
    stack.deinitialize(count: 1)
    stack.deallocate()
    initialFrames.deallocate()
  }

  /// Validates the document at the start of `bytes`, which must end at or before their end, and
  /// returns its length: as ``Document/validatedLength(of:options:)``, with the same errors.
  public func validatedLength(of bytes: UnsafeRawBufferPointer) throws(BSONError) -> Int {
    guard let base = bytes.baseAddress, bytes.count >= 4 else {
      throw BSONError(.truncated, "expected a 4-byte document length, found \(bytes.count) bytes", offset: 0)
    }
    let length = Int(base.int32LE(0))
    if length > options.maximumSize {
      throw BSONError(
        .sizeLimitExceeded, "document length \(length) exceeds the limit of \(options.maximumSize) bytes", offset: 0)
    }
    let v = Validator(
      base: base, checksUTF8: options.checksUTF8, checksArrayKeys: options.checksArrayKeys,
      maximumDepth: options.maximumDepth)
    do throws(BSONError) {
      try v.walk(at: 0, limit: bytes.count, isArray: false, stack: &stack.pointee)
    } catch {
      var error = error
      error.keyPath.insert(contentsOf: v.keyPath(stack.pointee), at: 0)
      while stack.pointee.count > 0 { stack.pointee.pop() }
      throw error
    }
    return length
  }
}

/// One document or array being walked by ``Validator``: where it ends, where its next element
/// starts, and the key of the element being validated (for error key paths).
struct ValidationFrame {
  /// The offset of the document's terminating zero byte.
  var end: Int
  /// The offset of the next element's type byte.
  var p: Int
  /// The number of elements read so far (an array's next index).
  var index: Int
  /// The offset and length of the key of the element being validated; `keyLength` is -1 between elements.
  var keyStart: Int
  var keyLength: Int
  /// For the scope of a code-with-scope value: the offset of that value; -1 otherwise.
  var scopeOf: Int
  var isArray: Bool
}

/// The validating walk. Offsets are relative to `base`; every read is bounds-checked against the
/// end of the enclosing document before it happens.
///
/// The walk is a loop over an explicit stack of open documents, not a recursion, so any depth
/// limit is safe on any thread: a document nested 100,000 levels deep costs about 5 MB of heap
/// for its frames when no limit is set, never the thread's stack.
struct Validator {
  let base: UnsafeRawPointer
  let checksUTF8: Bool
  let checksArrayKeys: Bool
  let maximumDepth: Int

  /// Validates a document at `start` that must end at or before `limit`, with everything nested in it.
  func document(at start: Int, limit: Int, isArray: Bool) throws(BSONError) {
    try withFrameStack(of: ValidationFrame.self) { (stack) throws(BSONError) in
      do throws(BSONError) {
        try walk(at: start, limit: limit, isArray: isArray, stack: &stack)
      } catch {
        var error = error
        error.keyPath.insert(contentsOf: keyPath(stack), at: 0)
        throw error
      }
    }
  }

  /// The keys of the elements being validated, from the outermost document in.
  @inline(never)
  func keyPath(_ stack: FrameStack<ValidationFrame>) -> [String] {
    var path: [String] = []
    path.reserveCapacity(stack.count)
    for i in 0..<stack.count {
      let frame = stack.frames[i]
      if frame.keyLength >= 0 { path.append(key(at: frame.keyStart, length: frame.keyLength)) }
    }
    return path
  }

  /// Checks a document's header and terminator and returns its frame.
  @inline(__always)
  func open(at start: Int, limit: Int, isArray: Bool, scopeOf: Int) throws(BSONError) -> ValidationFrame {
    guard limit - start >= 5 else {
      throw BSONError(
        .truncated, "expected a document of at least 5 bytes, found \(max(0, limit - start))", offset: start)
    }
    let length = Int(base.int32LE(start))
    guard length >= 5 else {
      throw BSONError(.invalidLength, "expected a document length of at least 5, found \(length)", offset: start)
    }
    guard length <= limit - start else {
      throw BSONError(
        .invalidLength,
        "document length \(length) runs past the end of the enclosing data (\(limit - start) bytes left)",
        offset: start)
    }
    let end = start &+ length &- 1  // Safe: length >= 5 and start + length <= limit.
    guard base.byte(end) == 0 else {
      throw BSONError(
        .missingTerminator, "expected the document to end with a zero byte, found 0x\(hex(base.byte(end)))",
        offset: end)
    }
    return ValidationFrame(
      end: end, p: start &+ 4, index: 0, keyStart: 0, keyLength: -1, scopeOf: scopeOf, isArray: isArray)
  }

  /// The loop: validates elements of the innermost open document, opening embedded documents,
  /// arrays and scopes as they come and closing each at its terminator.
  func walk(at start: Int, limit: Int, isArray: Bool, stack: inout FrameStack<ValidationFrame>) throws(BSONError) {
    // The innermost open document stays in a local (in registers); its parents are on `stack`.
    var cur = ValidationFrame(end: 0, p: 0, index: 0, keyStart: 0, keyLength: -1, scopeOf: -1, isArray: isArray)
    do throws(BSONError) {
      cur = try open(at: start, limit: limit, isArray: isArray, scopeOf: -1)
      while true {
        var p = cur.p
        let end = cur.end
        guard p < end else {
          // The document is complete: close it and go on after it in its parent.
          guard stack.count > 0 else { return }
          let child = cur
          cur = stack.top.pointee
          stack.pop()
          if child.scopeOf >= 0 {
            let total = Int(base.int32LE(child.scopeOf))
            let scopeEnd = child.end &+ 1
            guard scopeEnd == child.scopeOf &+ total else {
              throw BSONError(
                .invalidLength,
                "code-with-scope length \(total) disagrees with its contents, which end after \(scopeEnd - child.scopeOf) bytes",
                offset: child.scopeOf)
            }
          }
          cur.p = child.end &+ 1
          cur.index &+= 1
          cur.keyLength = -1
          continue
        }
        let typeOffset = p
        let type = base.byte(p)
        p &+= 1
        // Find the key's terminator before the document's terminator, noting any non-ASCII byte.
        let keyStart = p
        var high: UInt64 = 0
        var terminated = false
        // Eight bytes at a time while they lie before the document's terminator: the lowest byte
        // flagged by (w - 0x01…) & ~w & 0x80… is the first zero byte.
        while end &- p >= 8 {
          let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
          let zeros = (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080
          if zeros != 0 {
            // zeros - 1 keeps every bit below the first zero byte's top bit: the bytes before it
            // (and seven bits of the zero byte itself).
            high |= w & (zeros &- 1)
            p &+= zeros.trailingZeroBitCount &>> 3
            terminated = true
            break
          }
          high |= w
          p &+= 8
        }
        if !terminated {
          while p < end {
            let b = base.byte(p)
            if b == 0 {
              terminated = true
              break
            }
            high |= UInt64(b)
            p &+= 1
          }
        }
        guard terminated else {
          throw BSONError(
            .missingTerminator, "expected a key terminated by a zero byte before the end of the document",
            offset: keyStart)
        }
        let keyLength = p &- keyStart
        p &+= 1
        if high & 0x8080_8080_8080_8080 != 0 && checksUTF8,
          let bad = invalidUTF8Offset(base + keyStart, keyLength)
        {
          throw BSONError(
            .invalidUTF8, "expected a UTF-8 key, found an invalid byte sequence", offset: keyStart + bad)
        }
        cur.keyStart = keyStart
        cur.keyLength = keyLength
        let index = cur.index
        if cur.isArray && checksArrayKeys && !keyIsIndex(at: keyStart, length: keyLength, index: index) {
          try arrayKeyError(at: keyStart, length: keyLength, index: index)
        }
        switch type {
        case 0x03, 0x04:
          guard stack.count < maximumDepth else { throw depthError(at: p) }
          try need(4, at: p, end: end, "an embedded document length")
          let child = try open(at: p, limit: end, isArray: type == 0x04, scopeOf: -1)
          stack.push(cur)
          cur = child
        case 0x0F:
          try need(4, at: p, end: end, "a code-with-scope length")
          let total = Int(base.int32LE(p))
          guard total >= 14, total <= end - p else {
            throw BSONError(
              .invalidLength,
              "code-with-scope length \(total) is below the minimum of 14 or runs past the end of the document (\(end - p) bytes left)",
              offset: p)
          }
          let afterCode = try string(at: p + 4, end: p &+ total)
          guard stack.count < maximumDepth else { throw depthError(at: p) }
          let child = try open(at: afterCode, limit: p &+ total, isArray: false, scopeOf: p)
          stack.push(cur)
          cur = child
        default:
          // The common fixed-size types and strings here, without a call; the others (and every
          // error, with its message) in value(type:typeOffset:at:end:).
          var size = -1
          switch type {
          case 0x10: size = 4
          case 0x01, 0x09, 0x11, 0x12: size = 8
          case 0x07: size = 12
          case 0x13: size = 16
          case 0x0A: size = 0
          case 0x08: if end &- p >= 1 && base.byte(p) <= 1 { size = 1 }
          case 0x02: size = -2
          default: break
          }
          if size >= 0 && end &- p >= size {
            cur.p = p &+ size
          } else if size == -2 {
            cur.p = try string(at: p, end: end)
          } else {
            cur.p = try value(type: type, typeOffset: typeOffset, at: p, end: end)
          }
          cur.index = index &+ 1
          cur.keyLength = -1
        }
      }
    } catch {
      // The key path comes from the stack: put the innermost document back on it.
      stack.push(cur)
      throw error
    }
  }

  @inline(never)
  func depthError(at p: Int) -> BSONError {
    BSONError(.depthLimitExceeded, "documents are nested deeper than the limit of \(maximumDepth)", offset: p)
  }

  @inline(never)
  func key(at offset: Int, length: Int) -> String {
    String(decoding: UnsafeRawBufferPointer(start: base + offset, count: length), as: UTF8.self)
  }

  /// Whether the key at `offset` is the decimal form of `index` ("0", "1", … with no leading zeros).
  @inline(__always)
  func keyIsIndex(at offset: Int, length: Int, index: Int) -> Bool {
    if index < 10 { return length == 1 && Int(base.byte(offset)) == 0x30 &+ index }
    var n = index
    var i = length &- 1
    while n > 0 {
      guard i >= 0, Int(base.byte(offset &+ i)) == 0x30 &+ n % 10 else { return false }
      n /= 10
      i &-= 1
    }
    return i == -1
  }

  @inline(never)
  func arrayKeyError(at offset: Int, length: Int, index: Int) throws(BSONError) {
    throw BSONError(
      .invalidArrayKey, "expected array key \"\(index)\", found \"\(key(at: offset, length: length))\"",
      offset: offset)
  }

  @inline(__always)
  func need(_ n: Int, at p: Int, end: Int, _ what: @autoclosure () -> String) throws(BSONError) {
    guard end - p >= n else {
      throw BSONError(
        .invalidLength, "expected \(n) bytes for \(what()), found \(max(0, end - p)) before the end of the document",
        offset: p)
    }
  }

  /// Validates a length-prefixed string at `p` and returns the offset after it.
  @inline(__always)
  func string(at p: Int, end: Int) throws(BSONError) -> Int {
    try need(4, at: p, end: end, "a string length")
    let n = Int(base.int32LE(p))
    guard n >= 1 else {
      throw BSONError(.invalidLength, "expected a string length of at least 1, found \(n)", offset: p)
    }
    guard n <= end - p - 4 else {
      throw BSONError(
        .invalidLength, "string length \(n) runs past the end of the document (\(end - p - 4) bytes left)", offset: p)
    }
    let last = p &+ 4 &+ n &- 1
    guard base.byte(last) == 0 else {
      throw BSONError(
        .missingTerminator, "expected the string to end with a zero byte, found 0x\(hex(base.byte(last)))",
        offset: last)
    }
    if checksUTF8, let bad = invalidUTF8Offset(base + p + 4, n - 1) {
      throw BSONError(.invalidUTF8, "expected a UTF-8 string, found an invalid byte sequence", offset: p + 4 + bad)
    }
    return last &+ 1
  }

  /// Validates a C string at `p` and returns the offset after its terminator.
  @inline(__always)
  func cString(at p: Int, end: Int, _ what: String) throws(BSONError) -> Int {
    guard p < end, let nul = memchr(base + p, 0, end - p) else {
      throw BSONError(
        .missingTerminator, "expected \(what) terminated by a zero byte before the end of the document", offset: p)
    }
    let n = UnsafeRawPointer(nul) - (base + p)
    if checksUTF8, let bad = invalidUTF8Offset(base + p, n) {
      throw BSONError(.invalidUTF8, "expected \(what) in UTF-8, found an invalid byte sequence", offset: p + bad)
    }
    return p &+ n &+ 1
  }

  /// Validates the value of an element that holds no document and returns the offset after it.
  @inline(never)
  func value(type: UInt8, typeOffset: Int, at p: Int, end: Int) throws(BSONError) -> Int {
    switch type {
    case 0x01, 0x09, 0x11, 0x12:
      try need(8, at: p, end: end, "a \(BSONType(rawValue: type)) value")
      return p &+ 8
    case 0x02, 0x0D, 0x0E:
      return try string(at: p, end: end)
    case 0x05:
      try need(5, at: p, end: end, "a binary length and subtype")
      let n = Int(base.int32LE(p))
      guard n >= 0, n <= end - p - 5 else {
        throw BSONError(
          .invalidLength,
          "binary length \(n) is negative or runs past the end of the document (\(end - p - 5) bytes left)",
          offset: p)
      }
      if base.byte(p + 4) == 0x02 {
        guard n >= 4, Int(base.int32LE(p + 5)) == n - 4 else {
          let inner = n >= 4 ? String(base.int32LE(p + 5)) : "none"
          throw BSONError(
            .invalidLength, "expected the old binary subtype's inner length to be \(n - 4), found \(inner)",
            offset: p + 5)
        }
      }
      return p &+ 5 &+ n
    case 0x06, 0x0A, 0xFF, 0x7F:
      return p
    case 0x07:
      try need(12, at: p, end: end, "an ObjectId")
      return p &+ 12
    case 0x08:
      try need(1, at: p, end: end, "a boolean")
      let b = base.byte(p)
      guard b <= 1 else {
        throw BSONError(.invalidBoolean, "expected a boolean byte 0 or 1, found 0x\(hex(b))", offset: p)
      }
      return p &+ 1
    case 0x0B:
      let afterPattern = try cString(at: p, end: end, "a regular expression pattern")
      return try cString(at: afterPattern, end: end, "regular expression options")
    case 0x0C:
      let afterRef = try string(at: p, end: end)
      try need(12, at: afterRef, end: end, "a DBPointer ObjectId")
      return afterRef &+ 12
    case 0x10:
      try need(4, at: p, end: end, "an int32")
      return p &+ 4
    case 0x13:
      try need(16, at: p, end: end, "a Decimal128")
      return p &+ 16
    default:
      throw BSONError(
        .unknownType, "expected a BSON type byte, found 0x\(hex(type))", offset: typeOffset)
    }
  }
}

@inline(never)
func hex(_ b: UInt8) -> String {
  let s = String(b, radix: 16, uppercase: true)
  return s.count == 1 ? "0" + s : s
}

/// Returns the offset of the first byte that is not part of a valid UTF-8 sequence, or `nil`
/// when all `count` bytes at `p` are valid UTF-8 (RFC 3629: no overlong forms, no surrogates,
/// nothing above U+10FFFF, no truncated sequence).
@inline(__always)
func invalidUTF8Offset(_ p: UnsafeRawPointer, _ count: Int) -> Int? {
  isASCII(p, count) ? nil : invalidUTF8OffsetSlow(p, count, from: 0)
}

/// Whether the `count` bytes at `p` are all below 0x80, read eight at a time with no loop for
/// the tail: the last (overlapping) word, or two overlapping halves, or three single bytes.
@inline(__always)
func isASCII(_ p: UnsafeRawPointer, _ count: Int) -> Bool {
  var bits: UInt64 = 0
  if count >= 8 {
    var i = 0
    while count &- i > 8 {
      bits |= p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
      if bits & 0x8080_8080_8080_8080 != 0 { return false }
      i &+= 8
    }
    bits |= p.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
  } else if count >= 4 {
    bits = UInt64(p.loadUnaligned(as: UInt32.self) | p.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self))
  } else if count > 0 {
    bits = UInt64(p.byte(0) | p.byte(count &>> 1) | p.byte(count &- 1))
  }
  return bits & 0x8080_8080_8080_8080 == 0
}

@inline(never)
func invalidUTF8OffsetSlow(_ p: UnsafeRawPointer, _ count: Int, from start: Int) -> Int? {
  var i = start
  while i < count {
    if p.byte(i) < 0x80 {
      i += 1
      continue
    }
    guard let n = utf8SequenceLength(p, at: i, end: count) else { return i }
    i += n
  }
  return nil
}

/// The length (2 to 4) of the valid UTF-8 sequence whose lead byte, at or above 0x80, is at `i`
/// among the `end` bytes at `p`; nil when it is not one (RFC 3629: no overlong form, no
/// surrogate, nothing above U+10FFFF, no sequence cut short). The one table of UTF-8's lead bytes,
/// for the validator and the Extended JSON parser.
@inline(__always)
func utf8SequenceLength(_ p: UnsafeRawPointer, at i: Int, end: Int) -> Int? {
  let b0 = p.byte(i)
  // The range of the second byte; later ones are 0x80...0xBF.
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
  let b1 = p.byte(i &+ 1)
  guard b1 >= low && b1 <= high else { return nil }
  if n >= 3 && p.byte(i &+ 2) & 0xC0 != 0x80 { return nil }
  if n == 4 && p.byte(i &+ 3) & 0xC0 != 0x80 { return nil }
  return n
}
