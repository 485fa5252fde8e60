import CLibBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// libbson's verdict on whether a byte buffer is exactly one valid BSON document, completed with
/// the checks that Debian's libbson 1.23 leaves out: the differential oracle for Reef's validator.
///
/// The verdict combines, in this order:
/// 1. `bson_init_static`: the envelope (length >= 5, length prefix == byte count, last byte zero).
/// 2. A walk with `bson_iter_next`, which checks every element's type byte and that every length
///    fits, booleans are 0 or 1 and old binary (subtype 2) inner lengths agree. The walk recurses
///    into embedded documents, arrays and code-with-scope scopes and adds what libbson 1.23 misses:
///    - every key, regex pattern and regex option string must pass `bson_utf8_validate` without
///      NULs; every string, JavaScript code, symbol and DBPointer namespace must pass it with NULs
///      allowed (BSON strings are length-prefixed and may contain U+0000, see the corpus case
///      "Embedded nulls" in string.json), because 1.23's `bson_validate` lets invalid UTF-8 in
///      string values through;
///    - each embedded document, array and scope must have a valid envelope (libbson's visitor
///      silently skips one whose length is below 5 or whose last byte is not zero, and
///      `bson_iter_recurse` checks neither);
///    - the elements of every document must end exactly at its terminating zero;
///    - a code-with-scope's code string must end with a zero byte;
///    - code-with-scope scopes are checked like any document (1.23's `bson_validate` stops at the
///      first code-with-scope element and reports the rest as valid).
/// 3. `bson_validate` with `BSON_VALIDATE_UTF8 | BSON_VALIDATE_UTF8_ALLOW_NULL` on the whole
///    document; a rejection there also makes the verdict invalid.
///
/// Where libbson accepts input that the BSON specification calls invalid or degenerate, the verdict
/// stays "valid" (it reports what libbson does) and records a ``Leniency`` so that a differential test
/// can explain a disagreement with a stricter validator:
/// - `arrayKeyNotIndex`: an array key other than "0", "1", … (libbson never
///   checks array keys; the corpus calls such arrays degenerate but readable, array.json);
/// - `overlongNull`: the two-byte overlong form `C0 80` of U+0000 in a string value, which
///   `bson_utf8_validate` accepts when NULs are allowed but UTF-8 does not (RFC 3629: section 4's
///   syntax has no C0 byte, and section 10 names this very sequence as one a decoder must reject);
/// - `deeperThanMongoDBLimit`: a document nested more than 100 levels
///   below the top-level document (MongoDB's limit; libbson has none).
///
/// The walk is recursive, so it stops with ``Reason/oracleRecursionLimit`` at ``recursionLimit``
/// levels (five times MongoDB's limit) rather than risk the stack of the thread it runs on.
public struct LibBSONVerdict: Sendable, Hashable, CustomStringConvertible {
  /// Why the oracle rejected the bytes.
  public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// A stable name.
    public let rawValue: String
    /// Creates a reason from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The name.
    public var description: String { rawValue }

    /// `bson_init_static` rejected the top-level envelope.
    public static let envelope = Reason(rawValue: "envelope")
    /// `bson_iter_next` stopped on a malformed element (`err_off` set).
    public static let element = Reason(rawValue: "element")
    /// The elements of a document do not end exactly at its terminating zero.
    public static let terminator = Reason(rawValue: "terminator")
    /// An embedded document, array or scope has an invalid envelope.
    public static let nestedEnvelope = Reason(rawValue: "nestedEnvelope")
    /// A key is not UTF-8 (`bson_utf8_validate`, NULs not allowed).
    public static let keyUTF8 = Reason(rawValue: "keyUTF8")
    /// A string, code, symbol or DBPointer namespace is not UTF-8 (`bson_utf8_validate`, NULs allowed).
    public static let stringUTF8 = Reason(rawValue: "stringUTF8")
    /// A regex pattern or options string is not UTF-8 (`bson_utf8_validate`, NULs not allowed).
    public static let regexUTF8 = Reason(rawValue: "regexUTF8")
    /// A code-with-scope's code string does not end with a zero byte.
    public static let codeTerminator = Reason(rawValue: "codeTerminator")
    /// `bson_validate` rejected a document that the walk accepted.
    public static let bsonValidate = Reason(rawValue: "bsonValidate")
    /// Nesting deeper than ``LibBSONVerdict/recursionLimit`` (the oracle's limit, not libbson's).
    public static let oracleRecursionLimit = Reason(rawValue: "oracleRecursionLimit")
  }

  /// Something libbson accepts that the BSON specification does not, found at a byte offset.
  public struct Leniency: Hashable, Sendable, CustomStringConvertible {
    /// The kind of spec violation.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
      /// A stable name.
      public let rawValue: String
      /// Creates a kind from its name.
      public init(rawValue: String) { self.rawValue = rawValue }
      /// The name.
      public var description: String { rawValue }

      /// An array key that is not the element's decimal index.
      public static let arrayKeyNotIndex = Kind(rawValue: "arrayKeyNotIndex")
      /// The overlong encoding `C0 80` in a string value.
      public static let overlongNull = Kind(rawValue: "overlongNull")
      /// An embedded document more than 100 levels below the top-level document.
      public static let deeperThanMongoDBLimit = Kind(rawValue: "deeperThanMongoDBLimit")
    }

    /// What is wrong.
    public var kind: Kind
    /// Where: the offending key (array keys), byte (`C0`) or embedded document value (depth), from
    /// the start of the top-level document.
    public var offset: Int

    /// Creates a leniency record.
    public init(_ kind: Kind, offset: Int) {
      self.kind = kind
      self.offset = offset
    }

    /// `kind@offset`.
    public var description: String { "\(kind)@\(offset)" }
  }

  /// The nesting depth beyond which `deeperThanMongoDBLimit` is recorded.
  public static let mongoDBDepthLimit = 100

  /// The deepest nesting the oracle walks; deeper documents are rejected with
  /// ``Reason/oracleRecursionLimit``, which is the oracle's own limit, not libbson's.
  public static let recursionLimit = 500

  /// Why the bytes were rejected, or `nil` when they are valid.
  public private(set) var reason: Reason?
  /// The byte offset that libbson or the walk blamed, from the start of the buffer.
  public private(set) var offset: Int?
  /// Spec violations that libbson accepts, in document order (only meaningful when valid).
  public private(set) var leniencies: [Leniency] = []
  /// The deepest nesting seen (0 for a document without embedded documents).
  public private(set) var maximumDepth = 0
  /// What `bson_validate` alone said (`nil` when the envelope was already rejected).
  public private(set) var bsonValidateAccepted: Bool?

  /// Whether the oracle accepts the bytes as exactly one valid document.
  public var isValid: Bool { reason == nil }

  /// Judges `bytes`, which must hold exactly one document and nothing else.
  /// - Complexity: O(n) in the number of bytes.
  public init(checking bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
      reason = .envelope
      offset = 0
      return
    }
    withLibBSONScratch(bson_t.self) { slot in
      let b = OpaquePointer(slot)
      guard bson_init_static(b, base, bytes.count) else {
        reason = .envelope
        offset = 0
        return
      }
      var walk = Walk(top: UnsafeRawPointer(base))
      let failure = withLibBSONScratch(bson_iter_t.self) { iter -> Walk.Failure? in
        guard bson_iter_init(OpaquePointer(iter), b) else { return Walk.Failure(reason: .envelope, offset: 0) }
        return walk.document(iter, length: bytes.count, depth: 0, isArray: false)
      }
      if let failure {
        reason = failure.reason
        offset = failure.offset
      }
      leniencies = walk.leniencies
      maximumDepth = walk.maximumDepth
      var errorOffset = 0
      let flags = bson_validate_flags_t(BSON_VALIDATE_UTF8.rawValue | BSON_VALIDATE_UTF8_ALLOW_NULL.rawValue)
      let accepted = bson_validate(b, flags, &errorOffset)
      bsonValidateAccepted = accepted
      if !accepted && reason == nil {
        reason = .bsonValidate
        offset = errorOffset
      }
    }
  }

  /// Judges `bytes`, which must hold exactly one document and nothing else.
  /// - Complexity: O(n) in the number of bytes.
  public init(checking bytes: [UInt8]) {
    self = bytes.withUnsafeBytes { LibBSONVerdict(checking: $0) }
  }

  /// `valid`, or the reason and offset, followed by any leniencies.
  public var description: String {
    var s = reason.map { "invalid (\($0) at byte \(offset ?? -1))" } ?? "valid"
    if !leniencies.isEmpty { s += ", libbson leniencies: " + leniencies.map(\.description).joined(separator: ", ") }
    return s
  }
}

/// The recursive bson_iter walk behind ``LibBSONVerdict``.
private struct Walk {
  /// The start of the top-level document; all reported offsets are relative to it.
  let top: UnsafeRawPointer
  var leniencies: [LibBSONVerdict.Leniency] = []
  var maximumDepth = 0

  struct Failure {
    var reason: LibBSONVerdict.Reason
    var offset: Int
  }

  func offset(of p: UnsafeRawPointer) -> Int { p - top }

  /// Walks the elements of the document `iter` was just initialised on; `length` is its byte count.
  mutating func document(
    _ iter: UnsafeMutablePointer<bson_iter_t>, length: Int, depth: Int, isArray: Bool
  ) -> Failure? {
    maximumDepth = max(maximumDepth, depth)
    let it = OpaquePointer(iter)
    let start = UnsafeRawPointer(iter.pointee.raw!)
    // The offset after the last element read; an empty document's elements "end" after its length prefix.
    var end = 4
    var index = 0
    while bson_iter_next(it) {
      let keyPointer = bson_iter_key(it)!
      let keyLength = strlen(keyPointer)
      let keyOffset = offset(of: keyPointer)
      if !bson_utf8_validate(keyPointer, keyLength, false) {
        return Failure(reason: .keyUTF8, offset: keyOffset)
      }
      if isArray && !isIndex(keyPointer, keyLength, index) {
        leniencies.append(.init(.arrayKeyNotIndex, offset: keyOffset))
      }
      let valueOffset = offset(of: start + Int(iter.pointee.d1))
      if let failure = value(iter, valueOffset: valueOffset, depth: depth) { return failure }
      end = Int(iter.pointee.next_off)
      index += 1
    }
    // bson_iter_next returns false both at the end and on a malformed element; err_off tells which.
    if iter.pointee.err_off != 0 {
      return Failure(reason: .element, offset: offset(of: start) + Int(iter.pointee.err_off))
    }
    // Our own terminator check: the last element must end exactly at the document's final zero.
    if end != length - 1 {
      return Failure(reason: .terminator, offset: offset(of: start) + end)
    }
    return nil
  }

  /// Checks the value the iterator is on and recurses into containers.
  mutating func value(_ iter: UnsafeMutablePointer<bson_iter_t>, valueOffset: Int, depth: Int) -> Failure? {
    let it = OpaquePointer(iter)
    var length: UInt32 = 0
    switch bson_iter_type(it) {
    case BSON_TYPE_UTF8:
      return string(bson_iter_utf8(it, &length)!, Int(length), offset: valueOffset + 4)
    case BSON_TYPE_CODE:
      return string(bson_iter_code(it, &length)!, Int(length), offset: valueOffset + 4)
    case BSON_TYPE_SYMBOL:
      return string(bson_iter_symbol(it, &length)!, Int(length), offset: valueOffset + 4)
    case BSON_TYPE_DBPOINTER:
      var collection: UnsafePointer<CChar>?
      var oid: UnsafePointer<bson_oid_t>?
      bson_iter_dbpointer(it, &length, &collection, &oid)
      return string(collection!, Int(length), offset: valueOffset + 4)
    case BSON_TYPE_REGEX:
      var options: UnsafePointer<CChar>?
      let pattern = bson_iter_regex(it, &options)!
      for s in [pattern, options!] where !bson_utf8_validate(s, strlen(s), false) {
        return Failure(reason: .regexUTF8, offset: offset(of: s))
      }
      return nil
    case BSON_TYPE_DOCUMENT, BSON_TYPE_ARRAY:
      let isArray = bson_iter_type(it) == BSON_TYPE_ARRAY
      var data: UnsafePointer<UInt8>?
      if isArray { bson_iter_array(it, &length, &data) } else { bson_iter_document(it, &length, &data) }
      return withLibBSONScratch(bson_iter_t.self) { child in
        // Not bson_iter_recurse: it checks nothing, and libbson's own visitor silently skips an
        // embedded document whose envelope bson_init_static rejects. bson_iter_init_from_data applies
        // the envelope checks (length >= 5, length field == size, last byte zero), and here a failure
        // makes the document invalid.
        guard bson_iter_init_from_data(OpaquePointer(child), data, Int(length)) else {
          return Failure(reason: .nestedEnvelope, offset: valueOffset)
        }
        return nested(child, valueOffset: valueOffset, depth: depth, isArray: isArray)
      }
    case BSON_TYPE_CODEWSCOPE:
      var scopeLength: UInt32 = 0
      var scope: UnsafePointer<UInt8>?
      let code = bson_iter_codewscope(it, &length, &scopeLength, &scope)!
      // bson_iter_next checks the code string's length but not the zero byte that must end it.
      guard code[Int(length)] == 0 else {
        return Failure(reason: .codeTerminator, offset: offset(of: code) + Int(length))
      }
      if let failure = string(code, Int(length), offset: offset(of: code)) { return failure }
      return withLibBSONScratch(bson_iter_t.self) { child in
        guard bson_iter_init_from_data(OpaquePointer(child), scope, Int(scopeLength)) else {
          return Failure(reason: .nestedEnvelope, offset: offset(of: scope!))
        }
        return nested(child, valueOffset: valueOffset, depth: depth, isArray: false)
      }
    default:
      // Fixed-size values, binary and booleans: bson_iter_next already checked everything.
      return nil
    }
  }

  mutating func nested(
    _ child: UnsafeMutablePointer<bson_iter_t>, valueOffset: Int, depth: Int, isArray: Bool
  ) -> Failure? {
    guard depth < LibBSONVerdict.recursionLimit else {
      return Failure(reason: .oracleRecursionLimit, offset: valueOffset)
    }
    if depth + 1 > LibBSONVerdict.mongoDBDepthLimit {
      leniencies.append(.init(.deeperThanMongoDBLimit, offset: valueOffset))
    }
    return document(child, length: Int(child.pointee.len), depth: depth + 1, isArray: isArray)
  }

  /// Checks a length-delimited string value; `offset` is where its bytes start.
  mutating func string(_ s: UnsafePointer<CChar>, _ length: Int, offset: Int) -> Failure? {
    guard bson_utf8_validate(s, length, true) else { return Failure(reason: .stringUTF8, offset: offset) }
    // With NULs allowed, bson_utf8_validate also accepts the overlong NUL C0 80 (see LibBSONVerdict).
    // In a string it accepted, C0 can only be the lead byte of that form.
    let raw = UnsafeRawPointer(s)
    for i in 0..<length where raw.load(fromByteOffset: i, as: UInt8.self) == 0xC0 {
      leniencies.append(.init(.overlongNull, offset: offset + i))
    }
    return nil
  }

  func isIndex(_ key: UnsafePointer<CChar>, _ length: Int, _ index: Int) -> Bool {
    var expected = String(index)
    return expected.withUTF8 { e in e.count == length && memcmp(e.baseAddress!, key, length) == 0 }
  }
}
