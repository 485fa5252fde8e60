/// Reads a stream of concatenated BSON documents, as in mongodump's and bsondump's `.bson` files,
/// one document at a time.
///
/// Input is read in 64 KiB chunks; the buffer grows only to hold one document larger than that,
/// so memory stays flat whatever the length of the stream. gzip input (`.gz`, or gzip magic bytes
/// on standard input) is decompressed on the fly.
///
/// ```swift
/// var reader = try BSONStreamReader(path: "dump/db/people.bson")
/// while let document = try reader.next() {
///   print(document["name"] ?? .null)
/// }
/// ```
///
/// Every error carries the zero-based ``BSONError/documentIndex`` of the document being read and
/// the ``BSONError/offset`` of the problem counted from the start of the (decompressed) stream. A
/// stream that ends inside a document is an error of kind ``BSONError/Kind/truncated``. After an
/// error, ``next()`` throws the same error again, unless ``skipDamagedDocument()`` can step over
/// the damaged document (when its length prefix is plausible), or ``onDamagedDocument`` is set
/// and does so as it reads.
///
/// Copies of a reader share the same input.
public struct BSONStreamReader {
  /// How documents are validated.
  public var options: ValidationOptions
  /// The number of documents returned so far.
  public private(set) var documentsRead = 0
  /// The number of stream bytes in the documents returned so far, which is also the stream
  /// offset of the next document.
  public private(set) var bytesRead = 0
  /// The number of damaged documents stepped over by ``skipDamagedDocument()``.
  public private(set) var documentsSkipped = 0
  /// When set, ``next()`` steps over each damaged document that it can (as
  /// ``skipDamagedDocument()`` does: when its length prefix is plausible), calls this with the
  /// document's error and goes on with the next document, as bsondump does. Errors it cannot step
  /// over (a truncated stream, an implausible length, an I/O error) are thrown as usual.
  public var onDamagedDocument: ((BSONError) -> Void)?

  private let buffer: ReadBuffer
  private var failure: BSONError?
  /// The length of the document that failed validation, when its length prefix is plausible:
  /// at least 5, within the size limit, within the stream, and ending in a zero byte.
  private var damagedLength: Int?

  /// Reads from a byte source.
  public init(source: ByteSource, options: ValidationOptions = .default) {
    self.options = options
    buffer = ReadBuffer(source: source)
  }

  /// Opens a file; `-` reads standard input.
  /// - Parameters:
  ///   - path: a file path, or `-` for standard input.
  ///   - compression: with `.automatic`, `.gz` files and input starting with the gzip magic bytes
  ///     are decompressed.
  ///   - options: how documents are validated.
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
  /// The document owns a copy of its bytes and stays valid after later calls.
  /// - Throws: ``BSONError`` with the document index and stream offset: ``BSONError/Kind/truncated``
  ///   when the stream ends inside a document, a validation error for a malformed document,
  ///   ``BSONError/Kind/io`` when reading or decompressing fails.
  /// - Complexity: O(n) in the size of the document.
  public mutating func next() throws(BSONError) -> Document? {
    if let failure { throw failure }
    while true {
      do throws(BSONError) {
        return try readDocument()
      } catch {
        var error = error
        if error.documentIndex == nil { error.documentIndex = documentsRead }
        failure = error
        if let onDamagedDocument, skipDamagedDocument() != nil {
          onDamagedDocument(error)
          continue
        }
        throw error
      }
    }
  }

  /// Steps over the document that made ``next()`` fail, trusting its length prefix, so that
  /// reading can go on with the next one. It can when the document was complete in the stream,
  /// its length was between 5 and the size limit, and its last byte was the terminating zero; not
  /// after a truncated stream, an implausible length or an I/O error.
  ///
  /// A damaged length that still looks plausible makes the next document fail too (or, rarely,
  /// decode as garbage that passes validation): callers that skip should report each skip.
  /// - Returns: the number of bytes skipped, or `nil` when the reader cannot resynchronise (and
  ///   ``next()`` keeps throwing the same error).
  public mutating func skipDamagedDocument() -> Int? {
    guard failure != nil, let length = damagedLength else { return nil }
    buffer.consume(length)
    bytesRead += length
    documentsRead += 1
    documentsSkipped += 1
    failure = nil
    damagedLength = nil
    return length
  }

  private mutating func readDocument() throws(BSONError) -> Document? {
    let start = bytesRead
    let available = try buffer.fill(atLeast: 4)
    if available == 0 { return nil }
    guard available >= 4 else {
      throw BSONError(
        .truncated,
        "expected a 4-byte document length, found \(available) bytes before the end of the stream", offset: start)
    }
    let length = Int(buffer.pointer.int32LE(0))
    guard length >= 5 else {
      throw BSONError(.invalidLength, "expected a document length of at least 5, found \(length)", offset: start)
    }
    guard length <= options.maximumSize else {
      throw BSONError(
        .sizeLimitExceeded, "document length \(length) exceeds the limit of \(options.maximumSize) bytes",
        offset: start)
    }
    let got = try buffer.fill(atLeast: length)
    guard got >= length else {
      throw BSONError(
        .truncated,
        "document length \(length) runs past the end of the stream, which ends after \(got) bytes of the document",
        offset: start)
    }
    let bytes = UnsafeRawBufferPointer(start: buffer.pointer, count: length)
    do throws(BSONError) {
      _ = try BSONValidator.validateDocument(bytes, at: 0, options: options)
    } catch {
      var error = error
      error.offset = start + (error.offset ?? 0)
      if bytes[length - 1] == 0 { damagedLength = length }
      throw error
    }
    // Validated just above, so a store given this document need not validate it again.
    let document = Document(storage: DocumentStorage(copying: bytes), validatedWith: options)
    buffer.consume(length)
    bytesRead += length
    documentsRead += 1
    return document
  }
}

/// The reader's buffer: unread stream bytes at `memory[start..<end]`.
final class ReadBuffer {
  let source: ByteSource
  private var memory: UnsafeMutableRawPointer
  private var capacity: Int
  private var start = 0
  private var end = 0
  private var atEnd = false
  static let chunkSize = 64 * 1024

  init(source: ByteSource) {
    self.source = source
    capacity = Self.chunkSize
    memory = .allocate(byteCount: capacity, alignment: 8)
  }

  deinit { memory.deallocate() }

  /// The first unread byte.
  var pointer: UnsafeRawPointer { UnsafeRawPointer(memory + start) }

  /// Reads until at least `count` bytes are unread or the input ends, and returns how many are.
  func fill(atLeast count: Int) throws(BSONError) -> Int {
    if end - start >= count || atEnd { return end - start }
    if capacity - start < count {
      memory.copyMemory(from: memory + start, byteCount: end - start)
      end -= start
      start = 0
    }
    while end - start < count {
      if end == capacity {
        // Here start == 0: the bytes were moved to the front above unless `count` already fitted.
        // Grow for one large document, doubling as its bytes arrive (so that a length prefix
        // in a short, damaged file does not allocate what it claims), in whole chunks.
        let wanted = (count + Self.chunkSize - 1) / Self.chunkSize * Self.chunkSize
        grow(to: min(wanted, capacity * 2))
      }
      let n = try source.read(into: UnsafeMutableRawBufferPointer(start: memory + end, count: capacity - end))
      if n == 0 {
        atEnd = true
        break
      }
      end += n
    }
    return end - start
  }

  /// Moves the unread bytes to the front of a larger buffer (`start` is 0 when this is called).
  private func grow(to newCapacity: Int) {
    let newMemory = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
    newMemory.copyMemory(from: memory, byteCount: end)
    memory.deallocate()
    memory = newMemory
    capacity = newCapacity
  }

  /// The number of bytes read from the source and not yet consumed.
  var unreadCount: Int { end - start }

  /// Reads more of the input, keeping the unread bytes: at least one more byte unless the input
  /// has ended. Room is made by moving the unread bytes to the front, or, when they fill more
  /// than half the buffer, by doubling it (so that collecting one long document costs O(n)).
  /// ``pointer`` may change.
  /// - Returns: the number of bytes added, 0 at the end of the input.
  func readMore() throws(BSONError) -> Int {
    if atEnd { return 0 }
    if end == capacity {
      // To the front, then (when the unread bytes fill more than half) into a buffer twice as
      // large: `fill(atLeast:)` grows by chunks instead, for a length known in advance.
      let unread = end - start
      // Safe: start..<end lies inside the buffer; the ranges may overlap, which copyMemory allows.
      memory.copyMemory(from: memory + start, byteCount: unread)
      start = 0
      end = unread
      if unread > capacity / 2 { grow(to: capacity * 2) }
    }
    let n = try source.read(into: UnsafeMutableRawBufferPointer(start: memory + end, count: capacity - end))
    if n == 0 { atEnd = true }
    end += n
    return n
  }

  /// Marks `count` bytes as read.
  func consume(_ count: Int) {
    start += count
    if start == end {
      start = 0
      end = 0
      if capacity > Self.chunkSize { shrink(keeping: 0) }
    } else if capacity > Self.shrinkAbove && end - start <= Self.chunkSize / 2 {
      shrink(keeping: end - start)
    }
  }

  /// The capacity past which the buffer shrinks while unread bytes remain: below it, a stream of
  /// documents somewhat larger than a chunk keeps its grown buffer instead of growing and
  /// shrinking for each.
  static let shrinkAbove = 1 << 20

  /// Returns to one chunk after a large document, with the `unread` bytes that follow it, so one
  /// big document does not pin memory.
  private func shrink(keeping unread: Int) {
    let newMemory = UnsafeMutableRawPointer.allocate(byteCount: Self.chunkSize, alignment: 8)
    // Safe: unread <= chunkSize / 2, and start..<end lies inside the old buffer.
    if unread > 0 { newMemory.copyMemory(from: memory + start, byteCount: unread) }
    memory.deallocate()
    memory = newMemory
    capacity = Self.chunkSize
    start = 0
    end = unread
  }
}
