/// Writes a stream of concatenated BSON documents, as in mongodump's `.bson` files.
///
/// Output is buffered (see ``ByteSink``) and gzip-compressed when the path ends in `.gz`.
/// Call ``close()`` when done.
///
/// ```swift
/// let writer = try BSONStreamWriter(path: "people.bson.gz")
/// for person in people { try writer.write(person) }
/// try writer.close()
/// ```
public final class BSONStreamWriter {
  /// Where the bytes go.
  public let sink: ByteSink
  /// The number of documents written so far.
  public private(set) var documentsWritten = 0

  /// Writes to a sink.
  public init(sink: ByteSink) {
    self.sink = sink
  }

  /// Creates (or truncates) a file; `-` writes standard output.
  /// - Parameters:
  ///   - path: a file path, or `-` for standard output.
  ///   - compression: with `.automatic`, a path ending in `.gz` is gzip-compressed.
  /// - Throws: ``BSONError/Kind/io`` when the file cannot be created.
  public convenience init(path: String, compression: StreamCompression = .automatic) throws(BSONError) {
    self.init(sink: try ByteSink(path: path, compression: compression))
  }

  /// The number of bytes written so far, before compression.
  public var bytesWritten: Int { sink.bytesWritten }

  /// Appends a document.
  /// - Throws: ``BSONError/Kind/io`` when writing fails.
  /// - Complexity: O(n) in the size of the document.
  public func write(_ document: Document) throws(BSONError) {
    try document.withUnsafeBytes { (bytes) throws(BSONError) in try sink.write(bytes) }
    documentsWritten += 1
  }

  /// Validates encoded bytes as exactly one document and appends them.
  /// - Throws: a validation error (offsets within `bytes`, document index set to the document's
  ///   place in the output stream) when `bytes` are not exactly one valid document;
  ///   ``BSONError/Kind/io`` when writing fails.
  public func write(bytes: [UInt8], options: ValidationOptions = .default) throws(BSONError) {
    try withBytes(of: bytes) { (raw) throws(BSONError) in
      do throws(BSONError) {
        let length = try BSONValidator.validateDocument(raw, at: 0, options: options)
        guard length == raw.count else {
          throw BSONError(
            .trailingBytes, "expected the document to end at byte \(length), found \(raw.count - length) more bytes",
            offset: length)
        }
      } catch {
        var error = error
        error.documentIndex = documentsWritten
        throw error
      }
      try sink.write(raw)
    }
    documentsWritten += 1
  }

  /// Writes buffered bytes out (see ``ByteSink/flush()``).
  public func flush() throws(BSONError) { try sink.flush() }

  /// Flushes, finishes gzip and closes the file.
  /// - Throws: ``BSONError/Kind/io`` when the last writes fail.
  public func close() throws(BSONError) { try sink.close() }
}
