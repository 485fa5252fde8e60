/// The two output forms of Extended JSON v2.
public enum ExtendedJSONMode: String, Sendable, CaseIterable {
  /// Type-preserving: every number and date wrapped (`{"$numberInt": "1"}`).
  case canonical
  /// Human-friendly: plain JSON numbers where lossless, ISO-8601 dates for years 1970-9999.
  case relaxed
}

extension Document {
  /// The document as Extended JSON v2 text, keys in document order.
  ///
  /// Compact output has no spaces: `{"a":1,"b":{"$oid":"57e193d7a9cc81b4027498b5"}}`. Pretty
  /// output puts every member on its own line, indented by two spaces per level, and keeps each
  /// type wrapper on one line:
  ///
  /// ```
  /// {
  ///   "a": 1,
  ///   "b": {"$oid": "57e193d7a9cc81b4027498b5"}
  /// }
  /// ```
  ///
  /// Doubles are written with the shortest digits that read back to the same value, always with
  /// a fraction or an exponent (`1.0`, `-0.0`, `1.0E+300`); regular expression options are
  /// written in alphabetical order; binary subtype 2 is written without its inner length.
  /// - Parameters:
  ///   - mode: canonical or relaxed.
  ///   - pretty: indented over several lines instead of one line.
  /// - Complexity: O(n) in the document's size.
  public func extendedJSON(_ mode: ExtendedJSONMode = .relaxed, pretty: Bool = false) -> String {
    let writer = writeExtendedJSON(mode: mode, pretty: pretty)
    defer { writer.out.release() }
    return String(decoding: UnsafeBufferPointer(start: writer.out.base, count: writer.out.count), as: UTF8.self)
  }

  /// Appends the document as Extended JSON v2 UTF-8 to `out` (no trailing newline); the text is
  /// the same as ``extendedJSON(_:pretty:)``'s.
  /// - Complexity: O(n) in the document's size.
  public func appendExtendedJSON(to out: inout [UInt8], mode: ExtendedJSONMode = .relaxed, pretty: Bool = false) {
    let writer = writeExtendedJSON(mode: mode, pretty: pretty)
    defer { writer.out.release() }
    out.append(contentsOf: UnsafeBufferPointer(start: writer.out.base, count: writer.out.count))
  }

  /// Writes the document into a new buffer, which the caller releases.
  func writeExtendedJSON(mode: ExtendedJSONMode, pretty: Bool) -> ExtendedJSONWriter {
    let estimate = length &* (pretty ? 4 : 2) &+ 16
    var writer = ExtendedJSONWriter(out: ExtendedJSONBuffer(capacity: estimate), mode: mode, pretty: pretty)
    writer.document(base, isArray: false, level: 0)
    return writer
  }

  /// Parses one Extended JSON v2 document: canonical, relaxed, or the legacy forms `$regex` with
  /// `$options`, `$binary` with `$type`, and `$date` with an ISO-8601 string. Keys keep their order.
  ///
  /// Type wrappers (`{"$numberLong": "1"}`, …) are recognized in nested objects, never in the
  /// top-level object. An object with a wrapper key must have exactly that wrapper's keys and
  /// value types; other `$`-prefixed keys (such as DBRef's `$ref` and `$id`, or query operators)
  /// are kept as ordinary keys. Plain JSON integers become int32 when they fit, else int64, else
  /// double; numbers with a fraction or exponent become doubles. Documents and arrays may be
  /// nested 100 deep below the top-level document (MongoDB's limit; see
  /// ``init(extendedJSON:maximumDepth:)`` for another).
  /// - Throws: ``BSONError`` of kind ``BSONError/Kind/invalidJSON`` (syntax),
  ///   ``BSONError/Kind/invalidExtendedJSON`` (a malformed wrapper), ``BSONError/Kind/invalidUTF8``,
  ///   ``BSONError/Kind/invalidKey`` (a key with `\u0000`) or ``BSONError/Kind/depthLimitExceeded``,
  ///   with the line, column, byte offset and key path of the problem.
  /// - Complexity: O(n) in the length of the text.
  public init(extendedJSON text: String) throws(BSONError) {
    try self.init(extendedJSON: text, maximumDepth: ExtendedJSONReader.defaultMaximumDepth)
  }

  /// Parses one Extended JSON v2 document as ``init(extendedJSON:)`` does, with documents and
  /// arrays nested at most `maximumDepth` deep below the top-level document
  /// (``ValidationOptions/unlimitedDepth`` for no limit).
  ///
  /// The parser does not recurse (open documents and arrays are kept on the heap), so any limit
  /// is safe on any thread: 100,000 levels cost about 3 MB while parsing.
  /// - Throws: as ``init(extendedJSON:)``; ``BSONError/Kind/depthLimitExceeded`` at the first
  ///   document or array past the limit.
  /// - Complexity: O(n) in the length of the text.
  public init(extendedJSON text: String, maximumDepth: Int) throws(BSONError) {
    var text = text
    let result = text.withUTF8 { utf8 -> Result<Document, BSONError> in
      Result { () throws(BSONError) -> Document in
        try ExtendedJSONReader.parseSingle(utf8, maximumDepth: maximumDepth)
      }
    }
    self = try result.get()
  }
}

extension ExtendedJSONReader {
  /// Parses exactly one document, with only whitespace around it.
  static func parseSingle(_ utf8: UnsafeBufferPointer<UInt8>, maximumDepth: Int) throws(BSONError) -> Document {
    let empty: UInt8 = 0
    return try withUnsafePointer(to: empty) { (emptyPointer) throws(BSONError) -> Document in
      let input = utf8.baseAddress ?? emptyPointer
      var reader = ExtendedJSONReader(
        input: input, count: utf8.count, position: 0, out: ExtendedJSONBuffer(capacity: utf8.count &+ 64), path: [])
      defer { reader.out.release() }
      reader.maximumDepth = maximumDepth
      reader.skipByteOrderMark()
      reader.skipWhitespace()
      guard reader.peek == UInt8(ascii: "{") else {
        throw reader.error(
          .invalidJSON, "expected a JSON object ('{'), found \(reader.describeByte(at: reader.pos))", at: reader.pos)
      }
      let document = try reader.readDocument()
      reader.skipWhitespace()
      guard reader.pos == reader.end else {
        throw reader.error(
          .invalidJSON,
          "expected the end of the input after the document, found \(reader.describeByte(at: reader.pos))",
          at: reader.pos)
      }
      return document
    }
  }
}

/// Reads a sequence of Extended JSON documents from UTF-8 text: one per line (JSON Lines), a
/// JSON array of documents, or documents (pretty-printed or not) one after another separated by
/// whitespace. The form is detected from the first non-blank character: `[` for an array, `{`
/// for a sequence.
///
/// ```swift
/// var parser = ExtendedJSONParser("{\"a\": 1}\n{\"a\": 2}\n")
/// while let document = try parser.nextDocument() { print(document) }
/// ```
///
/// Each document is parsed as by ``Document/init(extendedJSON:)``. After an error the parser
/// stays failed: every later call throws the same error.
public struct ExtendedJSONParser {
  /// The one-based line of the next unread byte.
  public private(set) var line = 1
  /// The one-based column (in bytes) of the next unread byte.
  public private(set) var column = 1
  /// The deepest nesting of documents and arrays accepted below each top-level document:
  /// MongoDB's 100 by default, ``ValidationOptions/unlimitedDepth`` for no limit. The parser
  /// does not recurse, so any limit is safe.
  public var maximumDepth = ExtendedJSONReader.defaultMaximumDepth

  let input: [UInt8]
  var position = 0
  /// The number of documents returned so far.
  var index = 0
  var form = Form.unknown
  var failure: BSONError?
  var buffers = Buffers()
  /// Where `line` and `column` were last brought up to date, and where that line starts.
  var countedTo = 0
  var lineStart = 0

  enum Form {
    case unknown, sequence, array, finished
  }

  /// The output buffer and key path stack, kept between documents so that reading many small
  /// documents allocates only each document's storage.
  final class Buffers {
    var out = ExtendedJSONBuffer(capacity: 4096)
    var path: [Int] = []
    deinit { out.release() }
  }

  /// Creates a parser over UTF-8 bytes.
  public init(bytes: [UInt8]) {
    input = bytes
  }

  /// Creates a parser over a string.
  public init(_ text: String) { self.init(bytes: Array(text.utf8)) }

  /// The next document, or `nil` at the end of the input.
  /// - Throws: ``BSONError`` (``BSONError/Kind/invalidJSON``, ``BSONError/Kind/invalidExtendedJSON``
  ///   and the other kinds ``Document/init(extendedJSON:)`` throws) with line, column, byte offset
  ///   in the whole input, key path, and the zero-based index of the document in the input.
  /// - Complexity: O(n) in the length of the document read.
  public mutating func nextDocument() throws(BSONError) -> Document? {
    if let failure { throw failure }
    if !isKnownUniquelyReferenced(&buffers) { buffers = Buffers() }
    let input = self.input
    let result = input.withUnsafeBufferPointer { utf8 -> Result<Document?, BSONError> in
      Result { () throws(BSONError) -> Document? in try next(utf8) }
    }
    advanceLineCount()
    switch result {
    case .success(let document):
      if document != nil { index += 1 }
      return document
    case .failure(let error):
      failure = error
      throw error
    }
  }

  private mutating func next(_ utf8: UnsafeBufferPointer<UInt8>) throws(BSONError) -> Document? {
    let empty: UInt8 = 0
    return try withUnsafePointer(to: empty) { (emptyPointer) throws(BSONError) -> Document? in
      var reader = ExtendedJSONReader(
        input: utf8.baseAddress ?? emptyPointer, count: utf8.count, position: position, out: buffers.out,
        path: buffers.path)
      reader.documentIndex = index
      reader.maximumDepth = maximumDepth
      buffers.path = []
      defer {
        buffers.out = reader.out
        buffers.path = reader.path
        position = reader.pos
      }
      reader.skipByteOrderMark()
      reader.skipWhitespace()
      switch form {
      case .finished:
        return nil
      case .unknown:
        if reader.pos == reader.end {
          form = .finished
          return nil
        }
        if reader.peek == UInt8(ascii: "[") {
          form = .array
          reader.pos += 1
          reader.skipWhitespace()
          if reader.peek == UInt8(ascii: "]") {
            reader.pos += 1
            try finish(&reader)
            return nil
          }
          return try document(&reader, "a document ('{') or ']'")
        }
        form = .sequence
        return try document(&reader, "a document ('{') or '['")
      case .sequence:
        if reader.pos == reader.end {
          form = .finished
          return nil
        }
        return try document(&reader, "a document ('{') or the end of the input")
      case .array:
        let b = reader.peek
        if b == UInt8(ascii: ",") {
          reader.pos += 1
          reader.skipWhitespace()
          return try document(&reader, "a document ('{') after ','")
        }
        if b == UInt8(ascii: "]") {
          reader.pos += 1
          try finish(&reader)
          return nil
        }
        throw reader.error(
          .invalidJSON,
          "expected ',' or ']' after a document in the array, found \(reader.describeByte(at: reader.pos))",
          at: reader.pos)
      }
    }
  }

  private func document(_ reader: inout ExtendedJSONReader, _ expected: String) throws(BSONError) -> Document {
    guard reader.peek == UInt8(ascii: "{") else {
      throw reader.error(
        .invalidJSON, "expected \(expected), found \(reader.describeByte(at: reader.pos))", at: reader.pos)
    }
    return try reader.readDocument()
  }

  /// After the closing `]` of an array of documents, only whitespace may follow.
  private mutating func finish(_ reader: inout ExtendedJSONReader) throws(BSONError) {
    reader.skipWhitespace()
    reader.documentIndex = nil
    guard reader.pos == reader.end else {
      throw reader.error(
        .invalidJSON,
        "expected the end of the input after the array of documents, found \(reader.describeByte(at: reader.pos))",
        at: reader.pos)
    }
    form = .finished
  }

  /// Brings `line` and `column` up to `position`.
  private mutating func advanceLineCount() {
    var i = countedTo
    while i < position {
      if input[i] == 0x0A {
        line += 1
        lineStart = i + 1
      }
      i += 1
    }
    countedTo = position
    column = position - lineStart + 1
  }
}

extension BSON {
  /// The value alone as compact Extended JSON v2: `"Ann"`, `5` or `{"$numberInt":"5"}`,
  /// `{"a":[1,2]}` — what ``Document/extendedJSON(_:pretty:)`` writes for it inside a document.
  public func extendedJSON(_ mode: ExtendedJSONMode = .relaxed) -> String {
    var builder = DocumentBuilder()
    builder.append("", self)
    // The one element of {"": value}: type byte at offset 4, empty key, value at offset 6.
    return builder.document.withUnsafeBytes { bytes in
      var writer = ExtendedJSONWriter(
        out: ExtendedJSONBuffer(capacity: bytes.count &* 2 &+ 16), mode: mode, pretty: false)
      defer { writer.out.release() }
      _ = writer.value(type: bytes[4], bytes.baseAddress! + 6, level: 0)
      return String(decoding: UnsafeBufferPointer(start: writer.out.base, count: writer.out.count), as: UTF8.self)
    }
  }
}

extension Document: CustomStringConvertible, CustomDebugStringConvertible {
  /// Relaxed Extended JSON.
  public var description: String { extendedJSON(.relaxed) }
  /// Canonical Extended JSON.
  public var debugDescription: String { extendedJSON(.canonical) }
}
