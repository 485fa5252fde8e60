import ReefBSON

/// A buffered reader over a ``ByteSource`` for the dump formats that need more than
/// ``BSONStreamReader`` offers: the archive's magic number and terminators, and the scanning of
/// Extended JSON text into documents.
///
/// Memory is one 64 KiB chunk, grown only to hold one document larger than that and shrunk
/// again after it.
final class DumpInput {
  let source: ByteSource
  /// The descriptor under the source when the input is a file, to report raw (compressed) progress.
  let descriptor: Int32?
  private var buffer: [UInt8]
  private var start = 0
  private var end = 0
  private var atEnd = false
  /// The stream offset (after decompression) of the next unread byte.
  private(set) var offset = 0
  static let chunkSize = 64 * 1024

  init(source: ByteSource, descriptor: Int32?) {
    self.source = source
    self.descriptor = descriptor
    buffer = [UInt8](repeating: 0, count: Self.chunkSize)
  }

  /// The input's name, for messages.
  var name: String { source.name }

  /// Raw bytes consumed from the file (compressed bytes for gzip), for progress.
  var rawBytesRead: Int {
    if let descriptor { return FileSystem.offset(descriptor) }
    return source.position
  }

  /// Reads until `count` bytes are unread or the input ends, and returns how many are unread.
  func fill(atLeast count: Int) throws(BSONError) -> Int {
    if end - start >= count || atEnd { return end - start }
    if buffer.count - start < count {
      if start > 0 {
        let unread = end - start
        buffer.withUnsafeMutableBytes { raw in
          // Safe: the source range start..<end lies inside the buffer.
          raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: unread)
        }
        end = unread
        start = 0
      }
      if buffer.count < count {
        let rounded = (count + Self.chunkSize - 1) / Self.chunkSize * Self.chunkSize
        buffer.append(contentsOf: repeatElement(0, count: rounded - buffer.count))
      }
    }
    while end - start < count {
      let capacity = buffer.count
      let filled = end
      let source = self.source
      let n = try buffer.withUnsafeMutableBytes { raw in
        Result { () throws(BSONError) -> Int in
          // Safe: filled < capacity here, because end - start < count <= capacity - start.
          try source.read(
            into: UnsafeMutableRawBufferPointer(start: raw.baseAddress! + filled, count: capacity - filled))
        }
      }.get()
      if n == 0 {
        atEnd = true
        break
      }
      end += n
    }
    return end - start
  }

  /// The unread bytes (call ``fill(atLeast:)`` first).
  func withUnread<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
    buffer.withUnsafeBytes { raw in
      // Safe: start...end lies inside the buffer.
      body(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
    }
  }

  /// Marks `count` unread bytes as read.
  func consume(_ count: Int) {
    precondition(count <= end - start, "DumpInput.consume past the unread bytes")
    start += count
    offset += count
    if start == end {
      start = 0
      end = 0
      if buffer.count > Self.chunkSize { buffer = [UInt8](repeating: 0, count: Self.chunkSize) }
    }
  }

  /// The next little-endian int32, not consumed; `nil` at the clean end of the input.
  /// - Throws: ``BSONError/Kind/truncated`` when fewer than 4 bytes are left.
  func peekInt32(expecting what: String) throws(BSONError) -> Int32? {
    let available = try fill(atLeast: 4)
    if available == 0 { return nil }
    guard available >= 4 else {
      throw BSONError(
        .truncated, "expected \(what), found \(available) bytes before the end of '\(name)'", offset: offset)
    }
    return withUnread { raw in
      Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: Int32.self))
    }
  }

  /// Reads one BSON document; `nil` at the clean end of the input. Offsets in errors are stream
  /// offsets.
  /// - Throws: ``BSONError/Kind/truncated``, ``BSONError/Kind/invalidLength``,
  ///   ``BSONError/Kind/sizeLimitExceeded`` or a validation error.
  func readDocument(options: ValidationOptions, what: String = "a BSON document") throws(BSONError) -> Document? {
    let at = offset
    guard let length32 = try peekInt32(expecting: "the 4-byte length of \(what)") else { return nil }
    let length = Int(length32)
    guard length >= 5 else {
      throw BSONError(.invalidLength, "expected \(what) of at least 5 bytes, found a length of \(length)", offset: at)
    }
    guard length <= options.maximumSize else {
      throw BSONError(
        .sizeLimitExceeded, "\(what) of \(length) bytes exceeds the limit of \(options.maximumSize) bytes",
        offset: at)
    }
    let got = try fill(atLeast: length)
    guard got >= length else {
      throw BSONError(
        .truncated, "\(what) of \(length) bytes runs past the end of '\(name)', which ends after \(got) of them",
        offset: at)
    }
    let document: Document
    do throws(BSONError) {
      document = try Document(bytes: buffer[start..<start + length], options: options)
    } catch {
      var error = error
      error.offset = at + (error.offset ?? 0)
      throw error
    }
    consume(length)
    return document
  }

  /// Closes the source.
  func close() { source.close() }
}

/// Splits a stream of Extended JSON text into documents (one per line, a JSON array of
/// documents, or documents one after another) without holding more than one document's text,
/// and parses each with ``ExtendedJSONParser``.
///
/// Errors carry the line and column and the byte offset in the whole stream, and the
/// zero-based document index.
final class ExtendedJSONStream {
  private let input: DumpInput
  private let maximumTextSize: Int
  private var form = Form.unknown
  private var line = 1
  private var lineStart = 0
  private(set) var index = 0
  private var text: [UInt8] = []
  private var failure: BSONError?

  private enum Form {
    case unknown, sequence, array, finished
  }

  init(input: DumpInput, options: ValidationOptions) {
    self.input = input
    // Extended JSON is larger than the BSON it encodes; canonical numbers take up to ~5 times more.
    maximumTextSize = max(options.maximumSize, 1 << 20) * 6
  }

  /// The next document, or `nil` at the end.
  func next() throws(BSONError) -> Document? {
    if let failure { throw failure }
    do throws(BSONError) {
      let document = try readNext()
      if document != nil { index += 1 }
      return document
    } catch {
      failure = error
      throw error
    }
  }

  private func readNext() throws(BSONError) -> Document? {
    if form == .unknown { try skipByteOrderMark() }
    try skipWhitespace()
    let byte = try peekByte()
    switch form {
    case .finished:
      return nil
    case .unknown:
      guard let byte else {
        form = .finished
        return nil
      }
      if byte == UInt8(ascii: "[") {
        form = .array
        input.consume(1)
        try skipWhitespace()
        if try peekByte() == UInt8(ascii: "]") {
          input.consume(1)
          try finishArray()
          return nil
        }
        return try document("a document ('{') or ']'")
      }
      form = .sequence
      return try document("a document ('{') or '['")
    case .sequence:
      guard byte != nil else {
        form = .finished
        return nil
      }
      return try document("a document ('{') or the end of the input")
    case .array:
      if byte == UInt8(ascii: ",") {
        input.consume(1)
        try skipWhitespace()
        return try document("a document ('{') after ','")
      }
      if byte == UInt8(ascii: "]") {
        input.consume(1)
        try finishArray()
        return nil
      }
      throw error(
        .invalidJSON,
        "expected ',' or ']' after a document in the array, found \(byte.map(describe) ?? "the end of the input")")
    }
  }

  private func finishArray() throws(BSONError) {
    try skipWhitespace()
    if let byte = try peekByte() {
      throw error(.invalidJSON, "expected the end of the input after the array of documents, found \(describe(byte))")
    }
    form = .finished
  }

  private func peekByte() throws(BSONError) -> UInt8? {
    guard try input.fill(atLeast: 1) > 0 else { return nil }
    return input.withUnread { $0[0] }
  }

  private func skipByteOrderMark() throws(BSONError) {
    guard try input.fill(atLeast: 3) >= 3 else { return }
    if input.withUnread({ $0[0] == 0xEF && $0[1] == 0xBB && $0[2] == 0xBF }) {
      input.consume(3)
      lineStart = 3
    }
  }

  private func skipWhitespace() throws(BSONError) {
    while try input.fill(atLeast: 1) > 0 {
      let base = input.offset
      let (skipped, newlines, lastNewline, stopped) = input.withUnread { raw -> (Int, Int, Int, Bool) in
        var i = 0
        var newlines = 0
        var lastNewline = -1
        while i < raw.count {
          let b = raw[i]
          guard b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D else { break }
          if b == 0x0A {
            newlines += 1
            lastNewline = i
          }
          i += 1
        }
        return (i, newlines, lastNewline, i < raw.count)
      }
      line += newlines
      if lastNewline >= 0 { lineStart = base + lastNewline + 1 }
      input.consume(skipped)
      if stopped { return }
    }
  }

  /// Collects the text of one document, from its `{` to the matching `}`, and parses it.
  private func document(_ expected: String) throws(BSONError) -> Document {
    guard let first = try peekByte(), first == UInt8(ascii: "{") else {
      let found = try peekByte().map(describe) ?? "the end of the input"
      throw error(.invalidJSON, "expected \(expected), found \(found)")
    }
    let startOffset = input.offset
    let startLine = line
    let startColumn = startOffset - lineStart + 1
    text.removeAll(keepingCapacity: text.capacity <= 1 << 20)
    var depth = 0
    var inString = false
    var escaped = false
    var done = false
    while !done {
      guard try input.fill(atLeast: 1) > 0 else {
        throw BSONError(
          .truncated,
          "the input ends inside the document that starts at line \(startLine), column \(startColumn)",
          offset: input.offset, documentIndex: index, line: line, column: input.offset - lineStart + 1)
      }
      let base = input.offset
      var newLineStart = -1
      var newlines = 0
      let taken = input.withUnread { raw -> Int in
        var i = 0
        while i < raw.count {
          let b = raw[i]
          i += 1
          if inString {
            if escaped {
              escaped = false
            } else if b == UInt8(ascii: "\\") {
              escaped = true
            } else if b == UInt8(ascii: "\"") {
              inString = false
            } else if b == 0x0A {
              newlines += 1
              newLineStart = i
            }
          } else if b == UInt8(ascii: "\"") {
            inString = true
          } else if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") {
            depth += 1
          } else if b == UInt8(ascii: "}") || b == UInt8(ascii: "]") {
            depth -= 1
            if depth == 0 {
              done = true
              break
            }
          } else if b == 0x0A {
            newlines += 1
            newLineStart = i
          }
        }
        text.append(contentsOf: raw[0..<i])
        return i
      }
      line += newlines
      if newLineStart >= 0 { lineStart = base + newLineStart }
      input.consume(taken)
      if text.count > maximumTextSize {
        throw BSONError(
          .sizeLimitExceeded,
          "the document that starts at line \(startLine), column \(startColumn) is longer than \(maximumTextSize) bytes of text",
          offset: startOffset, documentIndex: index, line: startLine, column: startColumn)
      }
    }
    var parser = ExtendedJSONParser(bytes: text)
    do throws(BSONError) {
      guard let document = try parser.nextDocument() else {
        throw BSONError(.invalidJSON, "expected a document", offset: 0, line: 1, column: 1)
      }
      return document
    } catch {
      var error = error
      if let errorLine = error.line {
        if errorLine == 1, let column = error.column { error.column = column + startColumn - 1 }
        error.line = errorLine + startLine - 1
      }
      error.offset = startOffset + (error.offset ?? 0)
      error.documentIndex = index
      throw error
    }
  }

  private func error(_ kind: BSONError.Kind, _ message: String) -> BSONError {
    BSONError(
      kind, message, offset: input.offset, documentIndex: form == .finished ? nil : index, line: line,
      column: input.offset - lineStart + 1)
  }

  private func describe(_ byte: UInt8) -> String {
    if byte >= 0x20, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
    return "byte 0x" + String(byte, radix: 16, uppercase: true)
  }
}
