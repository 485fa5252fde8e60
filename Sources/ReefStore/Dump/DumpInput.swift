import ReefBSON

/// A buffered reader over a ``ByteSource`` for the dump formats that need more than
/// ``BSONStreamReader`` and ``ExtendedJSONStreamReader`` offer: the archive's magic number and
/// terminators.
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
