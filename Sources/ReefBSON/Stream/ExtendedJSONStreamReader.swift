/// Reads a stream of Extended JSON documents, as mongoexport writes them, one document at a time:
/// a JSON array of documents (`--jsonArray`), or documents one after another, one per line (the
/// default) or pretty-printed and separated by whitespace.
///
/// The form is taken from the first character after whitespace (and a UTF-8 byte-order mark):
/// `[` for an array, `{` for a sequence. Input is read in 64 KiB chunks, and only the text of the
/// document being read is held: the buffer grows to hold a document longer than a chunk and
/// shrinks after it, so memory stays flat whatever the length of the stream. gzip input (`.gz`,
/// or gzip magic bytes on standard input) is decompressed on the fly.
///
/// ```swift
/// var reader = try ExtendedJSONStreamReader(path: "people.json")
/// while let document = try reader.next() {
///   print(document["name"] ?? .null)
/// }
/// ```
///
/// Each document is parsed as by ``Document/init(extendedJSON:maximumDepth:)`` with
/// ``options``' ``ValidationOptions/maximumDepth`` (any depth is safe: the parser does not
/// recurse), then checked against ``options``' size limit where it is smaller than the parser's. Every error carries the
/// zero-based ``BSONError/documentIndex`` of the document being read, the one-based
/// ``BSONError/line`` and ``BSONError/column`` (in bytes) and the ``BSONError/offset`` of the
/// problem counted from the start of the (decompressed) stream, and the key path inside the
/// document. After an error, ``next()`` throws the same error again, unless
/// ``onDamagedDocument`` is set and the document could be stepped over.
///
/// A document's text may be at most six times ``ValidationOptions/maximumSize`` (at least
/// 6 MiB) long: a longer one, such as a line that never closes its document, is an error of kind
/// ``BSONError/Kind/sizeLimitExceeded`` once that much has been read, not an unbounded buffer.
/// A control character in a string (an unterminated string on a line, say) is an error as soon
/// as it is read.
///
/// Copies of a reader share the same input.
public struct ExtendedJSONStreamReader {
  /// How documents are checked after parsing.
  public let options: ValidationOptions
  /// The number of documents returned so far.
  public private(set) var documentsRead = 0
  /// The number of stream bytes read up to the end of the last document returned (or the
  /// whitespace after it), which is the stream offset of the next unread byte.
  public private(set) var bytesRead = 0
  /// The number of damaged documents stepped over (see ``onDamagedDocument`` and
  /// ``skipDamagedDocument()``).
  public private(set) var documentsSkipped = 0
  /// When set, ``next()`` steps over a document whose text is framed (its braces balance, outside
  /// strings) but which cannot be parsed or is not valid: it calls this with the document's error
  /// and goes on with the next document, as ``BSONStreamReader/onDamagedDocument`` does for BSON.
  /// Errors between documents (text that is not a document, an unterminated one, a control
  /// character in a string, a document text over the size limit, an I/O error) are thrown as usual.
  public var onDamagedDocument: ((BSONError) -> Void)?
  /// The one-based line of the next unread byte.
  public private(set) var line = 1
  /// The one-based column, in bytes, of the next unread byte.
  public var column: Int { bytesRead - lineStart + 1 }
  /// The form of the stream, known once the first ``next()`` has looked at it: ``DocumentStreamFormat/extendedJSONArray``
  /// or ``DocumentStreamFormat/extendedJSONSequence``; `nil` before.
  public var form: DocumentStreamFormat? {
    switch state {
    case .start: nil
    case .array: .extendedJSONArray
    case .sequence: .extendedJSONSequence
    case .finished(let array): array ? .extendedJSONArray : .extendedJSONSequence
    }
  }

  private let buffer: ReadBuffer
  private var buffers = ExtendedJSONParser.Buffers()
  private var state = State.start
  private var lineStart = 0
  private var failure: BSONError?
  /// The extent of the document that failed to parse: its text's length and the line and line
  /// start after it.
  private var damaged: (length: Int, line: Int, lineStart: Int)?
  /// The longest document text accepted.
  let maximumTextSize: Int

  private enum State {
    case start, sequence, array
    case finished(array: Bool)
  }

  /// Reads from a byte source.
  public init(source: ByteSource, options: ValidationOptions = .default) {
    self.options = options
    buffer = ReadBuffer(source: source)
    // Extended JSON is larger than the BSON it encodes: canonical numbers and escaped strings
    // take up to about six times more.
    let size = min(max(options.maximumSize, 1 << 20), Int.max / 8)
    maximumTextSize = size * 6
  }

  /// Opens a file; `-` reads standard input.
  /// - Parameters:
  ///   - path: a file path, or `-` for standard input.
  ///   - compression: with `.automatic`, `.gz` files and input starting with the gzip magic bytes
  ///     are decompressed.
  ///   - options: how documents are checked after parsing.
  /// - Throws: ``BSONError/Kind/io`` when the file cannot be opened.
  public init(
    path: String, compression: StreamCompression = .automatic, options: ValidationOptions = .default
  ) throws(BSONError) {
    self.init(source: try ByteSource(path: path, compression: compression), options: options)
  }

  /// Reads from an open file descriptor, which is not closed by the reader.
  public init(
    fileDescriptor: Int32, name: String = "-", compression: StreamCompression = .automatic,
    options: ValidationOptions = .default
  ) {
    let source = ByteSource(fileDescriptor: fileDescriptor, name: name, compression: compression)
    self.init(source: source, options: options)
  }

  /// The input's name: its path, or `-` for standard input.
  public var name: String { buffer.source.name }

  /// The next document, or `nil` at the end of the stream.
  ///
  /// The document owns its bytes and stays valid after later calls.
  /// - Throws: ``BSONError`` with the document index, line, column and stream offset:
  ///   ``BSONError/Kind/invalidJSON`` for text that is not a JSON document where one is expected
  ///   (or not `,`/`]` between the documents of an array, or anything after its `]`),
  ///   ``BSONError/Kind/truncated`` when the stream ends inside a document, the kinds of
  ///   ``Document/init(extendedJSON:)`` for a malformed document, a validation error where
  ///   ``options`` are stricter than the parser, ``BSONError/Kind/sizeLimitExceeded`` for a
  ///   document text longer than the limit above, ``BSONError/Kind/io`` when reading or
  ///   decompressing fails.
  /// - Complexity: O(n) in the length of the document's text.
  public mutating func next() throws(BSONError) -> Document? {
    if let failure { throw failure }
    while true {
      damaged = nil
      do throws(BSONError) {
        let document = try readNext()
        if document != nil { documentsRead += 1 }
        return document
      } catch {
        failure = error
        if let onDamagedDocument, skipDamagedDocument() != nil {
          onDamagedDocument(error)
          continue
        }
        throw error
      }
    }
  }

  /// Steps over the document that made ``next()`` fail, so that reading can go on with the next
  /// one: it can when the document's text was framed (its braces balanced, outside strings) and
  /// the failure was in its content; not after text that is not a document, an unterminated
  /// document, a control character in a string, an over-long document or an I/O error.
  /// - Returns: the number of bytes of text skipped, or `nil` when the reader cannot go on (and
  ///   ``next()`` keeps throwing the same error).
  public mutating func skipDamagedDocument() -> Int? {
    guard failure != nil, let damaged else { return nil }
    consume(damaged.length)
    line = damaged.line
    lineStart = damaged.lineStart
    documentsRead += 1
    documentsSkipped += 1
    failure = nil
    self.damaged = nil
    return damaged.length
  }

  private mutating func readNext() throws(BSONError) -> Document? {
    if case .start = state { try skipByteOrderMark() }
    try skipWhitespace()
    let byte = try peekByte()
    switch state {
    case .finished:
      return nil
    case .start:
      guard let byte else {
        state = .finished(array: false)
        return nil
      }
      if byte == UInt8(ascii: "[") {
        state = .array
        consume(1)
        try skipWhitespace()
        if try peekByte() == UInt8(ascii: "]") {
          consume(1)
          try finishArray()
          return nil
        }
        return try document("a document ('{') or ']'")
      }
      state = .sequence
      return try document("a document ('{') or '['")
    case .sequence:
      guard byte != nil else {
        state = .finished(array: false)
        return nil
      }
      return try document("a document ('{') or the end of the input")
    case .array:
      if byte == UInt8(ascii: ",") {
        consume(1)
        try skipWhitespace()
        return try document("a document ('{') after ','")
      }
      if byte == UInt8(ascii: "]") {
        consume(1)
        try finishArray()
        return nil
      }
      throw error(
        .invalidJSON,
        "expected ',' or ']' after a document in the array, found \(byte.map(describe) ?? "the end of the input")")
    }
  }

  /// After the `]` of an array of documents, only whitespace may follow.
  private mutating func finishArray() throws(BSONError) {
    try skipWhitespace()
    if let byte = try peekByte() {
      throw error(
        .invalidJSON, "expected the end of the input after the array of documents, found \(describe(byte))",
        inDocument: false)
    }
    state = .finished(array: true)
  }

  // MARK: - Bytes

  private mutating func consume(_ count: Int) {
    buffer.consume(count)
    bytesRead += count
  }

  private func peekByte() throws(BSONError) -> UInt8? {
    guard try buffer.fill(atLeast: 1) > 0 else { return nil }
    return buffer.pointer.load(as: UInt8.self)
  }

  private mutating func skipByteOrderMark() throws(BSONError) {
    guard try buffer.fill(atLeast: 3) >= 3 else { return }
    let p = buffer.pointer
    if p.load(fromByteOffset: 0, as: UInt8.self) == 0xEF && p.load(fromByteOffset: 1, as: UInt8.self) == 0xBB
      && p.load(fromByteOffset: 2, as: UInt8.self) == 0xBF
    {
      consume(3)
      lineStart = 3
    }
  }

  private mutating func skipWhitespace() throws(BSONError) {
    while true {
      let available = try buffer.fill(atLeast: 1)
      if available == 0 { return }
      let p = buffer.pointer.bindMemory(to: UInt8.self, capacity: available)
      var i = 0
      while i < available {
        let b = p[i]
        guard DocumentStreamFormat.isJSONWhitespace(b) else { break }
        i &+= 1
        // Safe: bytesRead + i is at most the stream's length.
        if b == 0x0A {
          line &+= 1
          lineStart = bytesRead &+ i
        }
      }
      consume(i)
      if i < available { return }
    }
  }

  // MARK: - Documents

  /// Finds the extent of the document at the next byte (its `{` to the matching `}`), reading
  /// more of the input as needed, then parses it in place.
  private mutating func document(_ expected: String) throws(BSONError) -> Document {
    guard let first = try peekByte(), first == UInt8(ascii: "{") else {
      throw error(.invalidJSON, "expected \(expected), found \(try peekByte().map(describe) ?? "the end of the input")")
    }
    let startOffset = bytesRead
    let startLine = line
    let startColumn = column
    var scan = Scan(line: line, lineStart: lineStart, start: startOffset)
    while !scan.done {
      if scan.length == buffer.unreadCount {
        guard try buffer.readMore() > 0 else {
          throw BSONError(
            .truncated,
            "expected the rest of the document that starts at line \(startLine), column \(startColumn), found the end of the input",
            offset: startOffset &+ scan.length, documentIndex: documentsRead, line: scan.line,
            column: startOffset &+ scan.length &- scan.lineStart &+ 1)
        }
      }
      let available = buffer.unreadCount
      scan.run(buffer.pointer.bindMemory(to: UInt8.self, capacity: available), count: available)
      if let control = scan.controlCharacter {
        let at = startOffset &+ scan.length
        throw BSONError(
          .invalidJSON,
          "expected a printable character or an escape in a string, found control character 0x\(hex(control))",
          offset: at, documentIndex: documentsRead, line: scan.line, column: at &- scan.lineStart &+ 1)
      }
      if scan.length > maximumTextSize {
        throw BSONError(
          .sizeLimitExceeded,
          "expected a document of at most \(maximumTextSize) bytes of text, found a longer one (it starts at line \(startLine), column \(startColumn))",
          offset: startOffset, documentIndex: documentsRead, line: startLine, column: startColumn)
      }
    }
    // The document's text is framed: a parse error leaves the stream readable after it.
    damaged = (scan.length, scan.line, scan.lineStart)
    let document = try parse(
      length: scan.length, startOffset: startOffset, startLine: startLine, startColumn: startColumn)
    damaged = nil
    consume(scan.length)
    line = scan.line
    lineStart = scan.lineStart
    return document
  }

  /// Parses the `length` unread bytes, which hold one whole document.
  private mutating func parse(length: Int, startOffset: Int, startLine: Int, startColumn: Int) throws(BSONError)
    -> Document
  {
    let text = buffer.pointer.bindMemory(to: UInt8.self, capacity: length)
    var reader = ExtendedJSONReader(input: text, count: length, position: 0, out: buffers.out, path: buffers.path)
    reader.documentIndex = documentsRead
    reader.maximumDepth = options.maximumDepth
    buffers.path = []
    defer {
      buffers.out = reader.out
      buffers.path = reader.path
    }
    var document: Document
    do throws(BSONError) {
      document = try reader.readDocument()
      guard reader.pos == length else {
        // The scan and the parser agree on where a well-formed document ends; this is for safety.
        throw reader.error(
          .invalidJSON, "expected the end of the document, found \(reader.describeByte(at: reader.pos))",
          at: reader.pos)
      }
      if options.maximumSize < ExtendedJSONReader.maximumSize { try document.validate(options: options) }
    } catch {
      var error = error
      if let errorLine = error.line {
        if errorLine == 1, let column = error.column { error.column = column &+ startColumn &- 1 }
        error.line = errorLine &+ startLine &- 1
      } else {
        // A validation error: its offset is in the BSON, so it points at the document's text.
        error.line = startLine
        error.column = startColumn
        error.offset = 0
      }
      error.offset = startOffset &+ (error.offset ?? 0)
      error.documentIndex = documentsRead
      throw error
    }
    return document
  }

  // MARK: - Errors

  private func error(_ kind: BSONError.Kind, _ message: String, inDocument: Bool = true) -> BSONError {
    BSONError(
      kind, message, offset: bytesRead, documentIndex: inDocument ? documentsRead : nil, line: line, column: column)
  }

  private func describe(_ byte: UInt8) -> String {
    if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
    return "byte 0x\(hex(byte))"
  }
}

/// The scan of one document's text for its end: brackets outside strings, and where each line
/// starts. It runs over the unread bytes as they arrive and resumes where it stopped.
private struct Scan {
  /// The bytes scanned, from the document's `{`.
  var length = 0
  var depth = 0
  var inString = false
  var escaped = false
  var done = false
  /// A control character found in a string (at `length`), which ends the scan.
  var controlCharacter: UInt8?
  var line: Int
  /// The stream offset where `line` starts.
  var lineStart: Int
  /// The stream offset of the document's `{`.
  let start: Int

  init(line: Int, lineStart: Int, start: Int) {
    self.line = line
    self.lineStart = lineStart
    self.start = start
  }

  /// Scans `p[length..<count]`, stopping after the document's closing bracket or at a control
  /// character in a string.
  mutating func run(_ p: UnsafePointer<UInt8>, count: Int) {
    var i = length
    defer { length = i }
    while i < count {
      if inString {
        // Eight bytes at a time through plain string text (not right after a backslash).
        while !escaped && count &- i >= 8 {
          // Safe: i + 8 <= count.
          let w = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
          if Self.mayEndString(w) { break }
          i &+= 8
        }
        guard i < count else { return }
        let b = p[i]
        if escaped {
          escaped = false
        } else if b == UInt8(ascii: "\\") {
          escaped = true
        } else if b == UInt8(ascii: "\"") {
          inString = false
        } else if b < 0x20 {
          controlCharacter = b
          return
        }
        i &+= 1
        continue
      }
      let b = p[i]
      i &+= 1
      switch b {
      case UInt8(ascii: "\""): inString = true
      case UInt8(ascii: "{"), UInt8(ascii: "["): depth &+= 1
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth &-= 1
        if depth == 0 {
          done = true
          return
        }
      case 0x0A:
        line &+= 1
        // Safe: an offset within the stream.
        lineStart = start &+ i
      default: break
      }
    }
  }

  /// Whether any of the eight bytes of `w` is a quote, a backslash or a control character.
  @inline(__always)
  static func mayEndString(_ w: UInt64) -> Bool {
    ExtendedJSONReader.stringEndMarks(w) & 0x8080_8080_8080_8080 != 0
  }
}
